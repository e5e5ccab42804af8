import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import type { GatewayClient } from '../gateway-client.ts'
import { COMPUTES, CREATES, jsonArgument, jsonText, register, ToolInputError } from '../tools.ts'
import { accepted, followedJob, hex64, idempotencyKey, SERVICE, waitSeconds } from './jobs.ts'

/**
 * The anchor tools: a document's content root computed (prepare_document_proof, recorded nowhere),
 * a document's hash anchored on the vault, an agent's output anchored as its envelope's hash.
 */

const MAX_METADATA_BYTES = 4096

type Accepted = { jobId: string; status: string }

const proofField = z.union([
  z.string().min(1).max(256),
  z.object({
    field: z.string().min(1).max(256).describe('The field\'s path'),
    kind: z.enum(['uint', 'bytes']).optional().describe('uint: a number, proven against thresholds; bytes: a text (its SHA-256), proven equal or in a set. Default: uint for a number, else bytes'),
    scale: z.union([z.string().regex(/^\d{1,19}$/), z.number().int().positive()]).optional().describe('uint: the multiplier that makes the value a whole number below 2^64 (default 1000: three decimals)'),
  }),
])

/** Metadata as the service stores it: text as given, anything else as its JSON. */
function metadataText(metadata: unknown): string | undefined {
  const text = jsonText(metadata)
  if (text !== undefined && Buffer.byteLength(text, 'utf8') > MAX_METADATA_BYTES) throw new ToolInputError(`metadata must be at most ${MAX_METADATA_BYTES} bytes as JSON text`)
  return text
}

/** Registers prepare_document_proof, anchor_document and attest_agent_output. */
export function registerAnchorTools(server: McpServer, client: GatewayClient) {
  register(server, client, {
    name: 'prepare_document_proof',
    title: 'Prepare a document for proofs',
    description: 'Computes a JSON document\'s payload hash (SHA-256 of its canonical JSON) and salted content root over up to 16 proof fields, with each field\'s fieldKey, value, scale, salt, siblings and dirs: what the prove_field_* tools take. Records nothing and reveals nothing (2 units). Next: anchor_document with the same document, proofFields and saltSeed (the opening\'s saltSeed when it was random). Keep the answer (salts, opening) as you keep the document: proofs need it, and it reveals the fields. Salts are random unless saltSeed is given (the same document, fields and saltSeed give the same root).',
    input: {
      document: z.union([z.record(z.string(), z.unknown()), z.array(z.unknown()), z.string()]).describe('The document: a JSON object (or array), or its JSON text; at most 64 KiB as JSON'),
      proofFields: z.array(proofField).min(1).max(16).describe('1 to 16 fields to make provable, in slot order: paths (dot-separated, numbers index arrays, e.g. total, buyer.country, lines.0.price) or {field, kind?, scale?}'),
      saltSeed: hex64('32 bytes as 64 hex to derive the salts from (keep it secret); random when left out').optional(),
    },
    output: {
      payloadHash: z.string().describe('SHA-256 of canonicalDocument: anchor_document\'s sha256, prove_*\'s payloadHash'),
      canonicalDocument: z.string(),
      contentRoot: z.string().describe('The root anchor_document computes again from the document and anchors'),
      schemaId: z.string().describe('The schema id anchored with it'),
      fields: z.array(z.looseObject({
        field: z.string(),
        slot: z.number(),
        fieldKey: z.string(),
        kind: z.string(),
        scale: z.string().nullable().optional(),
        value: z.string().nullable().optional(),
        salt: z.string().describe('prove_*\'s fieldSalt'),
        siblings: z.array(z.string()),
        dirs: z.array(z.boolean()),
      })).describe('One per proof field: the witness of the prove_field_* tools'),
      emptyFields: z.array(z.string()).optional().describe('Proof fields the document does not hold'),
      opening: z.unknown().optional().describe('Every slot\'s content and the salt seed: reveals the fields, keep it private'),
    },
    annotations: COMPUTES,
    async run({ document, proofFields, saltSeed }, calls) {
      return await calls.action(SERVICE, 'prepareDocumentProof', {
        documentJson: jsonText(jsonArgument('document', document)),
        proofFieldsJson: JSON.stringify(proofFields),
        saltSeed,
      })
    },
  })

  register(server, client, {
    name: 'anchor_document',
    title: 'Anchor a document',
    description: 'Anchors a document\'s SHA-256 on the chain-B vault under your attester (the service pays the fee; 25 units); another caller\'s anchor of the same hash never blocks yours. With document, proofFields and saltSeed (as given to prepare_document_proof; sha256 = its payloadHash) the service computes the document\'s content root itself and anchors it too, so its fields can then be proven with prove_field_*; the document is not kept. Answers the job at once; with waitSeconds follows it until confirmed (then verify_document finds it, and grant_disclosure can share it). A hash you anchored already is refused (409 ALREADY_ANCHORED); the same idempotencyKey with the same arguments answers the same job.',
    input: {
      sha256: hex64('The document\'s SHA-256 (64 hex); for a prepared document its payloadHash'),
      document: z.union([z.record(z.string(), z.unknown()), z.array(z.unknown()), z.string()]).optional().describe('To anchor a content root: the document as given to prepare_document_proof (its canonical JSON must hash to sha256)'),
      proofFields: z.array(proofField).min(1).max(16).optional().describe('With document: the proof fields as given to prepare_document_proof'),
      saltSeed: hex64('With document: the saltSeed of prepare_document_proof\'s opening').optional(),
      contentRoot: hex64('Optional check: prepare_document_proof\'s contentRoot (the service computes it again)').optional(),
      schemaId: hex64('Optional check: prepare_document_proof\'s schemaId').optional(),
      contentType: z.string().max(255).optional().describe('The document\'s media type, e.g. application/pdf'),
      size: z.number().int().min(0).optional().describe('The document\'s size in bytes'),
      storageRef: z.string().max(500).optional().describe('Where the document is kept (e.g. s3://bucket/key); shown only to its owner and to grantees at level authority'),
      metadata: z.union([z.record(z.string(), z.unknown()), z.string()]).optional().describe('Metadata: a JSON object (stored as its JSON text) or a text, at most 4096 bytes; its SHA-256 is anchored'),
      idempotencyKey,
      waitSeconds,
    },
    output: {
      jobId: z.string().describe('The job that anchors it: get_job_status'),
      status: z.string().describe('queued when accepted'),
      documentId: z.string().describe('Your document\'s id: verify_document with providedSha256'),
      job: followedJob,
    },
    annotations: CREATES,
    async run({ metadata, waitSeconds, document, proofFields, ...rest }, calls) {
      if ((document === undefined) !== (proofFields === undefined) || (document === undefined) !== (rest.saltSeed === undefined))
        throw new ToolInputError('document, proofFields and saltSeed go together (as given to prepare_document_proof)')
      const content = document === undefined ? {} : { documentJson: jsonText(jsonArgument('document', document)), proofFieldsJson: JSON.stringify(proofFields) }
      const answer = await calls.action<Accepted>(SERVICE, 'anchorDocument', { ...rest, ...content, metadata: metadataText(metadata) })
      return await accepted(calls, answer, waitSeconds)
    },
  })

  register(server, client, {
    name: 'attest_agent_output',
    title: 'Attest an agent\'s output',
    description: 'Anchors the provenance of an agent\'s output on the chain-B vault (25 units): the envelope {"v":1,agentId,inputHash,outputHash,producedAt,modelId?,policyHash?} as canonical JSON (sorted keys, no spaces), whose SHA-256 is the payloadHash anyone can recompute and check with verify_document. Answers the job, payloadHash and envelopeJson at once; with waitSeconds follows the job until confirmed.',
    input: {
      agentId: z.string().min(1).max(255).describe('The agent\'s name or id'),
      inputHash: hex64('SHA-256 (64 hex) of the input the agent was given'),
      outputHash: hex64('SHA-256 (64 hex) of the output it produced'),
      modelId: z.string().max(255).optional().describe('The model that produced it, e.g. a model name and version'),
      policyHash: hex64('SHA-256 (64 hex) of the policy or prompt it ran under').optional(),
      producedAt: z.string().max(40).optional().describe('When it was produced, ISO 8601 with a zone (e.g. 2026-01-31T12:00:00Z); now when left out'),
      storageRef: z.string().max(500).optional().describe('Where the output is kept'),
      idempotencyKey,
      waitSeconds,
    },
    output: {
      jobId: z.string().describe('The job that anchors it: get_job_status'),
      status: z.string().describe('queued when accepted'),
      documentId: z.string(),
      payloadHash: z.string().describe('SHA-256 of envelopeJson: verify_document\'s sha256'),
      envelopeJson: z.string().describe('The envelope exactly as hashed'),
      job: followedJob,
    },
    annotations: CREATES,
    async run({ waitSeconds, ...rest }, calls) {
      const answer = await calls.action<Accepted>(SERVICE, 'attestAgentOutput', rest)
      return await accepted(calls, answer, waitSeconds)
    },
  })
}
