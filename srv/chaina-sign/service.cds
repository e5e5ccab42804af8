using { chainasign as db } from '../../db/chain-a-sign';
using { chainatx } from '../../db/chain-a-tx';

/**
 * Chain-A signing: hands an unsigned build to an external signer (`browser-wallet`: a CIP-30
 * witness set or signed transaction; `cardano-cli`: the signed text envelope; `hsm`: the configured
 * PKCS#11 key through SignWithHsm), verifies what comes back against the build, and submits it
 * through the transaction service. Never accepts or stores a private key.
 */
@path: 'chaina-sign'
@requires: 'authenticated-user'
service ChainASignService {

  /** A request's status as it stands: an open request whose time has run out is expired. */
  @readonly entity SigningRequests      as projection on db.SigningRequests {
    *,
    case when status in ('pending', 'signed', 'verified') and expiresAt < $now then 'expired' else status end as status : db.SigningRequests:status
  };
  @readonly entity SigningAuditLog      as projection on db.SigningAuditLog;
  @readonly entity HsmConfigurations    as projection on db.HsmConfigurations;
  @readonly entity VerifiedTransactions as projection on db.VerifiedTransactions;

  @restrict: [
    { grant: 'READ', to: 'authenticated-user' },
    { grant: ['CREATE', 'UPDATE', 'DELETE'], to: 'admin' }
  ]
  entity SigningPolicies as projection on db.SigningPolicies;

  /** A row of the transaction service's TransactionSubmissions. */
  type Submission : projection on chainatx.TransactionSubmissions { *, build.ID as build_ID } excluding { build };

  type MissingSigner {
    keyHash   : String(56);
    /** What needs the signature, e.g. `input <txHash>#0` or `required signer`. */
    neededFor : String(500);
  }

  type VerificationResult {
    signingRequestId  : UUID;
    /** The request's status after the verification: verified or failed. */
    status            : String(12);
    valid             : Boolean;
    txHash            : String(64);
    witnessCount      : Integer;
    signerKeyHashes   : many String(56);
    missingSigners    : many MissingSigner;
    invalidSignatures : many String(56);
    problems          : many String(500);
  }

  type AuditEntry {
    sequence         : Integer;
    occurredAt       : Timestamp;
    kind             : String(20);
    signingRequestId : UUID;
    actor            : String(255);
    details          : LargeString;
    previousHash     : String(64);
    hash             : String(64);
  }

  type AuditLog {
    /** Whether the whole log verifies, whichever entries are answered. */
    valid    : Boolean;
    /** The sequence of the first entry that does not fit. */
    brokenAt : Integer;
    reason   : String(500);
    entries  : many AuditEntry;
  }

  /**
   * A request for a build in status built (the build becomes signing); expires after
   * expiresInSeconds (default 1800), never after the build's validity. For a build that already has
   * an open request, the same signer type gets that request again, another one 409 SIGNING_REQUEST_OPEN.
   */
  action CreateSigningRequest(buildId : UUID, signerType : String(20), signerInfo : String(100), expiresInSeconds : Integer) returns SigningRequests;
  /** The request; one whose time has run out is answered expired. */
  action GetSigningRequest(signingRequestId : UUID) returns SigningRequests;
  /** Verifies a signer's answer without submitting it; the outcome is stored (verified or failed) and answered. */
  action VerifySignature(signingRequestId : UUID, signedTxCbor : LargeString, signerType : String(20), signerInfo : String(100)) returns VerificationResult;
  /** Submits a verified request's transaction; a pending request is verified first from signedTxCbor (400 SIGNATURE_INVALID if it does not verify). */
  action SubmitVerifiedTransaction(signingRequestId : UUID, signedTxCbor : LargeString, signerType : String(20), signerInfo : String(100)) returns Submission;
  /** Signs the build with the configured HSM key (role required); answers the hsm request, verified (or failed when the key does not own the inputs). */
  action SignWithHsm(buildId : UUID, signerInfo : String(100)) returns SigningRequests;
  action CancelSigningRequest(signingRequestId : UUID) returns SigningRequests;
  /** Open requests (pending, signed, verified), of one sender address when given. */
  action ListPendingRequests(address : String) returns many SigningRequests;
  action GetAuditLog(signingRequestId : UUID) returns AuditLog;
}
