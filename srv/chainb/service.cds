using { chainb as db } from '../../db/chain-b-vault';
using { common } from '../../db/common';

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
  /** The job as its owner may see it: without the runner's lease, the sealed witness and the gateway's request id. */
  @readonly entity Jobs                    as projection on db.Jobs excluding { leaseOwner, leaseExpiresAt, notBefore, requestId, nonce, payloadFingerprint, sealedWitness, witnessHolder, witnessHeldUntil };

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
    envelopeJson : common.JsonText;
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

  type AttestationAccepted {
    jobId         : UUID;
    status        : String(12);
    attestationId : UUID;
  }

  type AcceptedClaim {
    attestationId : UUID;
    kind          : String(24);
    /** What the claim states, JSON (as Attestations.claim). */
    claim         : LargeString;
  }

  type BatchAccepted {
    jobId             : UUID;
    status            : String(12);
    claims            : many AcceptedClaim;
    /** Claims given more than once, proven once. */
    droppedDuplicates : Integer;
  }

  type PreparedField {
    field       : String(256);
    /** The field's slot (0..15): its place in proofFieldsJson. */
    slot        : Integer;
    fieldKey    : String(64);
    kind        : String(5);
    scale       : String(20);
    /** The value as the document holds it, as text. */
    value       : LargeString;
    /** uint fields: value × scale. */
    scaledValue : String(20);
    /** bytes fields: SHA-256 of the text. */
    valueDigest : String(64);
    salt        : String(64);
    leaf        : String(64);
    siblings    : many String(64);
    /** true: the node at that level is the left child. */
    dirs        : many Boolean;
  }

  type SlotDescriptor {
    fieldKey : String(64);
    /** 0 uint, 1 bytes, 2 padding */
    kind     : Integer;
    scale    : String(20);
  }

  type OpenedSlot {
    ![key] : String(64);
    /** 0 uint, 1 bytes, 2 absent or padding */
    kind  : Integer;
    scale : String(20);
    value : String(78);
  }

  type Opening {
    saltSeed : String(64);
    slots    : many OpenedSlot;
  }

  type DocumentProof {
    payloadHash       : Sha256;
    canonicalDocument : LargeString;
    contentRoot       : String(64);
    schemaId          : Sha256;
    fields            : many PreparedField;
    emptyFields       : many String(256);
    schema            : many SlotDescriptor;
    leaves            : many String(64);
    /** Every slot's content and the salt seed: keep it (integrity and diff claims need it); it reveals the fields. */
    opening           : Opening;
  }

  type MembershipSet {
    setRoot         : String(64);
    memberCount     : Integer;
    /** The members' digests (field elements of their SHA-256), ascending. */
    members         : many String(64);
    /** The value's path in the set (when value or valueDigest is given), JSON arrays. */
    setSiblingsJson : common.JsonText;
    setDirsJson     : LargeString;
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
   * Anchors a document by its SHA-256 under the caller's attester (the vault's attest circuit);
   * another caller's anchor of the same hash never blocks it. With `nonce`, reveals the caller's
   * confirmed commitment of the same sha256, metadata and nonce (revealAnchor). `metadata`: at
   * most 4096 bytes of UTF-8. With `documentJson`, `proofFieldsJson` and `saltSeed` (as given to
   * prepareDocumentProof), the service computes the document's content root itself and anchors it
   * too, vouched by its sponsor: the document's fields can then be proven. The document must hash
   * to sha256; `contentRoot` and `schemaId`, when also given, must be the ones computed. The
   * document is not kept.
   */
  action anchorDocument(sha256 : String not null, contentType : String(255), size : Int64, storageRef : String(500), metadata : LargeString,
                        idempotencyKey : String(128), nonce : String, documentJson : common.JsonText, proofFieldsJson : common.JsonText, saltSeed : String,
                        contentRoot : String, schemaId : String) returns JobAccepted;
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

  /**
   * The salted content root of a document over up to 16 proof fields (paths, or { field, kind?,
   * scale? }), with each field's salt and path: what anchorDocument and the proofs need. Computed
   * here, recorded nowhere. The same document, fields and saltSeed give the same root (README, Content roots).
   */
  action prepareDocumentProof(documentJson : common.JsonText not null, proofFieldsJson : common.JsonText not null, saltSeed : String) returns DocumentProof;
  /** The root of a set of up to 64 allowed texts, and the path of `value` (or of valueDigest) in it. */
  action prepareMembershipSet(allowedValuesJson : common.JsonText not null, value : LargeString, valueDigest : String) returns MembershipSet;

  /**
   * Proves that a uint field of an anchored document compares to a threshold (predicate
   * lessOrEqual, greaterOrEqual, lessThan, greaterThan) without revealing it; value and threshold in
   * the field's units, scale as prepareDocumentProof answered (default 1000). A job: poll getJobStatus.
   */
  action issueFieldPredicateAttestation(payloadHash : String not null, fieldKey : String not null, value : String not null, fieldSalt : String not null,
                                        siblingsJson : common.JsonText not null, dirsJson : common.JsonText not null, predicate : String not null, threshold : String not null,
                                        scale : String, unit : String(40), contentRoot : String, idempotencyKey : String(128)) returns AttestationAccepted;
  /** Up to 8 claims about one or more anchored documents in one job and one transaction (README lists the claim forms). */
  action issueFieldPredicateAttestationBatch(payloadHash : String, claimsJson : common.JsonText not null, idempotencyKey : String(128)) returns BatchAccepted;
  /** Proves that a bytes field holds the text expectedValue (or the text whose SHA-256 is expectedDigest). */
  action issueFieldEqualityAttestation(payloadHash : String not null, fieldKey : String not null, expectedValue : LargeString, expectedDigest : String, fieldSalt : String not null,
                                       siblingsJson : common.JsonText not null, dirsJson : common.JsonText not null, contentRoot : String, idempotencyKey : String(128)) returns AttestationAccepted;
  /** Proves that a bytes field holds one of a set's texts (allowedValuesJson, or setRoot with the set path) without revealing which. */
  action issueFieldMembershipAttestation(payloadHash : String not null, fieldKey : String not null, value : LargeString, valueDigest : String,
                                         allowedValuesJson : common.JsonText, setRoot : String, setSiblingsJson : common.JsonText, setDirsJson : common.JsonText,
                                         fieldSalt : String not null, siblingsJson : common.JsonText not null, dirsJson : common.JsonText not null, contentRoot : String,
                                         idempotencyKey : String(128)) returns AttestationAccepted;
  /** Proves that two anchored documents with the same fields differ only in the slots of allowedMask (bit i: slot i may differ). */
  action issueDocumentIntegrityAttestation(payloadHashA : String not null, payloadHashB : String not null, allowedMask : Int64 not null,
                                           openingAJson : common.JsonText not null, openingBJson : common.JsonText not null, contentRootA : String, contentRootB : String,
                                           idempotencyKey : String(128)) returns AttestationAccepted;
  /** Proves that two anchored documents with the same fields differ in at least k slots. */
  action issueDocumentDiffAttestation(payloadHashA : String not null, payloadHashB : String not null, k : Integer not null,
                                      openingAJson : common.JsonText not null, openingBJson : common.JsonText not null, contentRootA : String, contentRootB : String,
                                      idempotencyKey : String(128)) returns AttestationAccepted;
  /**
   * Records a proof the caller made with the keys from /zk-config and snarkjs: the service verifies
   * it (its public attester must be the caller's attester id), then records it and pays the fee.
   */
  action sponsorAttestation(circuitId : String(32) not null, proofJson : common.JsonText not null, publicSignalsJson : common.JsonText not null,
                            payloadHash : String not null, payloadHashB : String, idempotencyKey : String(128)) returns AttestationAccepted;

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
