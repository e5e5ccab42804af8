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
 * The chain a record was made on, as the transaction service knows it from the upstream's genesis.
 * A devnet restarted from the same seed is another chain (another systemStart), though it may
 * produce the same transaction hashes. Each record says in `chainState` whether the upstream serves
 * that chain now (current) or served it before (former: a restarted devnet, another network); a
 * former chain's builds and submissions are gone, its signing requests, verified transactions and
 * audit entries stay.
 */
aspect OnChain {
  network      : String(16);
  networkMagic : Integer;
  systemStart  : Timestamp;
}

/**
 * Owned by the owner of its build. The stored status is brought up to date by the expiry job; reads
 * answer the status as it stands (see the service).
 */
entity SigningRequests : common.Owned, OnChain {
  key ID                 : UUID;
      build              : Association to chainatx.TransactionBuilds not null;
      /**
       * pending → signed (the signer's answer is stored) → verified → submitted; it ends cancelled,
       * expired (its time ran out, or its build was forgotten with a former chain) or failed (the
       * signature did not verify, a policy refused it at submit, or the ledger rejected it).
       */
      status             : String(12) enum { pending; signed; verified; submitted; expired; cancelled; failed } not null default 'pending';
      signerType         : String(20) enum { ![browser-wallet]; ![cardano-cli]; hsm } not null;
      chainState         : String(8) enum { current; former } not null default 'current';
      /** Free text about the signer: a wallet's name, an operator, a key label. */
      signerInfo         : String(100);
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

/**
 * A transaction verified here and accepted by the ledger; owned by the owner of its signing request.
 * One row per owner, chain and transaction: the same hash on another chain (a devnet restarted from
 * the same seed) or of another owner is another row.
 */
@assert.unique: { transaction: [owner, network, networkMagic, systemStart, txHash] }
entity VerifiedTransactions : common.Owned, OnChain {
  key ID              : UUID;
      txHash          : chaina.Hash32 not null;
      signingRequest  : Association to SigningRequests;
      build           : Association to chainatx.TransactionBuilds;
      signerType      : SigningRequests:signerType;
      chainState      : SigningRequests:chainState not null default 'current';
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
