using { common } from './common';

/**
 * Chain-B vault records: what callers asked the attestation-vault contract to record (documents,
 * commitments, agent-output envelopes, disclosure grants), and the jobs that carry each write to the
 * chain. Owned by the chain-B service (srv/chainb); every row belongs to the caller that made it.
 * The chain's vault state stays authoritative: these rows say what was asked and what the job saw.
 */
namespace chainb;

/** A SHA-256 digest or a 32-byte id, lowercase hex. */
type Digest : String(64);

/**
 * What a job does: one vault call per write. proveAttestation proves its claims first (the
 * service's prover), sponsorAttestation records a proof the caller made.
 * Enums named by types: an element named `kind` cannot carry an inline enum (cds-typer's static `kind`).
 */
type DocumentKind    : String(16) enum { document; agentOutput = 'agent-output'; commitment };
type AttestationKind : String(24) enum { fieldPredicate = 'field-predicate'; fieldEquality = 'field-equality'; fieldMembership = 'field-membership'; documentIntegrity = 'document-integrity'; documentDiff = 'document-diff' };

type JobKind : String(24) enum { anchorDocument; revealAnchor; commitDocumentAnchor; attestAgentOutput; grantDisclosure; revokeDisclosure; proveAttestation; sponsorAttestation };

/**
 * Every write is a job: queued → running (claimed by one runner, under a lease) → submitted (the
 * transaction is in the mempool or a block) → confirmed (finalityDepth deep), or failed with a
 * reason code. Bound to its idempotency key for good, failed or not.
 */
@assert.unique: { idempotency: [owner, idempotencyKey] }
// Claims in turn (srv/chainb/jobs/turns.ts) and the bound on an owner's open jobs read the first;
// an owner's last claim is the newest startedAt of the second.
@db.indexes: ['status, owner, queuedAt', 'owner, startedAt']
entity Jobs : common.Owned {
  key ID                 : UUID;
      kind               : JobKind not null;
      status             : String(12) enum { queued; running; submitted; confirmed; failed } not null default 'queued';
      idempotencyKey     : String(128);
      /** sha256 of the kind and the canonical parameters: a reused key must carry the same. */
      payloadFingerprint : Digest;
      /** The vault call and the record it makes, JSON (see srv/chainb/jobs/commands.ts). */
      request            : LargeString;
      /**
       * A proving job's witness (its claims' circuit inputs), sealed with AES-256-GCM under a key
       * only the accepting process holds, in memory (srv/chainb/jobs/witness.ts); null once the
       * proofs are made or the job ended.
       */
      sealedWitness      : LargeString;
      /** The process holding the witness's key: the only one that proves the job. Null with sealedWitness. */
      witnessHolder      : String(100);
      /** Until when the holder vouches for the key (it renews this while it runs); past it the job fails WITNESS_LOST. */
      witnessHeldUntil   : Timestamp;
      /** What the job made once confirmed, JSON. */
      result             : LargeString;
      errorCode          : String(50);
      errorMessage       : String(500);
      /** How many times a runner claimed the job. */
      attempt            : Integer not null default 0;
      maxAttempts        : Integer not null default 5;
      leaseOwner         : String(100);
      leaseExpiresAt     : Timestamp;
      /** Not claimed again before (a retry's backoff). */
      notBefore          : Timestamp;
      /** The submission nonce, fixed when the job is made: a resubmission answers the first submission. */
      nonce              : Digest not null;
      txHash             : Digest;
      txIdentifier       : String(512);
      blockHeight        : Integer;
      /** Whose attester key signs: the caller's grant, else its user id. */
      attesterSubject    : String(255) not null;
      /** The gateway's id of the request that queued the job (its charge is refunded through it). */
      requestId          : String(64);
      /** The job failed for a reason that was not the caller's; JobFailed was emitted. */
      refunded           : Boolean not null default false;
      queuedAt           : Timestamp;
      startedAt          : Timestamp;
      submittedAt        : Timestamp;
      finishedAt         : Timestamp;
}

entity Documents : common.Owned {
  key ID             : UUID;
      /** The document's SHA-256 (for agent output: of the canonical envelope); null for a bare commitment. */
      payloadHash    : Digest;
      contentType    : String(255);
      size           : Int64;
      storageRef     : String(500);
      metadata       : LargeString;
      /** sha256 of the metadata's UTF-8 bytes (of the empty string without metadata). */
      metadataHash   : Digest;
      kind           : DocumentKind not null default 'document';
      /** The salted commitment: recorded first (kind commitment), then revealed by a document naming it. */
      commitment     : Digest;
      attesterId     : Digest;
      status         : String(10) enum { pending; anchored; failed } not null default 'pending';
      anchoredTxHash : Digest;
      anchorHeight   : Integer;
      anchoredAt     : Timestamp;
      job            : Association to Jobs;
      createdAt      : Timestamp @cds.on.insert: $now;
}

entity AgentOutputAttestations : common.Owned {
  key ID           : UUID;
      agentId      : String(255) not null;
      inputHash    : Digest not null;
      outputHash   : Digest not null;
      modelId      : String(255);
      policyHash   : Digest;
      producedAt   : String(40);
      storageRef   : String(500);
      /** sha256 of envelopeJson. */
      payloadHash  : Digest not null;
      /** The canonical envelope v1 (sorted keys, no spaces). */
      envelopeJson : LargeString;
      document     : Association to Documents;
      createdAt    : Timestamp @cds.on.insert: $now;
}

/**
 * A zero-knowledge claim about anchored documents: pending (queued, proving, submitted) → proven
 * (its proof verified and the vault recorded it, finalityDepth deep) or failed. Never holds a
 * value or a salt: the claim is what the proof states publicly.
 */
entity Attestations : common.Owned {
  key ID            : UUID;
      kind          : AttestationKind not null;
      /** The circuit the proof is for (zk/circuits; its keys under /zk-config/<circuitId>/). */
      circuitId     : String(32) not null;
      payloadHash   : Digest not null;
      /** The second document of an integrity or diff claim. */
      payloadHashB  : Digest;
      /** What the claim states, JSON: fieldKey, predicate, threshold and scale; expectedDigest; setRoot; allowedMask; k. */
      claim         : LargeString;
      /** The Groth16 proof as snarkjs writes it, JSON (once proved). */
      proof         : LargeString;
      /** The proof's public signals, a JSON array of decimal texts, in the circuit's order. */
      publicSignals : LargeString;
      attesterId    : Digest;
      status        : String(10) enum { pending; proven; failed } not null default 'pending';
      /** The claim's place in its job (a batch proves up to 8). */
      batchIndex    : Integer not null default 0;
      job           : Association to Jobs;
      provenTxHash  : Digest;
      provenHeight  : Integer;
      provenAt      : Timestamp;
      createdAt     : Timestamp @cds.on.insert: $now;
}

entity DisclosureGrants : common.Owned {
  key ID            : UUID;
      payloadHash   : Digest not null;
      /** The grantee's attester id (what getAttesterIdentity answers it). */
      grantee       : Digest not null;
      role          : String(20) enum { public_only; legitimate_interest; authority };
      level         : Integer;
      /** pending (granting) → active → revoked; failed when its grant did not reach the chain. */
      status        : String(10) enum { pending; active; revoked; failed } not null default 'pending';
      grantedTxHash : Digest;
      revokedTxHash : Digest;
      job           : Association to Jobs;
      /** The job of the revocation, while and after it runs. */
      revokeJob     : Association to Jobs;
      createdAt     : Timestamp @cds.on.insert: $now;
}
