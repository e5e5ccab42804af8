using { chaina } from './chain-a';
using { chainatx } from './chain-a-tx';
using { common } from './common';

/**
 * Chain-A signing: requests that hand an unsigned build to an external signer (a CIP-30 browser
 * wallet, cardano-cli, or the configured HSM), what the signer returned and how it verified, the
 * transactions submitted that way, the policies a request must satisfy, and a tamper-evident audit
 * log of every signing event. No private key is ever stored or accepted.
 */
namespace chainasign;

/**
 * A signing request's lifecycle: pending → signed (the signer's answer is stored) → verified →
 * submitted; it ends cancelled, expired (its time ran out) or failed (the signature did not verify,
 * a policy refused it at submit, or the ledger rejected the transaction).
 */
type SigningStatus : String(12) enum { pending; signed; verified; submitted; expired; cancelled; failed };

/** browser-wallet | cardano-cli | hsm */
type SignerType : String(20);

/** Owned by the owner of its build. */
entity SigningRequests : common.Owned {
  key ID                 : UUID;
      build              : Association to chainatx.TransactionBuilds not null;
      status             : SigningStatus not null default 'pending';
      signerType         : SignerType not null;
      /** Free text about the signer: a wallet's name, an operator, a key label. */
      signerInfo         : String(100);
      network            : String(16);
      /** The build's sender, whose keys are expected to sign. */
      senderAddress      : chaina.Bech32;
      /** The transaction id: the body hash every signature must cover. */
      txHash             : chaina.Hash32;
      unsignedTxCbor     : LargeString;
      /** The signed transaction: the original body with the signer's witnesses merged in. */
      signedTxCbor       : LargeString;
      /** cardano-cli requests: the sign command, the unsigned transaction as a text envelope, and a ready script. */
      cardanoCliCommand  : LargeString;
      cardanoCliEnvelope : LargeString;
      cardanoCliScript   : LargeString;
      /** The last verification as JSON: valid, witnessCount, signerKeyHashes, missingSigners, invalidSignatures, problems. */
      verification       : LargeString;
      failureCode        : String(40);
      failureReason      : String(2000);
      requestedBy        : String(255);
      createdAt          : Timestamp;
      expiresAt          : Timestamp;
      signedAt           : Timestamp;
      verifiedAt         : Timestamp;
      submittedAt        : Timestamp;
      updatedAt          : Timestamp;
      submission         : Association to chainatx.TransactionSubmissions;
      auditEntries       : Association to many SigningAuditLog on auditEntries.signingRequest = $self;
}

/**
 * Append-only and hash-chained: each entry's hash covers its content and the previous entry's
 * hash. Entries are only ever inserted, after advancing SigningAuditHead. An entry belongs to the
 * owner of its signing request (whoever caused it); the owner is not part of the hash.
 */
entity SigningAuditLog : common.Owned {
  key sequence       : Integer;
      occurredAt     : Timestamp not null;
      /** created | signed | verified | submitted | cancelled | expired | failed | policy-refused */
      kind           : String(20) not null;
      signingRequest : Association to SigningRequests not null;
      /** Who caused it: a user, a key's grant, or `system` (expiry). */
      actor          : String(255) not null;
      /** Canonical JSON. */
      details        : LargeString;
      previousHash   : String(64) not null;
      hash           : String(64) not null;
}

/**
 * The one row that says where the audit log ends. An append advances it with a guarded UPDATE
 * (`WHERE sequence = <the one read>`), so concurrent appends, in one process or several sharing the
 * database, each get their own sequence and chain to the entry before.
 */
entity SigningAuditHead {
  key ID       : Integer;
      sequence : Integer not null;
      hash     : String(64) not null;
}

/** A transaction verified here and accepted by the ledger; owned by the owner of its signing request. */
entity VerifiedTransactions : common.Owned {
  key txHash          : chaina.Hash32;
      signingRequest  : Association to SigningRequests;
      build           : Association to chainatx.TransactionBuilds;
      signerType      : SignerType;
      /** JSON array of the key hashes whose valid signatures the transaction carries. */
      signerKeyHashes : LargeString;
      verifiedAt      : Timestamp;
      submittedAt     : Timestamp;
      submission      : Association to chainatx.TransactionSubmissions;
}

/**
 * Rules every signing request must satisfy, checked when it is created and again when it is
 * submitted. `rules` is JSON: allowedSignerTypes, maxLovelacePerTx, allowedRecipients,
 * maxExpirySeconds, requiredSigners. Only active policies apply.
 */
entity SigningPolicies {
  key name        : String(100);
      description : String(500);
      rules       : LargeString not null default '{}';
      active      : Boolean not null default true;
      modifiedAt  : Timestamp @cds.on.insert: $now @cds.on.update: $now;
      modifiedBy  : String(255) @cds.on.insert: $user @cds.on.update: $user;
}

/** The HSM this deployment signs with, as configured (never the PIN), and whether it answers. */
entity HsmConfigurations {
  key label         : String(40);
      modulePath    : String(500);
      /** `index <n>` (among slots with a token) or `id <n>`. */
      slot          : String(40);
      keyLabel      : String(100);
      keyId         : String(80);
      requiredRole  : String(100);
      /** connected | unavailable */
      status        : String(20);
      publicKeyHash : chaina.Hash28;
      /** The key's enterprise address on this deployment's network. */
      address       : chaina.Bech32;
      network       : String(16);
      errorCode     : String(40);
      errorMessage  : String(500);
      checkedAt     : Timestamp;
}
