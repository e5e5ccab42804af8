import cds from '@sap/cds'
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { LRUCache } from 'lru-cache'
import { ApiKey, RemoteGrants } from '#cds-models/gateway'
import { refusal, send, type Answer } from './answers.ts'
import type { RemoteProductConfig } from './config.ts'
import type { Product } from './keys.ts'
import { isUniqueViolation } from '../lib/plain-sql.ts'

/**
 * A product served by a remote instance instead of this process (`CHAIN_B_REMOTE_URL`, say): the
 * key's metered calls to it are forwarded there, as they came, with an agent grant the gateway
 * holds there for that key in `x-agent-token`. The grant is issued through the remote's grant
 * administration on the key's first call to the product (`subject` `hosted:<key>`, so the remote
 * keeps the key's records together across grants), allows what the key's own grant on the product
 * allows, and is revoked there when the key is revoked or rotated, or its grant is. Metering,
 * refunds and gating stay here: the remote never sees the gateway key, and a remote that fails, is
 * down or too slow is answered 502, 503 or 504 with a code and refunded (any answer from 400 on is).
 */

/** A call's body is read whole before it is forwarded (a grant the remote no longer knows is issued again and the call sent once more). */
const MAX_FORWARDED_BODY = 1024 * 1024
/** What of a body that is too large is read and dropped before the connection is cut. */
const DROPPED_AT_MOST = 16 * 1024 * 1024
/** Request headers that reach the remote; the key (Authorization, x-agent-token) and hop-by-hop headers never do. */
const FORWARDED_REQUEST_HEADERS = ['accept', 'accept-language', 'content-type', 'prefer', 'if-match', 'if-none-match', 'odata-version', 'odata-maxversion', 'idempotency-key', 'x-request-id']
/** Answer headers passed back; the units headers are the gateway's own. */
const PASSED_ANSWER_HEADERS = ['content-type', 'etag', 'location', 'odata-version', 'preference-applied', 'retry-after', 'cache-control', 'content-disposition', 'x-idempotent-replay']
const TOKENS_KEPT = 10_000
const DEVELOPMENT_SECRET = 'development-only remote grant secret: set GATEWAY_REMOTE_GRANT_SECRET in production'

/** What is read of the key and of its own grant on the product (accounts.ts's records). */
interface KeyRecord { ID: string }
interface KeyGrant { allowedOperations: string[] }

interface HeldGrant {
  remoteGrantId: string
  token: string
}

export class RemoteProducts {
  /** Each key's grant on each remote product, opened, so that a warm call reads no row. */
  private readonly held = new LRUCache<string, HeldGrant>({ max: TOKENS_KEPT })
  /** Grants being issued: concurrent first calls of a key wait for one. */
  private readonly issuing = new Map<string, Promise<HeldGrant>>()

  private readonly remotes: Partial<Record<Product, RemoteProductConfig>>
  private readonly timeoutMs: number
  private readonly secret: string

  constructor(remotes: Partial<Record<Product, RemoteProductConfig>>, timeoutMs: number, secret: string = DEVELOPMENT_SECRET) {
    this.remotes = remotes
    this.timeoutMs = timeoutMs
    this.secret = secret
  }

  /** Whether any product is remote. */
  any(): boolean {
    return Object.keys(this.remotes).length > 0
  }

  /**
   * Revokes at the remotes the grants whose key was revoked or rotated since they were issued, however
   * that happened (the command line, another instance, a remote that was down when it did).
   */
  async revokeEndedGrants(): Promise<void> {
    const ended = await SELECT.from(RemoteGrants).columns('apiKey_ID').where`apiKey.status = ${ApiKey.status.revoked} or apiKey.rotatedAt > createdAt`
    for (const keyId of new Set(ended.map(row => row.apiKey_ID!))) await this.revokeGrantsOf(keyId)
  }

  /** Whether calls to the product go to a remote. */
  serves(product: string): product is Product {
    return Object.hasOwn(this.remotes, product)
  }

  /** Forwards the call and passes the remote's answer back (the gateway's metering settles on its status). */
  async forward(product: Product, key: KeyRecord, grant: KeyGrant, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const remote = this.remotes[product]!
    const body = await readBody(req)
    if (body === undefined) return send(res, refusal(413, 'BODY_TOO_LARGE', `A call forwarded to the remote ${product} product takes at most ${MAX_FORWARDED_BODY} bytes`))
    const started = Date.now()
    for (let attempt = 0; ; attempt++) {
      let held: HeldGrant
      try {
        held = await this.grantOf(product, key, grant)
      } catch (error) {
        return send(res, remoteFailure(product, error, 'issuing the key\'s grant there'))
      }
      const left = this.timeoutMs - (Date.now() - started)
      let answer: IncomingMessage
      try {
        answer = await call(remote.url + (req.url ?? '/'), { method: req.method ?? 'GET', headers: forwardedHeaders(req, held.token, body), body, timeoutMs: left })
      } catch (error) {
        return send(res, remoteFailure(product, error, 'forwarding the call'))
      }
      if (answer.statusCode === 401 && attempt === 0) {
        // The remote no longer knows the grant (revoked there, say): issued again, the call sent once more.
        answer.resume()
        await this.forget(key.ID, product)
        continue
      }
      if ((answer.statusCode ?? 502) >= 500) {
        answer.resume()
        return send(res, refusal(502, 'REMOTE_PRODUCT_ERROR', `The remote ${product} product failed (HTTP ${answer.statusCode}); the call's units are refunded`))
      }
      return passBack(answer, res)
    }
  }

  /** Forwards a free call (a service or metadata document, the verify lane): no key, no grant. */
  async forwardFree(product: Product, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req)
    if (body === undefined) return send(res, refusal(413, 'BODY_TOO_LARGE', `A call forwarded to the remote ${product} product takes at most ${MAX_FORWARDED_BODY} bytes`))
    let answer: IncomingMessage
    try {
      answer = await call(this.remotes[product]!.url + (req.url ?? '/'), { method: req.method ?? 'GET', headers: forwardedHeaders(req, undefined, body), body, timeoutMs: this.timeoutMs })
    } catch (error) {
      return send(res, remoteFailure(product, error, 'forwarding the call'))
    }
    if ((answer.statusCode ?? 502) >= 500) {
      answer.resume()
      return send(res, refusal(502, 'REMOTE_PRODUCT_ERROR', `The remote ${product} product failed (HTTP ${answer.statusCode})`))
    }
    return passBack(answer, res)
  }

  /** Revokes the key's grants at every remote product (after the key was revoked or rotated, or its grant was); a grant the remote could not be told of stays listed and is revoked by the next run. */
  async revokeGrantsOf(keyId: string, products: Product[] = Object.keys(this.remotes) as Product[]): Promise<void> {
    const rows = await cds.tx(() => SELECT.from(RemoteGrants).columns('product', 'remoteGrantId').where({ apiKey_ID: keyId, product: { in: products } }))
    for (const row of rows) {
      const product = row.product as Product
      this.held.delete(heldKey(keyId, product))
      try {
        await this.revokeAtRemote(product, row.remoteGrantId!)
        await cds.tx(() => DELETE.from(RemoteGrants).where({ apiKey_ID: keyId, product, remoteGrantId: row.remoteGrantId }))
      } catch (error) {
        cds.log('gateway').warn(`could not revoke the grant of key ${keyId} at the remote ${product} product; trying again later:`, (error as Error).message)
      }
    }
  }

  /** The key's grant at the remote: held, stored (sealed) or issued now. */
  private async grantOf(product: Product, key: KeyRecord, grant: KeyGrant): Promise<HeldGrant> {
    const name = heldKey(key.ID, product)
    const held = this.held.get(name)
    if (held) return held
    let issuing = this.issuing.get(name)
    if (!issuing) {
      issuing = this.storedOrIssued(product, key, grant).finally(() => this.issuing.delete(name))
      this.issuing.set(name, issuing)
    }
    const grantHeld = await issuing
    this.held.set(name, grantHeld)
    return grantHeld
  }

  private async storedOrIssued(product: Product, key: KeyRecord, grant: KeyGrant): Promise<HeldGrant> {
    const stored = await this.stored(key.ID, product)
    if (stored) return stored
    const issued = await this.issueAtRemote(product, key.ID, grant)
    try {
      await cds.tx(() => INSERT.into(RemoteGrants).entries({
        apiKey_ID: key.ID, product, remoteGrantId: issued.remoteGrantId, sealedToken: this.seal(key.ID, product, issued.token), createdAt: new Date().toISOString(),
      }))
      return issued
    } catch (error) {
      if (!isUniqueViolation(error)) throw error
      // Another instance stored one first: that one is the key's, this one is given back.
      await this.revokeAtRemote(product, issued.remoteGrantId).catch(() => undefined)
      const winner = await this.stored(key.ID, product)
      if (!winner) throw error
      return winner
    }
  }

  private async stored(keyId: string, product: Product): Promise<HeldGrant | undefined> {
    const row = await cds.tx(() => SELECT.one.from(RemoteGrants).columns('remoteGrantId', 'sealedToken').where({ apiKey_ID: keyId, product }))
    const token = row && this.open(keyId, product, row.sealedToken!)
    return token ? { remoteGrantId: row.remoteGrantId!, token } : undefined
  }

  /** The key's grant is no longer good at the remote: no longer held nor stored (revoked there, where it still stands). */
  private async forget(keyId: string, product: Product) {
    this.held.delete(heldKey(keyId, product))
    await this.revokeGrantsOf(keyId, [product])
  }

  private async issueAtRemote(product: Product, keyId: string, grant: KeyGrant): Promise<HeldGrant> {
    const answer = await this.administer(product, '/odata/v4/operator/issueGrant', {
      product, operations: grant.allowedOperations, label: `hosted gateway key ${keyId}`, subject: `hosted:${keyId}`, reason: 'a hosted gateway key\'s first call',
    })
    const { ID, token } = answer as { ID?: string; token?: string }
    if (!ID || !token) throw new Error('the remote\'s grant administration answered no grant')
    return { remoteGrantId: ID, token }
  }

  private async revokeAtRemote(product: Product, remoteGrantId: string) {
    await this.administer(product, `/odata/v4/operator/Grants(${encodeURIComponent(remoteGrantId)})/revoke`, { reason: 'the hosted gateway key was revoked or rotated' }, [404, 409])
  }

  /** A call to the remote's grant administration, as the operator credentials configured for it. */
  private async administer(product: Product, path: string, body: object, alsoFine: number[] = []): Promise<unknown> {
    const remote = this.remotes[product]!
    const text = JSON.stringify(body)
    const answer = await call(remote.url + path, {
      method: 'POST', timeoutMs: this.timeoutMs, body: Buffer.from(text),
      headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(text), ...(remote.authorization ? { authorization: remote.authorization } : {}) },
    })
    const received = await readAll(answer)
    const status = answer.statusCode ?? 0
    if (alsoFine.includes(status)) return undefined
    if (status >= 300) throw new Error(`the remote's grant administration answered HTTP ${status}: ${received.toString('utf8').slice(0, 300)}`)
    return received.length ? JSON.parse(received.toString('utf8')) : undefined
  }

  private sealingKey(keyId: string, product: Product): Buffer {
    return Buffer.from(hkdfSync('sha256', this.secret, 'remote-grant-token', `${keyId}|${product}`, 32))
  }

  /** The token sealed with AES-256-GCM under a key derived from the secret, bound to the key and product. */
  private seal(keyId: string, product: Product, token: string): string {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.sealingKey(keyId, product), iv)
    const sealed = Buffer.concat([iv, cipher.update(token, 'utf8'), cipher.final(), cipher.getAuthTag()])
    return `v1.${sealed.toString('base64')}`
  }

  /** The token, or undefined when it was sealed under another secret (then the grant is issued again). */
  private open(keyId: string, product: Product, sealed: string): string | undefined {
    if (!sealed.startsWith('v1.')) return undefined
    const bytes = Buffer.from(sealed.slice(3), 'base64')
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.sealingKey(keyId, product), bytes.subarray(0, 12))
      decipher.setAuthTag(bytes.subarray(bytes.length - 16))
      return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString('utf8')
    } catch {
      return undefined
    }
  }
}

const heldKey = (keyId: string, product: Product) => `${keyId}|${product}`

/** The gateway's remote products, for the key changes that end a key's grants there (accounts.ts). */
let inUse: RemoteProducts | undefined
export function useRemoteProducts(remotes: RemoteProducts): RemoteProducts {
  inUse = remotes
  return remotes
}

/** The gateway's remote products (undefined before the gateway starts). */
export const remoteProductsInUse = (): RemoteProducts | undefined => inUse

/** Once a key is revoked or rotated (or its grant is), its grants at remote products are revoked too (in the background; revokeEndedGrants catches what this misses). */
export function endRemoteGrantsOf(keyId: string, products?: Product[]) {
  if (!inUse?.any()) return
  inUse.revokeGrantsOf(keyId, products).catch(error => cds.log('gateway').warn(`could not revoke the remote grants of key ${keyId}:`, (error as Error).message))
}

/**
 * The request body, whole, or undefined when it is larger than a forwarded call takes (declared so,
 * or found so while reading). Then the rest is read and dropped, so that the client, still sending,
 * gets to read the answer (a connection closed under it would lose it), up to a bound past which
 * the connection is cut.
 */
function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  if (req.method === 'GET' || req.method === 'HEAD') return Promise.resolve(Buffer.alloc(0))
  const tooLarge = () => {
    let dropped = 0
    req.on('data', (chunk: Buffer) => {
      dropped += chunk.length
      if (dropped > DROPPED_AT_MOST) req.socket.destroy()
    })
    req.resume()
    return undefined
  }
  if (Number(req.headers['content-length']) > MAX_FORWARDED_BODY) return Promise.resolve(tooLarge())
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= MAX_FORWARDED_BODY) return void chunks.push(chunk)
      req.off('data', onData).off('end', onEnd)
      resolve(tooLarge())
    }
    const onEnd = () => resolve(Buffer.concat(chunks))
    req.on('data', onData).on('end', onEnd).once('error', reject)
  })
}

function forwardedHeaders(req: IncomingMessage, token: string | undefined, body: Buffer): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = token ? { 'x-agent-token': token } : {}
  for (const name of FORWARDED_REQUEST_HEADERS) if (req.headers[name] !== undefined) headers[name] = req.headers[name]
  if (body.length) headers['content-length'] = body.length
  return headers
}

interface CallOptions {
  method: string
  headers: OutgoingHttpHeaders
  body: Buffer
  timeoutMs: number
}

class RemoteTimeout extends Error {}

/** One HTTP call; resolves with the answer's head (its body still to read), rejects on a connection that fails or a time-out. */
function call(url: string, options: CallOptions): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const send = url.startsWith('https:') ? httpsRequest : httpRequest
    const request = send(url, { method: options.method, headers: options.headers }, resolve)
    const timer = setTimeout(() => request.destroy(new RemoteTimeout(`no answer within ${Math.max(0, options.timeoutMs)} ms`)), Math.max(0, options.timeoutMs))
    request.on('error', reject)
    request.on('close', () => clearTimeout(timer))
    request.end(options.body.length ? options.body : undefined)
  })
}

async function readAll(answer: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of answer) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** The remote's answer as it came, with the headers a client needs. */
function passBack(answer: IncomingMessage, res: ServerResponse): Promise<void> {
  res.statusCode = answer.statusCode ?? 502
  for (const name of PASSED_ANSWER_HEADERS) if (answer.headers[name] !== undefined) res.setHeader(name, answer.headers[name]!)
  return new Promise(resolve => {
    answer.pipe(res)
    answer.on('end', resolve)
    answer.on('error', () => {
      res.destroy()
      resolve()
    })
  })
}

/** Why a forwarded call failed, as the caller is answered (and refunded). */
function remoteFailure(product: Product, error: unknown, doing: string): Answer {
  if (error instanceof RemoteTimeout) return refusal(504, 'REMOTE_PRODUCT_TIMEOUT', `The remote ${product} product did not answer in time (${doing}); the call's units are refunded`)
  const code = (error as { code?: string }).code
  if (code && /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|EPIPE)$/.test(code)) {
    return refusal(503, 'REMOTE_PRODUCT_UNAVAILABLE', `The remote ${product} product cannot be reached (${doing}); the call's units are refunded. Try again shortly`, {}, { 'Retry-After': 5 })
  }
  cds.log('gateway').warn(`the remote ${product} product failed ${doing}:`, (error as Error).message)
  return refusal(502, 'REMOTE_PRODUCT_ERROR', `The remote ${product} product failed (${doing}); the call's units are refunded`)
}
