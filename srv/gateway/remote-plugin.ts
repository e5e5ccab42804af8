import cds from '@sap/cds'
import { createHash } from 'node:crypto'
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http'
import { RemotePluginGrants, RemoteRecords } from '#cds-models/gateway'
import { refusal, send, type Answer } from './answers.ts'
import type { PluginSettings, RemoteProductConfig } from './config.ts'
import { allows } from './grant-policy.ts'
import type { Product } from './keys.ts'
import { bodyTooLarge, call, forwardedHeaders, passBack, readAll, readBody, remoteFailure, MAX_FORWARDED_BODY } from './remote-http.ts'
import type { TokenSeal } from './token-seal.ts'
import { isUniqueViolation } from '../lib/plain-sql.ts'
import { requestIdOf } from '../lib/http-safety.ts'

/**
 * Chain B served by the chain-B plugin's own API (`CHAIN_B_REMOTE_KIND=plugin`): a remote that
 * holds the network wallet, the prover and the sponsor, with its routes under /api/v1/nightgate
 * and /api/v1/indexer and its agent grants (`createAgentGrant`, `ngat_` tokens in `x-agent-token`).
 *
 * The plugin pins a grant to one wallet session and keeps what a grant creates as its user's, so
 * every grant the gateway could hold there would own the same records, and it issues few grants
 * (ten an hour per address). So the gateway holds one grant, pinned to the configured session, and
 * keeps apart what each key creates itself: it records the jobs, documents, attestations and
 * disclosure grants the plugin answers a key's write with (RemoteRecords), answers a key's poll or
 * read of them only for its own, and scopes the key's idempotency keys to it. It checks the key's
 * allowed operations itself, as the plugin cannot tell keys apart. Each call names the configured
 * vault (and artefact and fee sponsor); a caller cannot name another.
 *
 * Calls translate one to one where the plugin has the operation (the same names, mostly the same
 * parameters); the answers of jobs are put in this API's words (status `queued` … `confirmed`,
 * `attestationId`). What the plugin does not serve is answered 501 `NOT_SERVED_BY_REMOTE`, refunded.
 */

const SERVICE_PATH = '/api/v1/nightgate'
const INDEXER_PATH = '/api/v1/indexer'
/** The newest of a key's records of one kind that a collection read covers. */
export const LISTED_AT_MOST = 100
/** How long the plugin is left alone after it refused to issue a grant without saying for how long. */
const GRANT_LIMITED_RETRY_S = 60

type RecordKind = 'job' | 'document' | 'attestation' | 'disclosure'

/** The plugin's job states in this API's words. */
const JOB_STATUS: Record<string, string> = {
  pending: 'queued', running: 'running', external_execution: 'running', submitted: 'submitted',
  reconciliation_required: 'submitted', succeeded: 'confirmed', failed: 'failed',
}

/** What an accepted write answers with, and which of it the key owns from then on. */
const OWNED_IN_ANSWER: [field: string, kind: RecordKind][] = [['jobId', 'job'], ['documentId', 'document'], ['predicateAttestationId', 'attestation'], ['attestationId', 'attestation'], ['disclosureGrantId', 'disclosure']]

/** The fields of the plugin's getJobStatus this API's JobStatus has. */
const JOB_FIELDS = ['jobId', 'kind', 'status', 'result', 'errorCode', 'errorMessage', 'attempt', 'maxAttempts', 'txHash', 'queuedAt', 'startedAt', 'submittedAt', 'finishedAt']

/** The chain-B operations that start a job there; the shared grant allows exactly these. */
const WRITES = [
  'anchorDocument', 'commitDocumentAnchor', 'attestAgentOutput', 'grantDisclosure', 'revokeDisclosure',
  'issueFieldPredicateAttestation', 'issueFieldPredicateAttestationBatch', 'issueFieldEqualityAttestation',
  'issueFieldMembershipAttestation', 'issueDocumentIntegrityAttestation', 'issueDocumentDiffAttestation',
]
/** Computed there, recorded nowhere: sent as they came (with the artefact where one is configured). */
const PURE = ['prepareAnchorCommitment', 'prepareDocumentProof', 'prepareMembershipSet']
/** Entity sets read only as far as the key's records go: ours → the plugin's. */
const OWNED_SETS: Record<string, { remote: string; kind: RecordKind }> = {
  Documents: { remote: 'Documents', kind: 'document' },
  Attestations: { remote: 'PredicateAttestations', kind: 'attestation' },
  DisclosureGrants: { remote: 'DisclosureGrants', kind: 'disclosure' },
}
/** The chain's public index: the same sets there, read as they are. */
const PUBLIC_SETS = ['Blocks', 'Transactions', 'TransactionSegments', 'ContractActions', 'UnshieldedUtxos']
/** The free verify lane's functions: ours → the plugin's (parameters renamed where they differ). */
const VERIFY_FUNCTIONS: Record<string, { remote: string; rename?: Record<string, string> }> = {
  verifyAttestationState: { remote: 'verifyAttestationState' },
  verifyPredicateState: { remote: 'verifyPredicateState' },
  verifyAttestation: { remote: 'verifyPredicateAttestation', rename: { attestationId: 'predicateAttestationId' } },
}

/** Refunds the charge of the request that queued a job which failed (srv/gateway/job-refunds.ts). */
export type RefundJob = (requestId: string, outcome: string) => Promise<unknown>

/** Failures of a job that are the caller's own (what it asked for cannot be done): not refunded. */
const CALLERS_OWN_FAILURES = new Set(['ContractTypeError', 'BatchCausalityViolation'])

/** A key's call as the gateway classified it. */
export interface PluginRoute { service: string; operation: string }
interface KeyRecord { ID: string }
interface KeyGrant { allowedOperations: string[] }
interface HeldGrant { remoteGrantId: string; token: string }

class GrantLimited extends Error {
  readonly retryAfterS: number
  constructor(retryAfterS: number) {
    super('the plugin issues no more agent grants for now')
    this.retryAfterS = retryAfterS
  }
}

/** A call answered here, before or instead of the remote. */
class Refused extends Error {
  readonly answer: Answer
  constructor(answer: Answer) {
    super(String((answer.body as { error?: { message?: string } }).error?.message))
    this.answer = answer
  }
}

export class PluginRemote {
  private held: HeldGrant | undefined
  private issuing: Promise<HeldGrant> | undefined
  private readonly product: Product
  private readonly remote: RemoteProductConfig
  private readonly settings: PluginSettings
  private readonly timeoutMs: number
  private readonly tokens: TokenSeal
  private readonly refundJob?: RefundJob

  constructor(product: Product, remote: RemoteProductConfig, timeoutMs: number, tokens: TokenSeal, refundJob?: RefundJob) {
    this.product = product
    this.remote = remote
    this.settings = remote.plugin!
    this.timeoutMs = timeoutMs
    this.tokens = tokens
    this.refundJob = refundJob
  }

  /** A key's metered call: checked against its grant and records here, translated, sent with the shared grant. */
  async forward(route: PluginRoute, key: KeyRecord, grant: KeyGrant, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!allows(grant.allowedOperations, route.service, route.operation)) {
      return send(res, refusal(403, 'GRANT_FORBIDDEN', `This key's grant does not allow ${route.service}:${route.operation}`))
    }
    const body = await readBody(req)
    if (body === undefined) return send(res, bodyTooLarge(this.product))
    try {
      const path = pathOf(req.url ?? '/')
      if (path.base === '/odata/v4/chainb-indexer') return await this.send(req, res, INDEXER_PATH + path.rest + path.query, body, 'pass')
      if (path.base !== '/odata/v4/chainb') throw notServed(route.operation)
      const op = route.operation
      if (WRITES.includes(op)) return await this.send(req, res, `${SERVICE_PATH}/${op}`, this.writeBody(body, key), 'write', key)
      if (PURE.includes(op)) return await this.send(req, res, `${SERVICE_PATH}/${op}`, this.pureBody(body, op), 'pass')
      if (op === 'getJobStatus') {
        const jobId = jsonObject(body).jobId
        if (typeof jobId !== 'string' || !(await this.owns(key.ID, 'job', jobId))) throw new Refused(refusal(404, 'JOB_NOT_FOUND', `no job ${String(jobId).slice(0, 64)}`, { target: 'jobId' }))
        return await this.send(req, res, `${SERVICE_PATH}/getJobStatus`, Buffer.from(JSON.stringify({ jobId })), 'job', key)
      }
      if (op === 'verifyDocument') {
        const fn = parseFunctionCall(path.rest.slice(1), path.query)
        const documentId = literalText(fn?.params.get('documentId') ?? '')
        if (!fn || !documentId) throw new Refused(refusal(400, 'INVALID_PARAMETER', 'verifyDocument takes documentId and providedSha256 in parentheses'))
        if (!(await this.owns(key.ID, 'document', documentId))) throw new Refused(refusal(404, 'DOCUMENT_NOT_FOUND', `no document ${documentId.slice(0, 64)}`, { target: 'documentId' }))
        return await this.send(req, res, `${SERVICE_PATH}/${this.withVault('verifyDocument', fn.params)}`, body, 'pass')
      }
      if (PUBLIC_SETS.includes(op)) return await this.send(req, res, SERVICE_PATH + path.rest + path.query, body, 'pass')
      const owned = OWNED_SETS[op]
      if (owned) return await this.readOwned(req, res, key, owned, path.rest, path.query)
      throw notServed(op)
    } catch (error) {
      if (error instanceof Refused) return send(res, error.answer)
      throw error
    }
  }

  /** A free call (the verify lane): sent with the shared grant, which the plugin's verify functions accept. */
  async forwardFree(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req)
    if (body === undefined) return send(res, bodyTooLarge(this.product))
    const path = pathOf(req.url ?? '/')
    const fn = parseFunctionCall(path.rest.slice(1), path.query)
    const verify = fn && VERIFY_FUNCTIONS[fn.name]
    if (!fn || !verify || path.base !== '/odata/v4/chainb-verify') return send(res, notServed(fn?.name ?? path.rest.slice(1, 60)).answer)
    const params = new Map([...fn.params].map(([name, value]) => [verify.rename?.[name] ?? name, value]))
    try {
      return await this.send(req, res, `${SERVICE_PATH}/${this.withVault(verify.remote, params)}`, body, 'pass')
    } catch (error) {
      if (error instanceof Refused) return send(res, error.answer)
      throw error
    }
  }

  /** The write's body with the vault, artefact and sponsor configured here, and its idempotency key made the key's own. */
  private writeBody(body: Buffer, key: KeyRecord): Buffer {
    const fields = jsonObject(body)
    delete fields.sessionId
    fields.contractAddress = this.settings.contractAddress
    if (this.settings.artifactRef) fields.compiledArtifactRef = this.settings.artifactRef
    else delete fields.compiledArtifactRef
    if (this.settings.sponsorSessionId) fields.sponsorSessionId = this.settings.sponsorSessionId
    else delete fields.sponsorSessionId
    if (fields.idempotencyKey !== undefined && fields.idempotencyKey !== null) {
      if (typeof fields.idempotencyKey !== 'string' || fields.idempotencyKey.length > 128) throw new Refused(refusal(400, 'INVALID_PARAMETER', 'idempotencyKey must be a text of at most 128 characters', { target: 'idempotencyKey' }))
      // Every key writes through the same session there: its keys must not meet another key's.
      fields.idempotencyKey = 'hk_' + createHash('sha256').update(`${key.ID}\0${fields.idempotencyKey}`).digest('hex')
    }
    return Buffer.from(JSON.stringify(fields))
  }

  private pureBody(body: Buffer, operation: string): Buffer {
    if (operation === 'prepareAnchorCommitment' || !this.settings.artifactRef) return body
    return Buffer.from(JSON.stringify({ ...jsonObject(body), compiledArtifactRef: this.settings.artifactRef }))
  }

  /** A function call with the vault and artefact set here added to its parameters. */
  private withVault(name: string, params: Map<string, string>): string {
    const all = new Map(params)
    all.set('contractAddress', `'${this.settings.contractAddress}'`)
    if (this.settings.artifactRef) all.set('compiledArtifactRef', `'${this.settings.artifactRef}'`)
    return `${name}(${[...all].map(([param, value]) => `${param}=${encodeURIComponent(value).replace(/%27/g, "'")}`).join(',')})`
  }

  /** A read of an owned set: one record the key owns, or the key's newest records. */
  private async readOwned(req: IncomingMessage, res: ServerResponse, key: KeyRecord, owned: { remote: string; kind: RecordKind }, rest: string, query: string) {
    const first = /^\/[A-Za-z]+(?:\(([^)]*)\))?(\/.*)?$/.exec(rest)
    if (!first) throw notServed(rest.slice(1, 60))
    const [, keyPredicate, after = ''] = first
    const options = ownedReadOptions(query)
    if (keyPredicate !== undefined) {
      const id = literalText((safeDecode(keyPredicate) ?? '').replace(/^ID=/, ''))
      if (!(await this.owns(key.ID, owned.kind, id))) throw new Refused(refusal(404, 'NOT_FOUND', `No ${owned.kind} ${id.slice(0, 64)}`))
      return this.send(req, res, `${SERVICE_PATH}/${owned.remote}(${keyPredicate})${after}${queryText(options)}`, Buffer.alloc(0), 'pass')
    }
    const ids = (await cds.tx(() => SELECT.from(RemoteRecords).columns('remoteId').where({ product: this.product, kind: owned.kind, apiKey_ID: key.ID })
      .orderBy('createdAt desc').limit(LISTED_AT_MOST))).map(row => row.remoteId!)
    if (!ids.length) return send(res, { status: 200, body: after === '/$count' ? 0 : { value: [] } })
    const theirs = options.get('$filter')
    const ours = `ID in (${ids.join(',')})`
    options.set('$filter', theirs ? `(${ours}) and (${theirs})` : ours)
    return this.send(req, res, `${SERVICE_PATH}/${owned.remote}${after}${queryText(options)}`, Buffer.alloc(0), 'pass')
  }

  /**
   * Sends the call with the shared grant. A grant the plugin no longer knows (401) or that expired
   * (410) is dropped, another issued and the call sent once more. `write`: the answer's records
   * become the key's and its words this API's; `job`: a job status put in this API's words.
   */
  private async send(req: IncomingMessage, res: ServerResponse, remotePath: string, body: Buffer, answerAs: 'pass' | 'write' | 'job', key?: KeyRecord): Promise<void> {
    const started = Date.now()
    for (let attempt = 0; ; attempt++) {
      let held: HeldGrant
      try {
        held = await this.grant()
      } catch (error) {
        if (error instanceof GrantLimited) {
          return send(res, refusal(503, 'REMOTE_GRANT_LIMITED', `The remote ${this.product} product issues no agent grant for now; the call's units are refunded. Try again in ${error.retryAfterS} s`, {}, { 'Retry-After': error.retryAfterS }))
        }
        return send(res, remoteFailure(this.product, error, 'issuing the gateway\'s grant there'))
      }
      let answer: IncomingMessage
      try {
        answer = await call(this.remote.url + remotePath, { method: req.method ?? 'GET', headers: headersFor(req, held.token, body), body, timeoutMs: this.timeoutMs - (Date.now() - started) })
      } catch (error) {
        return send(res, remoteFailure(this.product, error, 'forwarding the call'))
      }
      const status = answer.statusCode ?? 502
      if ((status === 401 || status === 410) && attempt === 0) {
        answer.resume()
        await this.drop(held)
        continue
      }
      if (status >= 500) {
        answer.resume()
        return send(res, refusal(502, 'REMOTE_PRODUCT_ERROR', `The remote ${this.product} product failed (HTTP ${status}); the call's units are refunded`))
      }
      if (answerAs === 'pass' || status >= 300) return passBack(answer, res)
      const received = await readAll(answer)
      let fields: Record<string, unknown>
      try {
        fields = received.length <= MAX_FORWARDED_BODY ? JSON.parse(received.toString('utf8')) : undefined
        if (!fields || typeof fields !== 'object' || Array.isArray(fields)) throw new Error('not an object')
      } catch {
        return send(res, refusal(502, 'REMOTE_PRODUCT_ERROR', `The remote ${this.product} product answered what is not a JSON object; the call's units are refunded`))
      }
      if (answerAs === 'job') return send(res, { status, body: await this.failureRefunded(key!, jobInOurWords(fields)) })
      return send(res, await this.recorded(key!, requestIdOf(req), fields, status))
    }
  }

  /** The accepted write's records made the key's; a replay of the key's own write (the same idempotency key) is marked so, and refunded. */
  private async recorded(key: KeyRecord, requestId: string, fields: Record<string, unknown>, status: number): Promise<Answer> {
    let replay = false
    for (const [field, kind] of OWNED_IN_ANSWER) {
      const id = fields[field]
      if (typeof id !== 'string' || !id) continue
      const { owner, isNew } = await this.recordFor(key.ID, kind, id, kind === 'job' ? requestId : undefined)
      if (owner !== key.ID) {
        cds.log('gateway').error(`the remote ${this.product} product answered key ${key.ID} with ${kind} ${id}, which key ${owner} created`)
        return refusal(502, 'REMOTE_PRODUCT_ERROR', `The remote ${this.product} product answered with another caller's record; the call's units are refunded`)
      }
      if (kind === 'job' && !isNew) replay = true
    }
    const body = { ...fields }
    if (typeof body.status === 'string') body.status = JOB_STATUS[body.status] ?? body.status
    if (body.predicateAttestationId !== undefined && body.attestationId === undefined) {
      body.attestationId = body.predicateAttestationId
      delete body.predicateAttestationId
    }
    return { status, body, headers: replay ? { 'x-idempotent-replay': 'true' } : {} }
  }

  /** Records the key as the record's owner, or answers its owner when it has one already. */
  private async recordFor(keyId: string, kind: RecordKind, remoteId: string, requestId?: string): Promise<{ owner: string; isNew: boolean }> {
    try {
      await cds.tx(() => INSERT.into(RemoteRecords).entries({ product: this.product, kind, remoteId, apiKey_ID: keyId, requestId, createdAt: new Date().toISOString() }))
      return { owner: keyId, isNew: true }
    } catch (error) {
      if (!isUniqueViolation(error)) throw error
      const row = await cds.tx(() => SELECT.one.from(RemoteRecords).columns('apiKey_ID').where({ product: this.product, kind, remoteId }))
      return { owner: row!.apiKey_ID!, isNew: false }
    }
  }

  /**
   * A job the plugin failed for a reason that was not the caller's: the charge of the write that
   * queued it is refunded when the key first sees it failed (once, however often it is polled).
   */
  private async failureRefunded(key: KeyRecord, job: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (job.status !== 'failed' || !this.refundJob || CALLERS_OWN_FAILURES.has(String(job.errorCode))) return job
    const row = await cds.tx(() => SELECT.one.from(RemoteRecords).columns('requestId').where({ product: this.product, kind: 'job', remoteId: String(job.jobId), apiKey_ID: key.ID }))
    if (row?.requestId) await this.refundJob(row.requestId, `job ${String(job.errorCode ?? 'failed')}`)
    return job
  }

  private async owns(keyId: string, kind: RecordKind, remoteId: string): Promise<boolean> {
    if (remoteId.length > 64) return false
    const row = await cds.tx(() => SELECT.one.from(RemoteRecords).columns('remoteId').where({ product: this.product, kind, remoteId, apiKey_ID: keyId }))
    return Boolean(row)
  }

  /** The shared grant: held, stored (sealed) or issued now (concurrent first calls wait for one). */
  private async grant(): Promise<HeldGrant> {
    if (this.held) return this.held
    this.issuing ??= this.storedOrIssued().finally(() => {
      this.issuing = undefined
    })
    this.held = await this.issuing
    return this.held
  }

  private async storedOrIssued(): Promise<HeldGrant> {
    const stored = await this.stored()
    if (stored) return stored
    await this.dropUnreadable()
    const issued = await this.issue()
    try {
      await cds.tx(() => INSERT.into(RemotePluginGrants).entries({
        product: this.product, remoteGrantId: issued.remoteGrantId, sealedToken: this.tokens.seal(this.sealedFor, issued.token), createdAt: new Date().toISOString(),
      }))
      return issued
    } catch (error) {
      if (!isUniqueViolation(error)) throw error
      // Another instance stored one first: that one is used, this one given back.
      await this.revoke(issued.remoteGrantId).catch(() => undefined)
      const winner = await this.stored()
      if (!winner) throw error
      return winner
    }
  }

  private get sealedFor() {
    return `plugin|${this.product}|${this.settings.sessionId}`
  }

  private async stored(): Promise<HeldGrant | undefined> {
    const row = await cds.tx(() => SELECT.one.from(RemotePluginGrants).columns('remoteGrantId', 'sealedToken').where({ product: this.product }))
    const token = row && this.tokens.open(this.sealedFor, row.sealedToken!)
    return token ? { remoteGrantId: row.remoteGrantId!, token } : undefined
  }

  /** A stored grant sealed under another secret or for another session is of no use: it goes (and is revoked there, if it still stands). */
  private async dropUnreadable() {
    const row = await cds.tx(() => SELECT.one.from(RemotePluginGrants).columns('remoteGrantId').where({ product: this.product }))
    if (row) await this.drop({ remoteGrantId: row.remoteGrantId!, token: '' })
  }

  /** The grant is no longer good there: no longer held nor stored (unless another replaced it already), revoked there if it still stands. */
  private async drop(grant: HeldGrant) {
    if (this.held?.remoteGrantId === grant.remoteGrantId) this.held = undefined
    await cds.tx(() => DELETE.from(RemotePluginGrants).where({ product: this.product, remoteGrantId: grant.remoteGrantId }))
    await this.revoke(grant.remoteGrantId).catch(error => cds.log('gateway').warn(`could not revoke the grant ${grant.remoteGrantId} at the remote ${this.product} product:`, (error as Error).message))
  }

  private async issue(): Promise<HeldGrant> {
    const { status, answer, retryAfter } = await this.administer('createAgentGrant', {
      sessionId: this.settings.sessionId, allowedActions: WRITES, agentLabel: 'hosted gateway',
      ...(this.settings.sponsorSessionId ? { sponsorSessionId: this.settings.sponsorSessionId } : {}),
    })
    if (status === 429) throw new GrantLimited(retryAfter ?? GRANT_LIMITED_RETRY_S)
    if (status >= 300) throw new Error(`createAgentGrant answered HTTP ${status}: ${JSON.stringify(answer).slice(0, 300)}`)
    const { grantId, token } = (answer ?? {}) as { grantId?: unknown; token?: unknown }
    if (typeof grantId !== 'string' || typeof token !== 'string' || !token.startsWith('ngat_')) throw new Error('createAgentGrant answered no grant')
    return { remoteGrantId: grantId, token }
  }

  private async revoke(remoteGrantId: string) {
    const { status } = await this.administer('revokeAgentGrant', { grantId: remoteGrantId })
    if (status >= 300 && status !== 404) throw new Error(`revokeAgentGrant answered HTTP ${status}`)
  }

  /** A call to the plugin's grant administration, as the user who owns the session. */
  private async administer(operation: string, body: object): Promise<{ status: number; answer: unknown; retryAfter?: number }> {
    const text = JSON.stringify(body)
    const answer = await call(`${this.remote.url}${SERVICE_PATH}/${operation}`, {
      method: 'POST', timeoutMs: this.timeoutMs, body: Buffer.from(text),
      headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(text), ...(this.remote.authorization ? { authorization: this.remote.authorization } : {}) },
    })
    const received = await readAll(answer)
    let parsed: unknown
    try {
      parsed = received.length ? JSON.parse(received.toString('utf8')) : undefined
    } catch {
      parsed = received.toString('utf8').slice(0, 300)
    }
    const retryAfter = Number(answer.headers['retry-after'])
    return { status: answer.statusCode ?? 0, answer: parsed, retryAfter: Number.isFinite(retryAfter) && retryAfter > 0 ? Math.ceil(retryAfter) : undefined }
  }
}

const notServed = (operation: string) => new Refused(refusal(501, 'NOT_SERVED_BY_REMOTE', `${operation} is not served by the remote chain-B plugin this gateway forwards to; the call's units are refunded`))

function headersFor(req: IncomingMessage, token: string, body: Buffer): OutgoingHttpHeaders {
  const headers = forwardedHeaders(req, token, body)
  // The idempotency key travels in the body, made the key's own; the plugin reads no header for it.
  delete headers['idempotency-key']
  if (body.length) headers['content-type'] = 'application/json'
  return headers
}

/** The body as a JSON object, or a 400. */
function jsonObject(body: Buffer): Record<string, unknown> {
  let value: unknown
  try {
    value = body.length ? JSON.parse(body.toString('utf8')) : {}
  } catch {
    throw new Refused(refusal(400, 'INVALID_BODY', 'The body must be a JSON object'))
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Refused(refusal(400, 'INVALID_BODY', 'The body must be a JSON object'))
  return value as Record<string, unknown>
}

function jobInOurWords(fields: Record<string, unknown>): Record<string, unknown> {
  const job: Record<string, unknown> = {}
  for (const name of JOB_FIELDS) if (fields[name] !== undefined) job[name] = fields[name]
  if (typeof job.status === 'string') job.status = JOB_STATUS[job.status] ?? job.status
  return job
}

/** The query options a read of a key's own records may carry: none that reaches past its filter ($apply, $search, $expand). */
const OWNED_READ_OPTIONS = new Set(['$select', '$filter', '$orderby', '$top', '$skip', '$count'])

/**
 * The query options of a read of owned records, checked: only OWNED_READ_OPTIONS, each once, and a
 * `$filter` whose parentheses balance outside its strings, so that, put beside the filter of the
 * key's records, it cannot close that filter's parenthesis and widen the read (`x) or (true`).
 */
function ownedReadOptions(query: string): URLSearchParams {
  const options = new URLSearchParams(query.startsWith('?') ? query.slice(1) : query)
  const names = [...options.keys()]
  const refused = names.find((name, at) => !OWNED_READ_OPTIONS.has(name) || names.indexOf(name) !== at)
  if (refused !== undefined) throw new Refused(refusal(400, 'INVALID_QUERY_OPTION', `A read of your records takes ${[...OWNED_READ_OPTIONS].join(', ')}, each once; not ${refused.slice(0, 40)}`))
  const filter = options.get('$filter')
  if (filter !== null && !balanced(filter)) throw new Refused(refusal(400, 'INVALID_FILTER', '$filter has unbalanced parentheses or quotes'))
  return options
}

/** Whether the parentheses balance outside single-quoted strings, and every string is closed. */
function balanced(expression: string): boolean {
  let depth = 0
  let quoted = false
  for (const char of expression) {
    if (char === "'") quoted = !quoted
    else if (!quoted && char === '(') depth++
    else if (!quoted && char === ')' && --depth < 0) return false
  }
  return depth === 0 && !quoted
}

const queryText = (options: URLSearchParams) => (options.size ? `?${options.toString().replace(/\+/g, '%20')}` : '')

/** A canonical path's service base, the rest of its path, and its query (with its `?`). */
function pathOf(url: string): { base: string; rest: string; query: string } {
  const at = url.indexOf('?')
  const path = at < 0 ? url : url.slice(0, at)
  const query = at < 0 ? '' : url.slice(at)
  const match = /^(\/odata\/v4\/[a-z-]+)(\/.*)?$/.exec(path)
  return { base: match?.[1] ?? '', rest: match?.[2] ?? '', query }
}

/**
 * A function call's name and parameters (`name(a=1,b='x')`, each value an OData literal as written;
 * a parameter alias `@p` taken from the query). Undefined when it is not one.
 */
export function parseFunctionCall(segment: string, query: string): { name: string; params: Map<string, string> } | undefined {
  const match = /^([A-Za-z_]\w*)\((.*)\)$/s.exec(safeDecode(segment) ?? '')
  if (!match) return undefined
  const params = new Map<string, string>()
  const aliases = new URLSearchParams(query.startsWith('?') ? query.slice(1) : query)
  for (const part of splitParameters(match[2])) {
    const equals = part.indexOf('=')
    const name = part.slice(0, equals).trim()
    if (equals < 1 || !/^[A-Za-z_]\w*$/.test(name) || params.has(name)) return undefined
    let value = part.slice(equals + 1).trim()
    if (value.startsWith('@')) value = aliases.get(value) ?? ''
    params.set(name, value)
  }
  return { name: match[1], params }
}

/** The literal's text: a quoted string unquoted ('' is '), anything else as written. */
export function literalText(literal: string): string {
  return /^'.*'$/s.test(literal) ? literal.slice(1, -1).replace(/''/g, "'") : literal
}

/** Splits `a=1,b='x,y'` at the commas outside quotes. */
function splitParameters(text: string): string[] {
  if (!text.trim()) return []
  const parts: string[] = []
  let quoted = false
  let start = 0
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "'") quoted = !quoted
    else if (text[i] === ',' && !quoted) {
      parts.push(text.slice(start, i))
      start = i + 1
    }
  }
  parts.push(text.slice(start))
  return parts
}

function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}
