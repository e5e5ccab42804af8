using { common } from '../../db/common';

/**
 * The verify lane: anyone checks chain B's records without a key and free of charge — an
 * attestation by id (its proof verified here, its record found on the vault), a claim or a
 * document against the vault's state, or a raw proof with its public signals. Every answer says
 * whether it holds (`verified`), why (`code`), and where on chain (`txHash`, `blockHeight`).
 * Guarded by a per-address rate limit (429 with Retry-After) and bounded inputs.
 */
@path: 'chainb-verify'
@requires: 'any'
service ChainBVerifyService {

  type Hex64 : String(64);

  type AttestationVerdict {
    verified      : Boolean;
    /** VALID, NOT_PROVEN_YET, INVALID_PROOF, NOT_RECORDED, NOT_ANCHORED, CONTENT_ROOT_MISMATCH, ROOT_NOT_VOUCHED, VACUOUS_CLAIM */
    code          : String(40);
    message       : String(500);
    attestationId : UUID;
    kind          : String(24);
    circuitId     : String(32);
    payloadHash   : Hex64;
    payloadHashB  : Hex64;
    attesterId    : Hex64;
    /** What the claim states, JSON. */
    claim         : LargeString;
    /** The Groth16 proof (snarkjs JSON) and its public signals (JSON array): check them offline with the key from /zk-config. */
    proof         : LargeString;
    publicSignals : LargeString;
    txHash        : Hex64;
    blockHeight   : Integer;
    /** The sponsor that computed the claim's content root from the document and anchored it (this service's when VALID). */
    rootVouchedBy : Hex64;
  }

  type StateVerdict {
    verified      : Boolean;
    /** VALID, NOT_ANCHORED, CONTENT_ROOT_MISMATCH, SCHEMA_MISMATCH, ROOT_NOT_VOUCHED */
    code          : String(40);
    message       : String(500);
    attested      : Boolean;
    contentRootOk : Boolean;
    schemaOk      : Boolean;
    /** Whether a sponsor this service trusts (itself, or CHAIN_B_TRUSTED_ROOT_VOUCHERS) computed the root from the document. */
    rootVouched   : Boolean;
    rootVouchedBy : Hex64;
    attesterId    : Hex64;
    contentRoot   : Hex64;
    schemaId      : Hex64;
    txHash        : Hex64;
    blockHeight   : Integer;
  }

  type PredicateVerdict {
    verified    : Boolean;
    /** VALID, NOT_PROVEN, NOT_ANCHORED, CONTENT_ROOT_MISMATCH, ROOT_NOT_VOUCHED, VACUOUS_CLAIM */
    code          : String(40);
    message       : String(500);
    proven        : Boolean;
    circuitId     : String(32);
    /** Who proved it (the attester whose anchor the claim is about). */
    attesterId    : Hex64;
    rootVouchedBy : Hex64;
    txHash        : Hex64;
    blockHeight   : Integer;
  }

  type DocumentVerdict {
    verified     : Boolean;
    /** VALID, NOT_ANCHORED */
    code          : String(40);
    message       : String(500);
    payloadHash   : Hex64;
    /** The anchor's attester: the one asked about, else the earliest. */
    attesterId    : Hex64;
    /** How many attesters have anchored the hash. */
    anchorCount   : Integer;
    metadataHash  : Hex64;
    contentRoot   : Hex64;
    schemaId      : Hex64;
    rootVouchedBy : Hex64;
    txHash       : Hex64;
    blockHeight  : Integer;
    anchoredAt   : Timestamp;
  }

  type ProofVerdict {
    verified    : Boolean;
    /**
     * VALID (the proof verifies and is about an attester's anchored documents whose content roots this
     * service computed), INVALID_PROOF, NOT_ANCHORED, CONTENT_ROOT_MISMATCH, ROOT_NOT_VOUCHED, VACUOUS_CLAIM
     */
    code          : String(40);
    message       : String(500);
    circuitId     : String(32);
    /** Whether the vault records this claim, and where. */
    recorded      : Boolean;
    attesterId    : Hex64;
    rootVouchedBy : Hex64;
    txHash        : Hex64;
    blockHeight   : Integer;
  }

  /** An attestation by its id (from an issue… operation): its proof verified, its record on the vault. */
  function verifyAttestation(attestationId : UUID not null) returns AttestationVerdict;
  /**
   * Whether a document is anchored (by attesterId when given; else the anchor with this content
   * root, else the earliest), and (when given) with this content root and schema id.
   */
  function verifyAttestationState(payloadHash : String not null, contentRoot : String, schemaId : String, attesterId : String) returns StateVerdict;
  /**
   * Whether the vault records a claim of this kind about the document and its anchored root:
   * predicate lessOrEqual|greaterOrEqual|lessThan|greaterThan (fieldKey, threshold, scale),
   * bytesEquality (fieldKey, expectedDigest or expectedValue), setMembership (fieldKey, setRoot),
   * documentIntegrity (payloadHashB, allowedMask), documentDiff (payloadHashB, k); optionally by one attester.
   */
  function verifyPredicateState(payloadHash : String not null, predicate : String not null, fieldKey : String, threshold : String, scale : String,
                                expectedDigest : String, expectedValue : String, setRoot : String, payloadHashB : String, allowedMask : Int64, k : Integer,
                                attesterId : String) returns PredicateVerdict;
  /** Whether a document hash (the payload hash anchored) is on the vault, by whom (attesterId's anchor, else the earliest) and where. */
  function verifyDocument(sha256 : String not null, attesterId : String) returns DocumentVerdict;
  /**
   * A raw Groth16 proof with its public signals, for a circuit of /zk-config: whether it verifies
   * and is about anchored documents whose roots this service computed (payloadHash and
   * payloadHashB name them; found from the signals when left out); and whether the vault records it.
   */
  action verifyProof(circuitId : String(32) not null, proofJson : common.JsonText not null, publicSignalsJson : common.JsonText not null,
                     payloadHash : String, payloadHashB : String) returns ProofVerdict;
}

// The hosted gateway forwards the lane as product chain B, without a key and free of charge.
annotate ChainBVerifyService with @(gateway: { product: 'chain-b', free: true });
