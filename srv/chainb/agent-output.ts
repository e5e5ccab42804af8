import cds from '@sap/cds'
import { AgentOutputAttestations, Documents } from '#cds-models/chainb'
import { sha256Hex } from '../chains/chain-b/vault.ts'
import { badInput } from '../lib/errors.ts'
import { checkNotAnchored, metadataHashOf } from './documents.ts'
import { attesterIdOf } from './identity.ts'
import { hash32, idempotencyKeyOf, optionalHash32, optionalText, requiredText } from './inputs.ts'
import { DocumentKind } from './jobs/kinds.ts'
import { canonicalJson } from '../lib/canonical-json.ts'
import { enqueue } from './jobs/queue.ts'

const { INSERT } = cds.ql

/**
 * Agent provenance: the envelope v1 `{v:1, agentId, inputHash, outputHash, producedAt, modelId?,
 * policyHash?}` (hashes lowercase hex, producedAt ISO 8601, now when not given), written as
 * canonical JSON (keys sorted, no spaces); its payload hash is the SHA-256 of that UTF-8 text, so
 * anyone holding the envelope can hash it again and look it up. Anchored with the vault's
 * attestAgentOutput circuit, which keeps the envelope in the vault's state.
 */

const AGENT_OUTPUT_CONTENT_TYPE = 'application/vnd.chainb.agent-output.v1+json'

function agentOutputEnvelope(input: { agentId: string; inputHash: string; outputHash: string; producedAt: string; modelId?: string; policyHash?: string }) {
  const envelopeJson = canonicalJson({ v: 1, ...input })
  return { envelopeJson, payloadHash: sha256Hex(Buffer.from(envelopeJson, 'utf8')) }
}

function producedAtOf(value: unknown): string {
  if (value === undefined || value === null || value === '') return new Date().toISOString()
  if (typeof value !== 'string' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/.test(value) || Number.isNaN(Date.parse(value)))
    throw badInput('INVALID_TIMESTAMP', 'producedAt must be an ISO 8601 date and time, e.g. 2026-01-31T12:00:00Z', 'producedAt')
  return value
}

export async function attestAgentOutput(req: cds.Request) {
  const { data } = req
  const params = {
    agentId: requiredText(data.agentId, 'agentId', 255), inputHash: hash32(data.inputHash, 'inputHash'), outputHash: hash32(data.outputHash, 'outputHash'),
    modelId: optionalText(data.modelId, 'modelId', 255), policyHash: optionalHash32(data.policyHash, 'policyHash'),
    producedAt: data.producedAt ? producedAtOf(data.producedAt) : undefined, storageRef: optionalText(data.storageRef, 'storageRef', 500),
  }
  const idempotencyKey = idempotencyKeyOf(data.idempotencyKey)
  const { storageRef, ...fields } = params
  const { envelopeJson, payloadHash } = agentOutputEnvelope({ ...fields, producedAt: params.producedAt ?? producedAtOf(undefined) })
  if (!idempotencyKey) await checkNotAnchored(payloadHash)
  const documentId = cds.utils.uuid()
  const call = { circuit: 'attestAgentOutput', args: { payloadHash, envelope: Buffer.from(envelopeJson, 'utf8').toString('hex') } }
  const job = await enqueue(req, { kind: 'attestAgentOutput', params, idempotencyKey, command: { call, documentId, payloadHash, envelopeJson } }, async jobId => {
    if (idempotencyKey) await checkNotAnchored(payloadHash)
    await INSERT.into(Documents).entries({
      ID: documentId, payloadHash, contentType: AGENT_OUTPUT_CONTENT_TYPE, size: Buffer.byteLength(envelopeJson), storageRef: storageRef ?? `agent-output://${params.agentId}`,
      metadata: envelopeJson, metadataHash: metadataHashOf(envelopeJson), kind: DocumentKind.agentOutput, attesterId: await attesterIdOf(req.user), job_ID: jobId,
    })
    await INSERT.into(AgentOutputAttestations).entries({ ...fields, producedAt: JSON.parse(envelopeJson).producedAt, storageRef, payloadHash, envelopeJson, document_ID: documentId })
  })
  return { jobId: job.ID, status: job.status, documentId: job.command.documentId, payloadHash: job.command.payloadHash, envelopeJson: job.command.envelopeJson }
}
