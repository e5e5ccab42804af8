import cds from '@sap/cds'
import { randomBytes } from 'node:crypto'
import { Document, Documents } from '#cds-models/chainb'
import { anchorCommitment, anchorOf, anchorsOf, DISCLOSURE_ROLES, sha256Hex, type VaultDocument, type VaultState } from '../chains/chain-b/vault.ts'
import type { VaultCall } from '../chains/chain-b/port.ts'
import { ApiError, badInput, notFound } from '../lib/errors.ts'
import { ownedBy, ownerOf } from '../lib/ownership.ts'
import { chainB } from './chain.ts'
import { attesterIdOf } from './identity.ts'
import { hash32, idempotencyKeyOf, metadataText, optionalHash32, optionalSize, optionalText } from './inputs.ts'
import { prepareDocumentProof } from './document-proofs.ts'
import { DocumentKind } from './jobs/kinds.ts'
import { enqueue } from './jobs/queue.ts'

const { SELECT, INSERT } = cds.ql

/**
 * Documents on the attestation vault: plain anchoring (attest), commitment anchoring
 * (prepareAnchorCommitment, commitDocumentAnchor, then anchorDocument with the nonce: revealAnchor),
 * verification by hash and reads under the caller's disclosure level. The vault's state on chain
 * answers verification and disclosure; the rows here hold what the vault does not (content type,
 * size, storage reference, metadata). Anchors are the caller's own: each attester anchors a
 * payload hash once, and nobody's anchor of a hash blocks another caller's.
 */

/** The metadata's hash as anchored: sha256 of its UTF-8 bytes (of the empty string without metadata). */
export const metadataHashOf = (metadata?: string) => sha256Hex(Buffer.from(metadata ?? '', 'utf8'))

const LIVE = [Document.status.pending, Document.status.anchored]

/** Refuses a payload hash the caller's attester has anchored (or is anchoring) already: the vault records each attester's anchor once. */
export async function checkNotAnchored(payloadHash: string) {
  const attesterId = await attesterIdOf()
  if (await SELECT.one.from(Documents).columns('ID').where({ payloadHash, attesterId, kind: { '!=': DocumentKind.commitment }, status: { in: LIVE } }))
    throw new ApiError(409, 'ALREADY_ANCHORED', `you have anchored (or are anchoring) a document with payload hash ${payloadHash} already`, { target: 'sha256' })
}

export async function anchorDocument(req: cds.Request) {
  const { data } = req
  const sha256 = hash32(data.sha256, 'sha256')
  const metadata = metadataText(data.metadata)
  const root = contentRootOf(data, sha256)
  const params = {
    sha256, metadata, contentType: optionalText(data.contentType, 'contentType', 255), size: optionalSize(data.size),
    storageRef: optionalText(data.storageRef, 'storageRef', 500), nonce: optionalHash32(data.nonce, 'nonce'), ...root,
  }
  const idempotencyKey = idempotencyKeyOf(data.idempotencyKey)
  const metadataHash = metadataHashOf(metadata)
  const commitment = params.nonce ? anchorCommitment(sha256, metadataHash, params.nonce) : undefined
  if (commitment) await committedByCaller(commitment)
  if (!idempotencyKey) await checkNotAnchored(sha256)
  const documentId = cds.utils.uuid()
  const call: VaultCall = commitment
    ? { circuit: 'revealAnchor', args: { payloadHash: sha256, metadataHash, nonce: params.nonce!, ...root } }
    : { circuit: 'attest', args: { payloadHash: sha256, metadataHash, ...root } }
  const job = await enqueue(req, { kind: commitment ? 'revealAnchor' : 'anchorDocument', params, idempotencyKey, command: { call, documentId } }, async jobId => {
    if (idempotencyKey) await checkNotAnchored(sha256)
    await INSERT.into(Documents).entries({
      ID: documentId, payloadHash: sha256, contentType: params.contentType, size: params.size, storageRef: params.storageRef, metadata, metadataHash,
      kind: DocumentKind.document, commitment, attesterId: await attesterIdOf(req.user), job_ID: jobId,
    })
  })
  return { jobId: job.ID, status: job.status, documentId: job.command.documentId }
}

type AnchoredRoot = { contentRoot: string; schemaId: string; fieldCount: number }

/**
 * The content root to anchor with a document, computed here from the document itself
 * (documentJson, proofFieldsJson and saltSeed, as for prepareDocumentProof), never taken on the
 * caller's word: the document must be the one whose SHA-256 is anchored, and a contentRoot or
 * schemaId the caller also gives must be the ones computed. The document passes through this
 * request only; the job keeps the root.
 */
function contentRootOf(data: Record<string, unknown>, sha256: string): AnchoredRoot | Record<string, never> {
  const given = { contentRoot: optionalHash32(data.contentRoot, 'contentRoot'), schemaId: optionalHash32(data.schemaId, 'schemaId') }
  if (data.documentJson === undefined || data.documentJson === null) {
    if (given.contentRoot || given.schemaId || data.proofFieldsJson !== undefined && data.proofFieldsJson !== null)
      throw badInput('DOCUMENT_REQUIRED', 'a content root is anchored only with the document it is computed from: give documentJson, proofFieldsJson and saltSeed (as for prepareDocumentProof)', 'documentJson')
    return {}
  }
  if (data.saltSeed === undefined || data.saltSeed === null || data.saltSeed === '')
    throw badInput('MISSING_PARAMETER', "saltSeed is required with documentJson: the opening's saltSeed from prepareDocumentProof, so that your salts and paths stay valid", 'saltSeed')
  const prepared = prepareDocumentProof(data)
  if (prepared.payloadHash !== sha256)
    throw new ApiError(422, 'DOCUMENT_HASH_MISMATCH', `documentJson is not the document whose SHA-256 is sha256: its canonical form hashes to ${prepared.payloadHash}`, { target: 'documentJson' })
  if (given.contentRoot && given.contentRoot !== prepared.contentRoot)
    throw new ApiError(422, 'CONTENT_ROOT_MISMATCH', `contentRoot is not the root of this document, fields and saltSeed (${prepared.contentRoot})`, { target: 'contentRoot' })
  if (given.schemaId && given.schemaId !== prepared.schemaId)
    throw new ApiError(422, 'SCHEMA_MISMATCH', `schemaId is not the schema of these proof fields (${prepared.schemaId})`, { target: 'schemaId' })
  return { contentRoot: prepared.contentRoot, schemaId: prepared.schemaId, fieldCount: prepared.schema.filter(slot => BigInt('0x' + slot.fieldKey) !== 0n).length }
}

/** A reveal needs the caller's own commitment, confirmed on the vault. */
async function committedByCaller(commitment: string) {
  const committed = await SELECT.one.from(Documents).columns('status').where({ commitment, kind: DocumentKind.commitment, owner: ownerOf() })
  if (!committed) throw notFound('COMMITMENT_NOT_FOUND', 'you have no commitment of this sha256, metadata and nonce (commitDocumentAnchor first)', 'nonce')
  if (committed.status !== Document.status.anchored)
    throw new ApiError(409, 'COMMITMENT_NOT_CONFIRMED', `the commitment is ${committed.status}; reveal it once its job is confirmed`, { target: 'nonce' })
}

export function prepareAnchorCommitment(data: { sha256?: unknown; metadata?: unknown; nonce?: unknown }) {
  const sha256 = hash32(data.sha256, 'sha256')
  const metadataHash = metadataHashOf(metadataText(data.metadata))
  const nonce = optionalHash32(data.nonce, 'nonce') ?? randomBytes(32).toString('hex')
  return { commitment: anchorCommitment(sha256, metadataHash, nonce), nonce, metadataHash }
}

export async function commitDocumentAnchor(req: cds.Request) {
  const commitment = hash32(req.data.commitment, 'commitment')
  const idempotencyKey = idempotencyKeyOf(req.data.idempotencyKey)
  const documentId = cds.utils.uuid()
  const job = await enqueue(req, { kind: 'commitDocumentAnchor', params: { commitment }, idempotencyKey, command: { call: { circuit: 'commitAnchor', args: { commitment } }, documentId } }, async jobId => {
    if (await SELECT.one.from(Documents).columns('ID').where({ commitment, kind: DocumentKind.commitment, attesterId: await attesterIdOf(req.user), status: { in: LIVE } }))
      throw new ApiError(409, 'ALREADY_COMMITTED', 'you have recorded (or are recording) this commitment already', { target: 'commitment' })
    await INSERT.into(Documents).entries({ ID: documentId, kind: DocumentKind.commitment, commitment, attesterId: await attesterIdOf(req.user), job_ID: jobId })
  })
  return { jobId: job.ID, status: job.status, documentId: job.command.documentId }
}

export const vaultState = async (): Promise<VaultState> => (await chainB()).vaultState()

async function blockTime(height: number): Promise<string | null> {
  const block = await (await chainB()).port.block({ height })
  return block ? new Date(block.timestamp * 1000).toISOString() : null
}

/** Whether the caller's document is on the vault with the given hash: the chain's state answers, not the row. */
export async function verifyDocument(data: { documentId?: string; providedSha256?: unknown }) {
  const provided = hash32(data.providedSha256, 'providedSha256')
  const document = await SELECT.one.from(Documents).where({ ID: data.documentId, ...ownedBy() })
  if (!document) throw notFound('DOCUMENT_NOT_FOUND', `no document ${data.documentId}`, 'documentId')
  const onChain = document.payloadHash && document.attesterId ? anchorOf(await vaultState(), document.payloadHash, document.attesterId) : undefined
  return {
    verified: !!onChain && provided === document.payloadHash,
    anchoredTxHash: onChain?.txHash ?? null,
    anchoredAt: onChain ? document.anchoredAt ?? await blockTime(onChain.height) : null,
    anchorHeight: onChain?.height ?? null,
    originalSha256: document.payloadHash ?? null,
  }
}

/**
 * A document by payload hash, as far as the caller may see it: its owner everything; another
 * caller what the highest level any anchor's attester granted its attester id on the vault allows,
 * from that anchor (none granted: public_only, from the earliest anchor).
 */
export async function getDocument(req: cds.Request) {
  const payloadHash = hash32(req.data.payloadHash, 'payloadHash')
  const mine = await SELECT.one.from(Documents).where({ payloadHash, kind: { '!=': DocumentKind.commitment }, ...ownedBy(req.user) }).orderBy('createdAt desc')
  const state = await vaultState()
  if (mine) return view(mine, mine.attesterId ? anchorOf(state, payloadHash, mine.attesterId) : undefined, 'owner', 3)
  const anchors = anchorsOf(state, payloadHash)
  if (!anchors.length) throw notFound('DOCUMENT_NOT_FOUND', `no document with payload hash ${payloadHash} is anchored`, 'payloadHash')
  const reader = await attesterIdOf(req.user)
  const levelOf = (anchor: VaultDocument) => anchor.disclosures?.[reader] ?? 0
  const anchor = anchors.reduce((best, candidate) => (levelOf(candidate) > levelOf(best) ? candidate : best))
  const level = levelOf(anchor)
  const row = await SELECT.one.from(Documents).where({ payloadHash, attesterId: anchor.attester, kind: { '!=': DocumentKind.commitment }, status: Document.status.anchored })
  return view(row ?? { payloadHash, anchoredAt: await blockTime(anchor.height) }, anchor, DISCLOSURE_ROLES[level] ?? 'public_only', level)
}

type Row = Partial<Document>

function view(row: Row, onChain: VaultDocument | undefined, role: string, level: number) {
  const answer: Record<string, unknown> = {
    role, payloadHash: row.payloadHash, attesterId: onChain?.attester ?? row.attesterId ?? null,
    anchoredTxHash: onChain?.txHash ?? row.anchoredTxHash ?? null, anchorHeight: onChain?.height ?? row.anchorHeight ?? null, anchoredAt: row.anchoredAt ?? null,
  }
  if (level >= 1) Object.assign(answer, { contentType: row.contentType ?? null, size: row.size ?? null, metadataHash: onChain?.metadataHash ?? row.metadataHash ?? null })
  if (level >= 2) Object.assign(answer, { storageRef: row.storageRef ?? null, metadata: row.metadata ?? null })
  if (level >= 3) Object.assign(answer, { documentId: row.ID, status: row.status })
  return answer
}
