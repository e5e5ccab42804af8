using { chainb as db } from '../../db/chain-b-vault';

/**
 * Chain B (Midnight): documents anchored on the attestation-vault contract, agent-output
 * attestations, disclosure grants, and the jobs that carry every write to the chain. The caller's
 * identity supplies the attester (its grant, else its user) and the service's sponsor pays the fee:
 * callers hold no chain-B token. Writes answer a job at once; poll getJobStatus until confirmed.
 * The chain index (blocks, transactions, contract actions) is added by srv/chainb/chain-reads.cds.
 */
@path: 'chainb'
@requires: 'authenticated-user'
service ChainBService {

  @readonly entity Documents               as projection on db.Documents;
  @readonly entity AgentOutputAttestations as projection on db.AgentOutputAttestations;
  @readonly entity Attestations            as projection on db.Attestations;
  @readonly entity DisclosureGrants        as projection on db.DisclosureGrants;
  /** The job as its owner may see it: without the runner's lease and the gateway's request id. */
  @readonly entity Jobs                    as projection on db.Jobs excluding { leaseOwner, leaseExpiresAt, notBefore, requestId, nonce, payloadFingerprint };

  type Sha256 : String(64);

  type JobAccepted {
    jobId      : UUID;
    status     : String(12);
    documentId : UUID;
  }

  type AgentOutputAccepted {
    jobId        : UUID;
    status       : String(12);
    documentId   : UUID;
    payloadHash  : Sha256;
    envelopeJson : LargeString;
  }

  type DisclosureAccepted {
    jobId             : UUID;
    status            : String(12);
    disclosureGrantId : UUID;
  }

  type AnchorCommitment {
    commitment   : Sha256;
    nonce        : Sha256;
    metadataHash : Sha256;
  }

  type Verification {
    verified       : Boolean;
    anchoredTxHash : Sha256;
    anchoredAt     : Timestamp;
    anchorHeight   : Integer;
    originalSha256 : Sha256;
  }

  type JobStatus {
    jobId        : UUID;
    kind         : String(24);
    status       : String(12);
    /** What the job made, JSON text (once confirmed). */
    result       : LargeString;
    errorCode    : String(50);
    errorMessage : String(500);
    attempt      : Integer;
    maxAttempts  : Integer;
    txHash       : Sha256;
    txIdentifier : String(512);
    blockHeight  : Integer;
    queuedAt     : Timestamp;
    startedAt    : Timestamp;
    submittedAt  : Timestamp;
    finishedAt   : Timestamp;
  }

  type AttesterIdentity {
    /** The caller's attester id: what a grantee gives a granter for grantDisclosure. */
    attesterId : Sha256;
    sponsorId  : Sha256;
  }

  /** A document as the caller may see it: the fields its disclosure level allows, and that level's role. */
  type DocumentView {
    role           : String(20);
    payloadHash    : Sha256;
    attesterId     : Sha256;
    anchoredTxHash : Sha256;
    anchorHeight   : Integer;
    anchoredAt     : Timestamp;
    contentType    : String(255);
    size           : Int64;
    metadataHash   : Sha256;
    storageRef     : String(500);
    metadata       : LargeString;
    documentId     : UUID;
    status         : String(10);
  }

  /**
   * Anchors a document by its SHA-256 (the vault's attest circuit). With `nonce`, reveals the
   * caller's confirmed commitment of the same sha256, metadata and nonce (revealAnchor).
   * `metadata`: at most 4096 bytes of UTF-8.
   */
  action anchorDocument(sha256 : String not null, contentType : String(255), size : Int64, storageRef : String(500), metadata : LargeString,
                        idempotencyKey : String(128), nonce : String) returns JobAccepted;
  /** The salted commitment of a document, computed here and recorded nowhere (no job). */
  action prepareAnchorCommitment(sha256 : String not null, metadata : LargeString, nonce : String) returns AnchorCommitment;
  /** Records a commitment (from prepareAnchorCommitment) on the vault: the document stays hidden until anchorDocument reveals it. */
  action commitDocumentAnchor(commitment : String not null, idempotencyKey : String(128)) returns JobAccepted;
  /** Whether the caller's document is on the vault with this SHA-256; the chain's state answers. */
  function verifyDocument(documentId : UUID not null, providedSha256 : String not null) returns Verification;
  /** Anchors the canonical envelope v1 of an agent's output (see the README for its form and hash). */
  action attestAgentOutput(agentId : String(255) not null, inputHash : String not null, outputHash : String not null, modelId : String(255), policyHash : String,
                           producedAt : String(40), storageRef : String(500), idempotencyKey : String(128)) returns AgentOutputAccepted;
  /** Lets a grantee (an attester id) read one of the caller's anchored documents at a level: 0|1|2 or public_only|legitimate_interest|authority. */
  action grantDisclosure(payloadHash : String not null, grantee : String not null, level : Integer, role : String(20), idempotencyKey : String(128)) returns DisclosureAccepted;
  action revokeDisclosure(payloadHash : String not null, grantee : String not null, idempotencyKey : String(128)) returns DisclosureAccepted;
  /** The caller's job as it stands; another caller's id answers 404 like an unknown one. */
  action getJobStatus(jobId : UUID not null) returns JobStatus;
  function getAttesterIdentity() returns AttesterIdentity;
  /** A document by its payload hash, with the fields the caller's on-chain disclosure level allows (all for its owner). */
  function getDocument(payloadHash : String not null) returns DocumentView;

  /** A job the service accepted failed for a reason that was not the caller's: its charge is refunded. */
  event JobFailed {
    jobId     : UUID;
    owner     : String(255);
    requestId : String(64);
    errorCode : String(50);
  }

  /** The gateway revoked a grant: its queued jobs fail with GRANT_REVOKED. */
  event GrantRevoked {
    grantId : String(255);
  }
}
