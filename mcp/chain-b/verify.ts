import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import type { GatewayClient } from '../gateway-client.ts'
import { READS, register, ToolInputError } from '../tools.ts'
import { hex64, SERVICE } from './jobs.ts'

/**
 * The verify tools: the free verify lane (chainb-verify, no key needed, nothing charged) checks
 * attestations, claims and documents against the vault's state on chain; verify_document by
 * documentId checks the caller's own document through the metered service.
 */

const VERIFY = 'chainb-verify'

const PREDICATES = ['lessOrEqual', 'greaterOrEqual', 'lessThan', 'greaterThan', 'bytesEquality', 'setMembership', 'documentIntegrity', 'documentDiff'] as const

const nullableText = z.string().nullable().optional()
const verdict = {
  verified: z.boolean().describe('Whether it holds'),
  code: z.string().describe('Why: VALID, or NOT_ANCHORED, NOT_PROVEN, NOT_PROVEN_YET, NOT_RECORDED, INVALID_PROOF, CONTENT_ROOT_MISMATCH, SCHEMA_MISMATCH'),
  message: z.string(),
  txHash: nullableText.describe('The chain-B transaction that recorded it'),
  blockHeight: z.number().nullable().optional(),
  attesterId: nullableText.describe('Who recorded it (an attester id)'),
}

const decimal = z.union([z.string().regex(/^\d+(\.\d+)?$/, 'a decimal number such as 1000 or 12.5'), z.number().nonnegative()])

/** A claim's statement, JSON text in the record, as an object. */
function parsedClaim(claim: unknown) {
  if (typeof claim !== 'string') return claim
  try {
    return JSON.parse(claim)
  } catch {
    return claim
  }
}

/** Registers verify_attestation, verify_predicate and verify_document. */
export function registerVerifyTools(server: McpServer, client: GatewayClient) {
  register(server, client, {
    name: 'verify_attestation',
    title: 'Verify an attestation',
    description: 'Free, no key needed. Give attestationId (what prove_field_* answered): its Groth16 proof is verified and the vault must record the claim (VALID; NOT_PROVEN_YET while its job runs); the answer carries the claim, proof and public signals for an offline check with snarkjs. Or give payloadHash (with contentRoot and schemaId to check those too): whether that document is anchored on the vault, by whom and where. Exactly one of attestationId and payloadHash.',
    input: {
      attestationId: z.guid().optional().describe('An attestation id (UUID) from prove_field_predicate, prove_field_equality or prove_field_membership'),
      payloadHash: hex64('A document\'s payload hash (64 hex: the sha256 anchored, prepare_document_proof\'s payloadHash)').optional(),
      contentRoot: hex64('With payloadHash: the content root (64 hex) the document must be anchored with').optional(),
      schemaId: hex64('With payloadHash: the schema id (64 hex) the document must be anchored with').optional(),
    },
    output: {
      ...verdict,
      claim: z.unknown().optional().describe('By attestationId: what the claim states'),
      proof: nullableText.describe('By attestationId: the Groth16 proof, snarkjs JSON text'),
      publicSignals: nullableText.describe('By attestationId: the public signals, JSON text'),
      contentRoot: nullableText.describe('By payloadHash: the content root anchored'),
      schemaId: nullableText.describe('By payloadHash: the schema id anchored'),
    },
    annotations: READS,
    async run({ attestationId, payloadHash, contentRoot, schemaId }, calls) {
      if (!attestationId === !payloadHash) throw new ToolInputError('give exactly one of attestationId and payloadHash')
      if (attestationId) {
        if (contentRoot || schemaId) throw new ToolInputError('contentRoot and schemaId go with payloadHash, not with attestationId')
        const answer = await calls.call(VERIFY, 'verifyAttestation', { attestationId })
        return { ...answer, claim: parsedClaim(answer.claim) }
      }
      return await calls.call(VERIFY, 'verifyAttestationState', { payloadHash, contentRoot, schemaId })
    },
  })

  register(server, client, {
    name: 'verify_predicate',
    title: 'Verify a claim about a document',
    description: 'Free, no key needed. Whether the vault records a claim of this kind about the document as it is anchored (no attestation id needed): a comparison lessOrEqual|greaterOrEqual|lessThan|greaterThan (fieldKey, threshold, scale), bytesEquality (fieldKey, expectedValue or expectedDigest), setMembership (fieldKey, setRoot), documentIntegrity (payloadHashB, allowedMask) or documentDiff (payloadHashB, k); attesterId keeps one attester\'s claims. VALID, NOT_PROVEN or NOT_ANCHORED.',
    input: {
      payloadHash: hex64('The document\'s payload hash (64 hex)'),
      predicate: z.enum(PREDICATES).describe('The kind of claim'),
      fieldKey: z.string().min(1).max(256).optional().describe('Field claims: the field\'s key (64 hex, prepare_document_proof\'s fields[i].fieldKey) or its path, e.g. total or buyer.country'),
      threshold: decimal.optional().describe('Comparisons: the threshold in the field\'s units, e.g. 1000 or 12.5'),
      scale: z.string().regex(/^\d{1,19}$/).optional().describe('Comparisons: the field\'s scale as prepare_document_proof answered it (integer text; default 1000)'),
      expectedValue: z.string().optional().describe('bytesEquality: the text the field holds'),
      expectedDigest: hex64('bytesEquality: instead of expectedValue, the SHA-256 of that text (64 hex)').optional(),
      setRoot: hex64('setMembership: the set\'s root (64 hex), from the attestation\'s claim').optional(),
      payloadHashB: hex64('documentIntegrity and documentDiff: the other document\'s payload hash (64 hex)').optional(),
      allowedMask: z.number().int().min(0).max(65535).optional().describe('documentIntegrity: the slots that may differ (bit i: slot i)'),
      k: z.number().int().min(1).max(16).optional().describe('documentDiff: the documents differ in at least k slots'),
      attesterId: hex64('Only claims recorded by this attester (64 hex attester id)').optional(),
    },
    output: { ...verdict, proven: z.boolean().optional(), circuitId: nullableText },
    annotations: READS,
    async run({ threshold, ...rest }, calls) {
      return await calls.call(VERIFY, 'verifyPredicateState', { ...rest, threshold: threshold === undefined ? undefined : String(threshold) })
    },
  })

  register(server, client, {
    name: 'verify_document',
    title: 'Verify a document',
    description: 'Give sha256 (free, no key needed): whether a document hash is anchored on the vault, by whom, where and when, with its metadata hash and content root. Or give documentId with providedSha256 (2 units, your own documents only: anchor_document\'s documentId): whether your document is on the vault with exactly that hash (originalSha256 is the one anchored). Exactly one form.',
    input: {
      sha256: hex64('The document\'s SHA-256, or a payload hash (64 hex)').optional(),
      documentId: z.guid().optional().describe('Your document\'s id (UUID), as anchor_document or attest_agent_output answered it'),
      providedSha256: hex64('With documentId: the SHA-256 (64 hex) of the document you hold, checked against the one anchored').optional(),
    },
    output: {
      verified: z.boolean().describe('Whether the document is anchored (with that hash)'),
      code: nullableText.describe('By sha256: VALID or NOT_ANCHORED'),
      payloadHash: nullableText,
      metadataHash: nullableText,
      contentRoot: nullableText,
      txHash: nullableText.describe('By sha256: the anchoring transaction'),
      anchoredTxHash: nullableText.describe('By documentId: the anchoring transaction'),
      originalSha256: nullableText.describe('By documentId: the hash anchored'),
    },
    annotations: READS,
    async run({ sha256, documentId, providedSha256 }, calls) {
      if (sha256 && (documentId || providedSha256)) throw new ToolInputError('give sha256 alone, or documentId with providedSha256')
      if (sha256) return await calls.call(VERIFY, 'verifyDocument', { sha256 })
      if (!documentId || !providedSha256) throw new ToolInputError('give sha256, or documentId together with providedSha256')
      return await calls.call(SERVICE, 'verifyDocument', { documentId, providedSha256 })
    },
  })
}
