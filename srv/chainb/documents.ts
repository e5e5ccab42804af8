import cds from '@sap/cds'
import { randomBytes } from 'node:crypto'
import { Document, Documents } from '#cds-models/chainb'
import { anchorCommitment, DISCLOSURE_ROLES, sha256Hex, type VaultState } from '../chains/chain-b/vault.ts'
import type { VaultCall } from '../chains/chain-b/port.ts'
import { parseField } from '../chains/chain-b/zk/field.ts'
import { ApiError, badInput, notFound } from '../lib/errors.ts'
import { ownedBy, ownerOf } from '../lib/ownership.ts'
import { chainB } from './chain.ts'
import { attesterIdOf } from './identity.ts'
import { hash32, idempotencyKeyOf, metadataText, optionalHash32, optionalSize, optionalText } from './inputs.ts'
import { DocumentKind } from './jobs/kinds.ts'
import { enqueue } from './jobs/queue.ts'

const { SELECT, INSERT } = cds.ql

/**
 * Documents on the attestation vault: plain anchoring (attest), commitment anchoring
 * (prepareAnchorCommitment, commitDocumentAnchor, then anchorDocument with the nonce: revealAnchor),
 * verification by hash and reads under the caller's disclosure level. The vault's state on chain
 * answers verification and disclosure; the rows here hold what the vault does not (content type,
 * size, storage reference, metadata).
 */

/** The metadata's hash as anchored: sha256 of its UTF-8 bytes (of the empty string without metadata). */
export const metadataHashOf = (metadata?: string) => sha256Hex(Buffer.from(metadata ?? '', 'utf8'))

const LIVE = [Document.status.pending, Document.status.anchored]

/** Refuses a payload hash that a live document (anyone's) already holds: the vault records a payload once. */
export async function checkNotAnchored(payloadHash: string) {
  if (await SELECT.one.from(Documents).columns('ID').where({ payloadHash, status: { in: LIVE } }))
    throw new ApiError(409, 'ALREADY_ANCHORED', `a document with payload hash ${payloadHash} is already anchored or being anchored`, { target: 'sha256' })
}

export async function anchorDocument(req: cds.Request) {
  const { data } = req
  const sha256 = hash32(data.sha256, 'sha256')
  const metadata = metadataText(data.metadata)
  const params = {
    sha256, metadata, contentType: optionalText(data.contentType, 'contentType', 255), size: optionalSize(data.size),
    storageRef: optionalText(data.storageRef, 'storageRef', 500), nonce: optionalHash32(data.nonce, 'nonce'), ...contentRootOf(data),
  }
  const idempotencyKey = idempotencyKeyOf(data.idempotencyKey)
  const metadataHash = metadataHashOf(metadata)
  const commitment = params.nonce ? anchorCommitment(sha256, metadataHash, params.nonce) : undefined
  if (commitment) await committedByCaller(commitment)
  if (!idempotencyKey) await checkNotAnchored(sha256)
  const documentId = cds.utils.uuid()
  const root: Record<string, string> = params.contentRoot ? { contentRoot: params.contentRoot, schemaId: params.schemaId! } : {}
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

/** A content root (from prepareDocumentProof) and its schema id: both or neither. */
function contentRootOf(data: { contentRoot?: unknown; schemaId?: unknown }): { contentRoot?: string; schemaId?: string } {
  const contentRoot = optionalHash32(data.contentRoot, 'contentRoot')
  const schemaId = optionalHash32(data.schemaId, 'schemaId')
  if (!contentRoot !== !schemaId) throw badInput('INVALID_CONTENT_ROOT', 'contentRoot and schemaId (both from prepareDocumentProof) go together', contentRoot ? 'schemaId' : 'contentRoot')
  if (contentRoot && parseField(contentRoot) === undefined) throw badInput('INVALID_CONTENT_ROOT', "contentRoot must be below the BN254 field's prime (as prepareDocumentProof answers it)", 'contentRoot')
  return contentRoot ? { contentRoot, schemaId } : {}
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
    if (await SELECT.one.from(Documents).columns('ID').where({ commitment, kind: DocumentKind.commitment, status: { in: LIVE } }))
      throw new ApiError(409, 'ALREADY_COMMITTED', 'this commitment is already recorded or being recorded', { target: 'commitment' })
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
  const onChain = document.payloadHash ? (await vaultState()).documents[document.payloadHash] : undefined
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
 * caller what the level the document's attester granted its attester id on the vault allows
 * (none granted: public_only).
 */
export async function getDocument(req: cds.Request) {
  const payloadHash = hash32(req.data.payloadHash, 'payloadHash')
  const mine = await SELECT.one.from(Documents).where({ payloadHash, kind: { '!=': DocumentKind.commitment }, ...ownedBy(req.user) }).orderBy('createdAt desc')
  const state = await vaultState()
  const onChain = state.documents[payloadHash]
  if (mine) return view(mine, onChain, 'owner', 3)
  if (!onChain) throw notFound('DOCUMENT_NOT_FOUND', `no document with payload hash ${payloadHash} is anchored`, 'payloadHash')
  const level = state.disclosures[payloadHash]?.[await attesterIdOf(req.user)] ?? 0
  const row = await SELECT.one.from(Documents).where({ payloadHash, status: Document.status.anchored })
  return view(row ?? { payloadHash, anchoredAt: await blockTime(onChain.height) }, onChain, DISCLOSURE_ROLES[level] ?? 'public_only', level)
}

type Row = Partial<Document>

function view(row: Row, onChain: VaultState['documents'][string] | undefined, role: string, level: number) {
  const answer: Record<string, unknown> = {
    role, payloadHash: row.payloadHash, attesterId: onChain?.attester ?? row.attesterId ?? null,
    anchoredTxHash: onChain?.txHash ?? row.anchoredTxHash ?? null, anchorHeight: onChain?.height ?? row.anchorHeight ?? null, anchoredAt: row.anchoredAt ?? null,
  }
  if (level >= 1) Object.assign(answer, { contentType: row.contentType ?? null, size: row.size ?? null, metadataHash: onChain?.metadataHash ?? row.metadataHash ?? null })
  if (level >= 2) Object.assign(answer, { storageRef: row.storageRef ?? null, metadata: row.metadata ?? null })
  if (level >= 3) Object.assign(answer, { documentId: row.ID, status: row.status })
  return answer
}
