using { chainatx as db } from '../../db/chain-a-tx';

/**
 * What the signing service asks of the builds the transaction service owns: a build's signing
 * facts, a claim while one of its signing requests is open, and the claim's release. Internal: served
 * over no protocol, so no HTTP caller (and no gateway route) reaches it. The signing service calls it
 * in the caller's context, so a caller finds and claims only its own builds (any for an operator).
 */
@protocol: 'none'
service ChainABuildSigning {

  /** An output the build spends, and whose key must sign for it. */
  type SpentOutput {
    txHash      : String(64);
    outputIndex : Integer;
    address     : String(200);
  }

  /** The chain the builds are made on now: a restarted devnet or another network is another chain. */
  type ChainIdentity {
    network      : String(16);
    networkMagic : Integer;
    systemStart  : Timestamp;
  }

  /** A build as signing needs it, its status as it stands now (a lapsed claim is built, a passed validity expired). */
  type SigningFacts : ChainIdentity {
    ID             : UUID;
    owner          : String(255);
    status         : db.TransactionBuilds:status;
    txHash         : String(64);
    unsignedTxCbor : LargeString;
    senderAddress  : String(200);
    changeAddress  : String(200);
    expiresAt      : Timestamp;
    signingUntil   : Timestamp;
    claimedBy      : UUID;
    spent          : many SpentOutput;
  }

  /** The caller's build (404 BUILD_NOT_FOUND for another owner's or none). */
  function SigningFactsOf(buildId : UUID) returns SigningFacts;
  /**
   * Claims a built build for a signing request until `until` (never beyond its validity), and keeps
   * its spent outputs locked as long. Answers the build's facts after the attempt: claimed when its
   * status is signing and claimedBy the request.
   */
  action ClaimBuildForSigning(buildId : UUID, signingRequestId : UUID, until : Timestamp) returns SigningFacts;
  /** Hands the build back (signing → built) when the request that claimed it ended without a submission. */
  action ReleaseBuild(buildId : UUID, signingRequestId : UUID) returns Boolean;

  /** The upstream is another chain than the one the builds were made on: they were all removed. */
  event BuildsForgotten {
    network      : String(16);
    networkMagic : Integer;
    systemStart  : Timestamp;
  }
}
