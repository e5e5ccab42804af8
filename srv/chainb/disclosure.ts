import cds from '@sap/cds'
import { DisclosureGrant, DisclosureGrants, Document, Documents } from '#cds-models/chainb'
import { levelOf } from '../chains/chain-b/vault.ts'
import { ApiError, notFound } from '../lib/errors.ts'
import { ownerOf } from '../lib/ownership.ts'
import { disclosureRole, hash32, idempotencyKeyOf } from './inputs.ts'
import { DocumentKind } from './jobs/kinds.ts'
import { enqueue } from './jobs/queue.ts'

const { SELECT, INSERT, UPDATE } = cds.ql

/**
 * Disclosure grants, recorded on the vault (attester-only): who may read how much of a document.
 * A caller grants and revokes on documents it anchored itself; another caller's document, or one
 * that does not exist, answers the same 404 DOCUMENT_NOT_FOUND (nothing tells whose a payload is).
 * The document must be anchored (confirmed) first: 409 DOCUMENT_NOT_ANCHORED while its job runs.
 */

async function ownAnchoredDocument(payloadHash: string) {
  const document = await SELECT.one.from(Documents).columns('status').where({ payloadHash, owner: ownerOf(), kind: { '!=': DocumentKind.commitment }, status: { '!=': Document.status.failed } })
  if (!document) throw notFound('DOCUMENT_NOT_FOUND', `you have no document with payload hash ${payloadHash}`, 'payloadHash')
  if (document.status !== Document.status.anchored)
    throw new ApiError(409, 'DOCUMENT_NOT_ANCHORED', 'the document is still being anchored; grant once its job is confirmed', { target: 'payloadHash' })
}

export async function grantDisclosure(req: cds.Request) {
  const { data } = req
  const payloadHash = hash32(data.payloadHash, 'payloadHash')
  const grantee = hash32(data.grantee, 'grantee')
  const role = disclosureRole(data.level, data.role)
  const level = levelOf(role)
  const idempotencyKey = idempotencyKeyOf(data.idempotencyKey)
  await ownAnchoredDocument(payloadHash)
  const disclosureGrantId = cds.utils.uuid()
  const call = { circuit: 'grantDisclosure', args: { payloadHash, grantee, level } }
  const job = await enqueue(req, { kind: 'grantDisclosure', params: { payloadHash, grantee, level }, idempotencyKey, command: { call, disclosureGrantId } }, async jobId => {
    await INSERT.into(DisclosureGrants).entries({ ID: disclosureGrantId, payloadHash, grantee, role, level, job_ID: jobId })
  })
  return { jobId: job.ID, status: job.status, disclosureGrantId: job.command.disclosureGrantId }
}

export async function revokeDisclosure(req: cds.Request) {
  const { data } = req
  const payloadHash = hash32(data.payloadHash, 'payloadHash')
  const grantee = hash32(data.grantee, 'grantee')
  const idempotencyKey = idempotencyKeyOf(data.idempotencyKey)
  const params = { payloadHash, grantee }
  const where = { payloadHash, grantee, owner: ownerOf(), status: DisclosureGrant.status.active }
  const grant = await SELECT.one.from(DisclosureGrants).columns('ID', 'revokeJob_ID').where(where)
  const call = { circuit: 'revokeDisclosure', args: { payloadHash, grantee } }
  // A replay finds the job before the grant matters; a new revocation needs an active grant no other revocation is working on.
  const job = await enqueue(req, { kind: 'revokeDisclosure', params, idempotencyKey, command: { call, disclosureGrantId: grant?.ID } }, async jobId => {
    if (!grant) throw notFound('DISCLOSURE_GRANT_NOT_FOUND', `you have no active disclosure grant of ${payloadHash} to ${grantee}`, 'grantee')
    const claimed = await UPDATE.entity(DisclosureGrants).set({ revokeJob_ID: jobId }).where({ ...where, ID: grant.ID, revokeJob_ID: null })
    if (claimed !== 1) throw new ApiError(409, 'REVOCATION_RUNNING', 'this grant is already being revoked', { target: 'grantee' })
  })
  return { jobId: job.ID, status: job.status, disclosureGrantId: job.command.disclosureGrantId }
}
