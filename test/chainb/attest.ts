import { produceBlocks } from '../support/chain-b.ts'
import { rawRequest, type RawResponse } from '../support/gateway.ts'
import { waitFor } from './support.ts'

/**
 * Zero-knowledge attestations over HTTP, as a client of the hosted gateway does them: prepare a
 * document's content root, anchor it, issue claims, follow their jobs (producing the devnet's
 * blocks), and ask the free verify lane. `key` undefined calls without a key.
 */

export const CHAINB = '/odata/v4/chainb'
export const VERIFY = '/odata/v4/chainb-verify'

export interface Answer { status: number; data: any; charged: string | undefined; headers: RawResponse['headers'] }

export function client(url: string, key?: string) {
  const call = async (method: string, target: string, body?: object): Promise<Answer> => {
    const headers: Record<string, string> = { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) }
    const response = await rawRequest(url, method, target, headers, body ? JSON.stringify(body) : '')
    return { status: response.status, data: response.body ? JSON.parse(response.body) : undefined, charged: response.headers['x-access-units-charged'] as string | undefined, headers: response.headers }
  }
  return {
    post: (path: string, body: object) => call('POST', path, body),
    get: (path: string) => call('GET', path),
  }
}

export type Client = ReturnType<typeof client>

/** Follows a job, producing a block whenever it waits on the chain, until it is confirmed or failed (a proof takes long on a busy machine). */
export async function settledJob(caller: Client, jobId: string, timeoutMs = 150_000) {
  const job = await waitFor(`job ${jobId} settled`, async () => {
    const { data } = await caller.post(`${CHAINB}/getJobStatus`, { jobId })
    if (data.status === 'submitted') produceBlocks(1)
    return ['confirmed', 'failed'].includes(data.status) && data
  }, timeoutMs)
  return job
}

export interface PreparedDocument {
  payloadHash: string
  contentRoot: string
  schemaId: string
  fields: { field: string; fieldKey: string; kind: string; scale: string; value: string; valueDigest?: string; salt: string; siblings: string[]; dirs: boolean[] }[]
  opening: object
}

/** prepareDocumentProof, then anchorDocument with the content root, confirmed. */
export async function anchoredDocument(caller: Client, document: object, proofFields: unknown[], saltSeed?: string): Promise<PreparedDocument> {
  const prepared = await caller.post(`${CHAINB}/prepareDocumentProof`, { documentJson: JSON.stringify(document), proofFieldsJson: JSON.stringify(proofFields), ...(saltSeed ? { saltSeed } : {}) })
  if (prepared.status !== 200) throw new Error(`prepareDocumentProof: ${prepared.status} ${JSON.stringify(prepared.data)}`)
  const { payloadHash, contentRoot, schemaId } = prepared.data
  const anchor = await caller.post(`${CHAINB}/anchorDocument`, {
    sha256: payloadHash, contentRoot, schemaId, documentJson: JSON.stringify(document), proofFieldsJson: JSON.stringify(proofFields), saltSeed: prepared.data.opening.saltSeed,
  })
  if (anchor.status !== 200) throw new Error(`anchorDocument: ${anchor.status} ${JSON.stringify(anchor.data)}`)
  const job = await settledJob(caller, anchor.data.jobId)
  if (job.status !== 'confirmed') throw new Error(`the anchor failed: ${job.errorCode} ${job.errorMessage}`)
  return prepared.data
}

/** A prepared field by path. */
export const fieldOf = (document: PreparedDocument, path: string) => {
  const field = document.fields.find(candidate => candidate.field === path)
  if (!field) throw new Error(`no prepared field ${path}`)
  return field
}

/** The witness parameters of a field claim: fieldKey, fieldSalt and its path. */
export const witnessOf = (document: PreparedDocument, path: string) => {
  const field = fieldOf(document, path)
  return { payloadHash: document.payloadHash, fieldKey: field.fieldKey, fieldSalt: field.salt, siblingsJson: JSON.stringify(field.siblings), dirsJson: JSON.stringify(field.dirs) }
}
