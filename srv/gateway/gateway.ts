import cds from '@sap/cds'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { LRUCache } from 'lru-cache'
import { Prices } from '#cds-models/gateway'
import type { GatewayConfig } from './config.ts'
import { normaliseTarget } from './paths.ts'
import { RouteTable, type Classification } from './routes.ts'
import { hashSecret, isApiKey, sameHash } from './keys.ts'
import { keyBySecretHash, type KeyRecord } from './accounts.ts'
import * as ledger from './ledger.ts'
import { FailureWindow, KeyRateLimit } from './rate-limits.ts'
import { holdResponse } from './response-hold.ts'
import { keyPrincipal, PUBLIC_PRINCIPAL, type GrantRecord } from './principals.ts'
import { GatewayRoutes } from './me.ts'
import { reply } from './reply.ts'
import { requestIdOf } from '../lib/http-safety.ts'

/**
 * The hosted gateway, in front of every route: normalise the path once; classify it; refuse what is
 * closed or unknown (403, nothing charged); for metered routes check the key, the rate limit and
 * the price, reserve the units, let CAP handle the call as the key's product grant, and resolve
 * the reservation before the answer leaves (commit on success, refund on 4xx/5xx or timeout).
 * Every answer says what it charged and what is left (x-access-units-charged/-left).
 */

export type Request = IncomingMessage & { gatewayPrincipal?: unknown; originalUrl?: string }

const KEY_CACHE_MS = 5000
const PRICE_REFRESH_MS = 60_000
const SHUTDOWN_FLUSH_MS = 3000
/** The ledger stores the route of a call cut to this length (its column's size). */
const ROUTE_LENGTH = 500

type Refusal = [status: number, code: string, message: string]

export class Gateway {
  readonly config: GatewayConfig
  private routes = new RouteTable([])
  private prices = new Map<string, number>()
  private readonly keyRate = new KeyRateLimit()
  private readonly failures: FailureWindow
  /**
   * Keys by secret hash, for a few seconds. A cached key never decides alone: every reservation
   * checks the secret, status, validity and version in the database, so a rotated, revoked or
   * expired key is refused at once in every instance.
   */
  private readonly keys = new LRUCache<string, KeyRecord>({ max: 10_000, ttl: KEY_CACHE_MS })
  private readonly own: GatewayRoutes
  private readonly timers: NodeJS.Timeout[] = []

  constructor(config: GatewayConfig) {
    this.config = config
    this.failures = new FailureWindow(config.authFailures, config.authFailureWindowS)
    this.own = new GatewayRoutes(this)
  }

  /** Builds the route table from what is served, loads prices, starts the sweeper. */
  async start(services: Iterable<unknown>) {
    this.routes = RouteTable.fromServices(services, cds.model!.definitions as any)
    await this.loadPrices()
    this.timers.push(
      setInterval(() => this.loadPrices().catch(error => cds.log('gateway').warn('could not reload prices', error)), PRICE_REFRESH_MS).unref(),
      setInterval(() => this.sweep(), this.config.sweepIntervalS * 1000).unref(),
    )
  }

  /**
   * Stops the background work (price reload, sweeper) when the server shuts down, and writes the
   * waiting commits, for a few seconds at most: a database that does not answer must not keep the
   * process from ending (the sweeper settles what is left pending).
   */
  async stop() {
    for (const timer of this.timers.splice(0)) clearInterval(timer)
    await Promise.race([ledger.flushCommits(), new Promise(resolve => setTimeout(resolve, SHUTDOWN_FLUSH_MS).unref())])
  }

  readonly middleware = (req: Request, res: ServerResponse, next: (error?: unknown) => void) => {
    this.handle(req, res, next).catch(next)
  }

  priceTable(): { routeClass: string; units: number }[] {
    return [...this.prices].map(([routeClass, units]) => ({ routeClass, units }))
  }

  /**
   * The caller's key, or the refusal already answered. A valid key always passes; a missing or
   * invalid one counts as a failure of the client's address, and an address that failed too often
   * is answered 429 (only its failing attempts: see FailureWindow). `fresh` reads the key from the
   * database, not from the cache.
   */
  async authenticate(req: Request, res: ServerResponse, { fresh = false } = {}): Promise<KeyRecord | undefined> {
    const { key, refusal } = await this.presentedKey(req, fresh)
    if (key) return key
    const address = addressOf(req)
    const blockedFor = this.failures.blocked(address)
    if (blockedFor) {
      reply(res, 429, 'TOO_MANY_FAILED_ATTEMPTS', `Too many calls with a missing or invalid key from this address; retry after ${blockedFor} s`, {}, { 'Retry-After': blockedFor })
      return undefined
    }
    this.failures.record(address)
    reply(res, refusal![0], refusal![1], refusal![2], {}, { 'WWW-Authenticate': 'Bearer realm="chain-access"' })
    return undefined
  }

  /** Takes one call from the key's rate bucket; answers 429 (and false) when it is empty. */
  takeRate(key: KeyRecord, res: ServerResponse): boolean {
    const rate = this.keyRate.take(key.ID, this.config.ratePerSecond ?? key.ratePerSecond, this.config.burst ?? key.burst)
    if (rate.ok) return true
    reply(res, 429, 'RATE_LIMITED', `This key's rate limit is reached; retry after ${rate.retryAfterS} s`, {}, { 'Retry-After': rate.retryAfterS })
    return false
  }

  forget(keyId: string) {
    for (const [hash, record] of this.keys.entries()) if (record.ID === keyId) this.keys.delete(hash)
  }

  private async presentedKey(req: Request, fresh: boolean): Promise<{ key?: KeyRecord; refusal?: Refusal }> {
    const secret = secretOf(req)
    if (!secret) return { refusal: [401, 'KEY_MISSING', 'Send your API key as Authorization: Bearer <key> or x-agent-token: <key>'] }
    if (!isApiKey(secret)) return { refusal: INVALID_KEY }
    const hash = hashSecret(secret)
    const key = await this.lookup(hash, fresh)
    if (!key || key.status !== 'active' || !sameHash(key.secretHash, hash)) return { refusal: INVALID_KEY }
    if (Date.parse(key.validUntil) <= Date.now()) return { refusal: [401, 'KEY_EXPIRED', `This key expired at ${key.validUntil}`] }
    return { key }
  }

  private async handle(req: Request, res: ServerResponse, next: (error?: unknown) => void) {
    const target = normaliseTarget(req.url ?? '', req.headers)
    if (!target.ok) return reply(res, target.status, target.code, target.message)
    req.url = target.query ? `${target.path}?${target.query}` : target.path
    const route = this.routes.classify(req.method ?? 'GET', target.path)
    switch (route.kind) {
      case 'refused':
        return reply(res, route.status, route.code, route.message)
      case 'gateway':
        return this.own.handle(route.handler, req, res)
      case 'free':
        res.setHeader('x-access-units-charged', 0)
        req.gatewayPrincipal = PUBLIC_PRINCIPAL
        return next()
      case 'metered':
        return this.meter(route, target.path, req, res, next)
    }
  }

  private async meter(route: Extract<Classification, { kind: 'metered' }>, path: string, req: Request, res: ServerResponse, next: () => void) {
    const requestId = requestIdOf(req)
    const price = this.prices.get(route.routeClass)
    const units = price ?? 0
    let key = await this.authenticate(req, res)
    if (!key || !this.takeRate(key, res)) return
    if (price === undefined) return reply(res, 403, 'ROUTE_NOT_PRICED', `No price is set for ${route.routeClass}; the call is not forwarded`)

    let grant: GrantRecord | undefined
    let reservation: ledger.Reservation | undefined
    // A key that changed since it was cached (a grant revoked, say) is read again, once.
    for (let attempt = 0; attempt < 2; attempt++) {
      grant = key.grants.find(g => g.product === route.product && g.status === 'active')
      if (!grant) return reply(res, 403, 'PRODUCT_NOT_GRANTED', `This key holds no active grant for ${route.product}`, {}, { 'x-access-units-left': key.unitsLeft })
      reservation = await ledger.reserve({
        keyId: key.ID, secretHash: key.secretHash, version: key.version, units, routeClass: route.routeClass, route: boundedRoute(req.method, path), requestId,
      })
      if (reservation.ok || reservation.reason !== 'stale' || attempt > 0) break
      this.forget(key.ID)
      key = await this.authenticate(req, res, { fresh: true })
      if (!key) return
    }
    if (!reservation!.ok) {
      this.forget(key.ID)
      if (reservation!.reason === 'insufficient') {
        const left = reservation!.unitsLeft
        return reply(res, 402, 'UNITS_EXHAUSTED', `This call costs ${units} units (${route.routeClass}); ${left} are left`, { price: units, unitsLeft: left, routeClass: route.routeClass }, { 'x-access-units-left': left })
      }
      return reply(res, 401, ...(reservation!.reason === 'expired' ? (['KEY_EXPIRED', 'This key has expired'] as const) : ([INVALID_KEY[1], INVALID_KEY[2]] as const)))
    }
    const reserved = reservation!

    const held = holdResponse(res, async status => {
      clearTimeout(timer)
      if (status >= 400) {
        const left = await ledger.refund(requestId, String(status))
        setUnits(res, 0, left ?? reserved.unitsLeft + units)
      } else {
        setUnits(res, units, reserved.unitsLeft)
        ledger.commitSoon(requestId, String(status))
      }
    })
    // A timeout answers at once and refunds right after: the refund must not wait for the handler
    // (which may hold the database). Should the process die in between, the sweeper refunds.
    const timer = setTimeout(() => {
      if (!held.takeOver()) return
      held.send(504, { 'content-type': 'application/json', 'x-access-units-charged': 0, 'x-access-units-left': reserved.unitsLeft + units },
        JSON.stringify({ error: { code: 'UPSTREAM_TIMEOUT', message: `The call was not answered within ${this.config.timeoutMs} ms; its units are refunded` } }))
      ledger.refund(requestId, 'timeout').catch(error => cds.log('gateway').error('could not refund a timed-out call; the sweeper will', requestId, error))
    }, this.config.timeoutMs)

    req.gatewayPrincipal = keyPrincipal(key, grant!)
    next()
  }

  private async lookup(hash: string, fresh: boolean): Promise<KeyRecord | undefined> {
    const cached = fresh ? undefined : this.keys.get(hash)
    if (cached) return cached
    const record = await keyBySecretHash(hash)
    if (record) this.keys.set(hash, record)
    else this.keys.delete(hash)
    return record
  }

  private async loadPrices() {
    const rows = await cds.tx(() => SELECT.from(Prices).columns('routeClass', 'units'))
    this.prices = new Map(rows.map((row: any) => [row.routeClass, Number(row.units)]))
  }

  private async sweep() {
    try {
      const voided = await ledger.sweep(this.config.reservationTimeoutS)
      if (voided) cds.log('gateway').warn(`voided ${voided} reservations left pending longer than ${this.config.reservationTimeoutS} s`)
    } catch (error) {
      cds.log('gateway').error('sweeper failed', error)
    }
  }
}

const { SELECT } = cds.ql

const INVALID_KEY: Refusal = [401, 'KEY_INVALID', 'The API key is unknown or revoked']

function secretOf(req: Request): string | undefined {
  const authorization = req.headers.authorization
  if (typeof authorization === 'string' && /^bearer\s+/i.test(authorization)) return authorization.replace(/^bearer\s+/i, '').trim()
  const token = req.headers['x-agent-token']
  return typeof token === 'string' ? token.trim() : undefined
}

function addressOf(req: Request): string {
  return req.socket?.remoteAddress ?? 'unknown'
}

/** `METHOD /path` as the ledger stores it: at most ROUTE_LENGTH characters. */
function boundedRoute(method: string | undefined, path: string): string {
  const route = `${method} ${path}`
  return route.length <= ROUTE_LENGTH ? route : route.slice(0, ROUTE_LENGTH - 1) + '…'
}

function setUnits(res: ServerResponse, charged: number, left: number) {
  res.setHeader('x-access-units-charged', charged)
  res.setHeader('x-access-units-left', left)
}
