import cds from '@sap/cds'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { LRUCache } from 'lru-cache'
import { ApiKey, RemoteGrants } from '#cds-models/gateway'
import { refusal, send } from './answers.ts'
import type { RemoteProductConfig } from './config.ts'
import type { Product } from './keys.ts'
import { bodyTooLarge, call, forwardedHeaders, passBack, readAll, readBody, remoteFailure } from './remote-http.ts'
import { TokenSeal } from './token-seal.ts'
import { PluginRemote, type PluginRoute, type RefundJob } from './remote-plugin.ts'
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
  private readonly tokens: TokenSeal
  /** Products served by the chain-B plugin's own API rather than an instance of this application. */
  private readonly plugins: Partial<Record<Product, PluginRemote>> = {}

  /** `refundJob`: how a job a remote failed is refunded (the gateway's ledger; only the plugin kind reports failed jobs to the gateway). */
  constructor(remotes: Partial<Record<Product, RemoteProductConfig>>, timeoutMs: number, secret: string = DEVELOPMENT_SECRET, refundJob?: RefundJob) {
    this.remotes = remotes
    this.timeoutMs = timeoutMs
    this.tokens = new TokenSeal(secret)
    for (const [product, remote] of Object.entries(remotes) as [Product, RemoteProductConfig][]) {
      if (remote.kind === 'plugin') this.plugins[product] = new PluginRemote(product, remote, timeoutMs, this.tokens, refundJob)
    }
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
  async forward(product: Product, route: PluginRoute, key: KeyRecord, grant: KeyGrant, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const plugin = this.plugins[product]
    if (plugin) return plugin.forward(route, key, grant, req, res)
    const remote = this.remotes[product]!
    const body = await readBody(req)
    if (body === undefined) return send(res, bodyTooLarge(product))
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
    const plugin = this.plugins[product]
    if (plugin) return plugin.forwardFree(req, res)
    const body = await readBody(req)
    if (body === undefined) return send(res, bodyTooLarge(product))
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
    // One stored that cannot be opened (sealed under another secret) is of no use: it goes first.
    await this.revokeGrantsOf(key.ID, [product])
    const issued = await this.issueAtRemote(product, key.ID, grant)
    try {
      await cds.tx(() => INSERT.into(RemoteGrants).entries({
        apiKey_ID: key.ID, product, remoteGrantId: issued.remoteGrantId, sealedToken: this.tokens.seal(heldKey(key.ID, product), issued.token), createdAt: new Date().toISOString(),
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
    const token = row && this.tokens.open(heldKey(keyId, product), row.sealedToken!)
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

