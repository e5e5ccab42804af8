import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A stand-in for a remote chain-B plugin (tests only): its grant and job shapes as the plugin's
 * reference documents them (../shared/reference/chain-b-nightgate.md, sections 1.4 and 3.5), over
 * memory. One user with one wallet session; agent grants with `ngat_` tokens (only their SHA-256
 * kept), pinned to that session, issued at most `grantsPerHour` times an hour per address; the
 * token ladder (unknown 401, expired 410, out of scope 403, another session 403); jobs owned by
 * the grant's user, advanced one state per poll (pending, running, submitted, succeeded);
 * idempotency per (session, kind, key), a different body under the same key refused; documents,
 * predicate attestations and disclosure grants read only by their user.
 */

export const PLUGIN_USER = 'operator'
export const PLUGIN_PASSWORD = 'stand-in password'
export const PLUGIN_AUTHORIZATION = `Basic ${Buffer.from(`${PLUGIN_USER}:${PLUGIN_PASSWORD}`).toString('base64')}`

const ALLOW_LISTABLE = new Set([
  'anchorDocument', 'commitDocumentAnchor', 'attestAgentOutput', 'issueFieldPredicateAttestation', 'issueFieldEqualityAttestation',
  'issueFieldMembershipAttestation', 'issueFieldPredicateAttestationBatch', 'issueDocumentIntegrityAttestation', 'issueDocumentDiffAttestation',
  'grantDisclosure', 'revokeDisclosure', 'reindexDisclosures', 'sponsorFinalizedTransaction', 'sponsorUnboundTransaction',
])
const ALWAYS_ALLOWED = new Set(['verifyDocument', 'verifyAttestationState', 'verifyPredicateState', 'verifyPredicateAttestation', 'prepareDocumentProof', 'prepareAnchorCommitment', 'prepareMembershipSet', 'deriveTokenType', 'getJobStatus'])
const ADVANCE = ['pending', 'running', 'submitted', 'succeeded']

interface Grant { grantId: string; userId: string; sessionId: string; allowedActions: string[]; validUntil: string; revoked: boolean }
interface Job { jobId: string; kind: string; requestedBy: string; status: string; result?: string; txHash?: string; queuedAt: string; finishedAt?: string; made: Record<string, string>; failWith?: string }
interface Seen { method: string; url: string; headers: IncomingMessage['headers']; body: Record<string, unknown> | undefined }

class Answered extends Error {
  readonly status: number
  readonly code: string
  readonly headers: Record<string, string>
  constructor(status: number, code: string, message: string, headers: Record<string, string> = {}) {
    super(message)
    this.status = status
    this.code = code
    this.headers = headers
  }
}

export class ChainBPluginStandIn {
  readonly sessionId = randomUUID()
  readonly contractAddress = randomBytes(32).toString('hex')
  readonly seen: Seen[] = []
  grantsPerHour = 10
  /** Answers every call with this status while set (a remote that fails). */
  failWith: number | undefined
  /** Answers every call 200 with this body while set (a remote that answers nonsense). */
  answerRaw: string | undefined
  /** Answers no call while set (a remote that hangs). */
  hang = false
  /** Jobs queued while set fail with this error code once running (the chain refused them, say). */
  failJobsWith: string | undefined
  readonly grants = new Map<string, Grant & { tokenHash: string }>()
  private readonly issuedAt: number[] = []
  private readonly jobs = new Map<string, Job>()
  private readonly idempotent = new Map<string, { fingerprint: string; answer: Record<string, unknown> }>()
  private readonly documents = new Map<string, { ID: string; sha256: string; storageRef?: string; userId: string; contractAddress: string; anchoredTxHash: string | null; anchoredAt: string | null }>()
  private readonly attestations = new Map<string, { ID: string; payloadHash: string; predicate: string; userId: string; provenTxHash: string | null }>()
  private readonly disclosures = new Map<string, { ID: string; payloadHash: string; grantee: string; userId: string; active: boolean }>()
  private readonly server: Server = createServer((req, res) => void this.handle(req, res))
  url = ''

  /** Listens on a port of the system's choice, or on the one it had before a stop (a remote that comes back). */
  async start(port = 0): Promise<this> {
    await new Promise<void>(resolve => this.server.listen(port, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
    return this
  }

  stop(): Promise<void> {
    this.server.closeAllConnections()
    return new Promise(resolve => this.server.close(() => resolve()))
  }

  /** The plugin's operator revokes a grant (as revokeAgentGrant does). */
  revoke(grantId: string) {
    for (const grant of this.grants.values()) if (grant.grantId === grantId) grant.revoked = true
  }

  activeGrants(): Grant[] {
    return [...this.grants.values()].filter(grant => !grant.revoked)
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const raw = await new Promise<string>(resolve => {
      const chunks: Buffer[] = []
      req.on('data', chunk => chunks.push(chunk)).on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    })
    let body: Record<string, unknown> | undefined
    try {
      body = raw ? JSON.parse(raw) : undefined
    } catch {
      return answer(res, 400, { error: { code: 'BAD_REQUEST', message: 'invalid JSON' } })
    }
    this.seen.push({ method: req.method!, url: req.url!, headers: req.headers, body })
    if (this.hang) return
    if (this.failWith) return answer(res, this.failWith, { error: { code: 'FAILED', message: 'the stand-in was told to fail' } })
    if (this.answerRaw !== undefined) return void res.writeHead(200, { 'content-type': 'application/json' }).end(this.answerRaw)
    try {
      const [path, query = ''] = req.url!.split('?')
      answer(res, 200, this.route(req, decodeURIComponent(path), new URLSearchParams(query), body ?? {}))
    } catch (error) {
      if (error instanceof Answered) answer(res, error.status, { error: { code: error.code, message: error.message } }, error.headers)
      else answer(res, 500, { error: { code: 'INTERNAL', message: (error as Error).message } })
    }
  }

  private route(req: IncomingMessage, path: string, query: URLSearchParams, body: Record<string, unknown>): unknown {
    if (path === '/api/v1/indexer/getHealth()') return { status: 'healthy', chainHeight: '12', indexedHeight: '12', lag: 0 }
    const match = /^\/api\/v1\/nightgate\/([A-Za-z]+)(?:\((.*)\))?$/.exec(path)
    if (!match) throw new Answered(404, '404', `No route ${path}`)
    const [, name, inParentheses] = match
    const caller = this.caller(req, name)
    const params = req.method === 'GET' ? functionParams(inParentheses) : body
    if (req.method === 'POST' && caller.grant) {
      if (params.sessionId === undefined) params.sessionId = caller.grant.sessionId
      else if (params.sessionId !== caller.grant.sessionId) throw new Answered(403, 'FORBIDDEN', 'The grant is pinned to another session')
    }
    switch (name) {
      case 'createAgentGrant': return this.createAgentGrant(req, caller, body)
      case 'revokeAgentGrant': return this.revokeAgentGrant(caller, body)
      case 'getJobStatus': return this.jobStatus(caller.userId, String(params.jobId))
      case 'verifyDocument': return this.verifyDocument(caller.userId, params)
      case 'verifyPredicateAttestation': {
        const attestation = this.attestations.get(String(params.predicateAttestationId))
        return { verified: Boolean(attestation?.provenTxHash), predicate: attestation?.predicate ?? null, provenTxHash: attestation?.provenTxHash ?? null }
      }
      case 'prepareAnchorCommitment': {
        const nonce = typeof params.nonce === 'string' ? params.nonce : randomBytes(32).toString('hex')
        return { commitment: sha256Hex(`${params.sha256}|${params.metadata ?? ''}|${nonce}`), nonce, metadataHash: sha256Hex(String(params.metadata ?? '')) }
      }
      case 'Documents': return this.list(this.documents, caller.userId, inParentheses, query)
      case 'PredicateAttestations': return this.list(this.attestations, caller.userId, inParentheses, query)
      case 'DisclosureGrants': return this.list(this.disclosures, caller.userId, inParentheses, query)
      case 'Blocks': return { '@odata.context': '$metadata#Blocks', value: [{ ID: 'b1', height: '12', hash: 'ab'.repeat(32) }] }
      case 'anchorDocument': case 'issueFieldPredicateAttestation': case 'grantDisclosure':
        return this.job(name, caller.userId, params)
      default: throw new Answered(404, '404', `No operation ${name}`)
    }
  }

  /** Who calls: an agent grant's user (the token ladder), else the basic-auth user. */
  private caller(req: IncomingMessage, operation: string): { userId: string; grant?: Grant } {
    const token = req.headers['x-agent-token']
    if (typeof token === 'string') {
      const grant = this.grants.get(sha256Hex(token))
      if (!grant || grant.revoked) throw new Answered(401, 'UNAUTHORIZED', 'Unknown agent token')
      if (Date.parse(grant.validUntil) < Date.now()) throw new Answered(410, 'GRANT_EXPIRED', 'The agent grant expired')
      const read = req.method === 'GET' && !ALWAYS_ALLOWED.has(operation)
      if (!read && !ALWAYS_ALLOWED.has(operation) && !grant.allowedActions.includes(operation)) throw new Answered(403, 'FORBIDDEN', `The agent grant does not allow ${operation}`)
      return { userId: grant.userId, grant }
    }
    if (req.headers.authorization === PLUGIN_AUTHORIZATION) return { userId: PLUGIN_USER }
    throw new Answered(401, 'UNAUTHORIZED', 'Authentication required')
  }

  private createAgentGrant(req: IncomingMessage, caller: { userId: string; grant?: Grant }, body: Record<string, unknown>) {
    if (caller.grant) throw new Answered(403, 'FORBIDDEN', 'An agent grant cannot create grants')
    if (body.sessionId !== this.sessionId) throw new Answered(404, 'SESSION_NOT_FOUND', 'No such session')
    const actions = body.allowedActions
    if (!Array.isArray(actions) || !actions.every(action => ALLOW_LISTABLE.has(action))) throw new Answered(400, 'INVALID_ACTIONS', 'allowedActions must name allow-listable actions')
    const hourAgo = Date.now() - 3_600_000
    while (this.issuedAt.length && this.issuedAt[0] < hourAgo) this.issuedAt.shift()
    if (this.issuedAt.length >= this.grantsPerHour) throw new Answered(429, 'TOO_MANY_REQUESTS', `At most ${this.grantsPerHour} grants an hour`, { 'retry-after': '1200' })
    this.issuedAt.push(Date.now())
    const token = `ngat_${randomBytes(32).toString('hex')}`
    const grant = { grantId: randomUUID(), userId: caller.userId, sessionId: this.sessionId, allowedActions: actions as string[], validUntil: new Date(Date.now() + 30 * 86_400_000).toISOString(), revoked: false }
    this.grants.set(sha256Hex(token), { ...grant, tokenHash: sha256Hex(token) })
    void req
    return { grantId: grant.grantId, token, allowedActions: grant.allowedActions, validUntil: grant.validUntil }
  }

  private revokeAgentGrant(caller: { userId: string; grant?: Grant }, body: Record<string, unknown>) {
    if (caller.grant) throw new Answered(403, 'FORBIDDEN', 'An agent grant cannot revoke grants')
    const grant = [...this.grants.values()].find(g => g.grantId === body.grantId && g.userId === caller.userId)
    if (!grant) throw new Answered(404, 'GRANT_NOT_FOUND', 'No such grant')
    grant.revoked = true
    return { revoked: true }
  }

  private job(kind: string, userId: string, params: Record<string, unknown>) {
    if (params.contractAddress !== this.contractAddress) throw new Answered(404, 'CONTRACT_NOT_FOUND', 'No such contract')
    if (params.compiledArtifactRef !== undefined && params.compiledArtifactRef !== 'attestation-vault') throw new Answered(400, 'UNKNOWN_ARTIFACT', 'Unknown compiled artefact')
    const hex64 = (name: string) => {
      if (typeof params[name] !== 'string' || !/^[0-9a-f]{64}$/.test(params[name] as string)) throw new Answered(400, 'INVALID_PARAMETER', `${name} must be 64 hex characters`)
      return params[name] as string
    }
    const idempotency = typeof params.idempotencyKey === 'string' ? `${params.sessionId}\0${kind}\0${params.idempotencyKey}` : undefined
    const fingerprint = sha256Hex(JSON.stringify({ ...params, idempotencyKey: undefined }))
    if (idempotency) {
      const earlier = this.idempotent.get(idempotency)
      if (earlier && earlier.fingerprint !== fingerprint) throw new Answered(409, 'IDEMPOTENCY_KEY_REUSED', 'The idempotency key was used with another payload')
      if (earlier) return earlier.answer
    }
    const job: Job = { jobId: randomUUID(), kind, requestedBy: userId, status: 'pending', queuedAt: new Date().toISOString(), made: {}, failWith: this.failJobsWith }
    let accepted: Record<string, unknown>
    if (kind === 'anchorDocument') {
      const document = { ID: randomUUID(), sha256: hex64('sha256'), storageRef: params.storageRef as string | undefined, userId, contractAddress: this.contractAddress, anchoredTxHash: null, anchoredAt: null }
      this.documents.set(document.ID, document)
      job.made.documentId = document.ID
      accepted = { jobId: job.jobId, status: job.status, documentId: document.ID }
    } else if (kind === 'issueFieldPredicateAttestation') {
      const attestation = { ID: randomUUID(), payloadHash: hex64('payloadHash'), predicate: String(params.predicate), userId, provenTxHash: null }
      this.attestations.set(attestation.ID, attestation)
      job.made.predicateAttestationId = attestation.ID
      accepted = { jobId: job.jobId, status: job.status, predicateAttestationId: attestation.ID }
    } else {
      const grant = { ID: randomUUID(), payloadHash: hex64('payloadHash'), grantee: String(params.grantee), userId, active: false }
      this.disclosures.set(grant.ID, grant)
      job.made.disclosureGrantId = grant.ID
      accepted = { jobId: job.jobId, status: job.status, disclosureGrantId: grant.ID }
    }
    this.jobs.set(job.jobId, job)
    if (idempotency) this.idempotent.set(idempotency, { fingerprint, answer: accepted })
    return accepted
  }

  private jobStatus(userId: string, jobId: string) {
    const job = this.jobs.get(jobId)
    if (!job || job.requestedBy !== userId) throw new Answered(404, 'JOB_NOT_FOUND', `No job ${jobId}`)
    const next = job.status === 'failed' ? undefined : job.failWith && job.status === 'running' ? 'failed' : ADVANCE[ADVANCE.indexOf(job.status) + 1]
    if (next) job.status = next
    if (job.status === 'failed') job.finishedAt ??= new Date().toISOString()
    if (job.status === 'succeeded' && !job.txHash) this.finish(job)
    return {
      jobId: job.jobId, kind: job.kind, status: job.status, result: job.result ?? null, errorCode: job.status === 'failed' ? job.failWith : null,
      errorMessage: job.status === 'failed' ? `the stand-in failed the job: ${job.failWith}` : null, attempt: 1, maxAttempts: 1,
      submissionId: null, txHash: job.txHash ?? null, chainStatus: job.txHash ? 'success' : null, chainFinalizedAt: job.finishedAt ?? null,
      leaseOwner: 'stand-in', leaseExpiresAt: null, heartbeatAt: null, queuedAt: job.queuedAt, externalExecutionAt: null, submittedAt: null, startedAt: job.queuedAt, finishedAt: job.finishedAt ?? null,
    }
  }

  private finish(job: Job) {
    job.txHash = randomBytes(32).toString('hex')
    job.finishedAt = new Date().toISOString()
    const document = job.made.documentId && this.documents.get(job.made.documentId)
    if (document) Object.assign(document, { anchoredTxHash: job.txHash, anchoredAt: job.finishedAt })
    const attestation = job.made.predicateAttestationId && this.attestations.get(job.made.predicateAttestationId)
    if (attestation) attestation.provenTxHash = job.txHash
    const grant = job.made.disclosureGrantId && this.disclosures.get(job.made.disclosureGrantId)
    if (grant) grant.active = true
    job.result = JSON.stringify({ ...job.made, txHash: job.txHash })
  }

  private verifyDocument(userId: string, params: Record<string, unknown>) {
    if (params.contractAddress !== undefined && params.contractAddress !== this.contractAddress) throw new Answered(404, 'CONTRACT_NOT_FOUND', 'No such contract')
    const document = this.documents.get(String(params.documentId))
    if (!document || document.userId !== userId) throw new Answered(404, 'DOCUMENT_NOT_FOUND', 'No such document')
    return { verified: Boolean(document.anchoredTxHash) && document.sha256 === params.providedSha256, anchoredTxHash: document.anchoredTxHash, anchoredAt: document.anchoredAt, originalSha256: document.sha256 }
  }

  /** An owner-scoped entity set: one row by key, or rows filtered by `ID in (...)` (the only filter the stand-in reads). */
  private list<Row extends { ID: string; userId: string }>(rows: Map<string, Row>, userId: string, key: string | undefined, query: URLSearchParams) {
    const visible = (row: Row | undefined) => row && row.userId === userId
    const shown = ({ userId: _user, ...row }: Row) => row
    if (key !== undefined) {
      const row = rows.get(key.replace(/^ID=/, '').replace(/'/g, ''))
      if (!visible(row)) throw new Answered(404, '404', 'Not found')
      return shown(row!)
    }
    const filter = query.get('$filter')
    let selected = [...rows.values()].filter(visible)
    if (filter !== null) {
      const ids = /^ID in \(([0-9a-f,-]*)\)$/.exec(filter)
      if (!ids) throw new Answered(400, 'UNSUPPORTED_FILTER', `The stand-in reads only ID in (...), got ${filter}`)
      const wanted = new Set(ids[1].split(','))
      selected = selected.filter(row => wanted.has(row.ID))
    }
    return { '@odata.context': '$metadata', value: selected.map(shown) }
  }
}

function functionParams(text: string | undefined): Record<string, unknown> {
  const params: Record<string, unknown> = {}
  for (const part of (text ?? '').split(',').filter(Boolean)) {
    const [name, value = ''] = part.split('=')
    params[name] = value.replace(/^'(.*)'$/, '$1')
  }
  return params
}

const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex')

function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body))
}
