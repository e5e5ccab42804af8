import type { IncomingMessage } from 'node:http'
import { LRUCache } from 'lru-cache'
import { ApiKey } from '#cds-models/gateway'
import { keyBySecretHash, type KeyRecord } from './accounts.ts'
import { refusal, type Answer } from './answers.ts'
import { hashSecret, isApiKey, sameHash } from './keys.ts'
import type { FailureWindow } from './rate-limits.ts'
import { clientOf } from '../lib/client-address.ts'
import { recordKeyId } from '../lib/access-log.ts'
import { SingleFlight } from '../lib/single-flight.ts'
import { outsideRequest } from '../lib/request-work.ts'

/**
 * Which key a call presents, in `Authorization: Bearer cag_…` or `x-agent-token: cag_…`. A valid
 * key always passes; a missing or invalid one counts as a failure of the client's address, and an
 * address that failed too often is answered 429 (only its failing attempts: see FailureWindow).
 */

const KEY_CACHE_MS = 5000
const CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="chain-access"' }

export const INVALID_KEY = refusal(401, 'KEY_INVALID', 'The API key is unknown or revoked', {}, CHALLENGE)
export const expiredKey = (validUntil?: string) =>
  refusal(401, 'KEY_EXPIRED', validUntil ? `This key expired at ${validUntil}` : 'This key has expired', {}, CHALLENGE)
/** A suspended key is the caller's own, presented right: refused, but not counted as a failed attempt of the address. */
const SUSPENDED_KEY = refusal(403, 'KEY_SUSPENDED', 'This key is suspended by the operator; ask them to resume it')
const MISSING_KEY = refusal(401, 'KEY_MISSING', 'Send your API key as Authorization: Bearer <key> or x-agent-token: <key>', {}, CHALLENGE)

type KeyCheckResult = { ok: true; key: KeyRecord } | { ok: false; answer: Answer }

export class KeyCheck {
  private readonly failures: FailureWindow
  /**
   * Keys by secret hash, for a few seconds. A cached key never decides alone: every reservation
   * checks the secret, status, validity and version in the database, so a rotated, revoked or
   * expired key is refused at once in every instance.
   */
  private readonly keys = new LRUCache<string, KeyRecord>({ max: 10_000, ttl: KEY_CACHE_MS })
  private readonly reads = new SingleFlight<KeyRecord | undefined>()

  constructor(failures: FailureWindow) {
    this.failures = failures
  }

  /** The caller's key, or the answer refusing the call. `fresh` reads the key from the database, not the cache. */
  async check(req: IncomingMessage, { fresh = false } = {}): Promise<KeyCheckResult> {
    const presented = await this.presented(req, fresh)
    if (presented.ok) {
      recordKeyId(req, presented.key.ID)
      return presented
    }
    if (presented.answer === SUSPENDED_KEY) return presented
    const blockedFor = await this.failures.fail(clientOf(req))
    if (blockedFor) {
      const message = `Too many calls with a missing or invalid key from this address; retry after ${blockedFor} s`
      return { ok: false, answer: refusal(429, 'TOO_MANY_FAILED_ATTEMPTS', message, {}, { 'Retry-After': blockedFor }) }
    }
    return presented
  }

  /** Drops every cached copy of a key (after it changed here). */
  forget(keyId: string) {
    for (const [hash, record] of this.keys.entries()) {
      if (record.ID !== keyId) continue
      this.keys.delete(hash)
      this.reads.forget(hash)
    }
  }

  private async presented(req: IncomingMessage, fresh: boolean): Promise<KeyCheckResult> {
    const secret = secretOf(req)
    if (!secret) return { ok: false, answer: MISSING_KEY }
    if (!isApiKey(secret)) return { ok: false, answer: INVALID_KEY }
    const hash = hashSecret(secret)
    const key = await this.lookup(hash, fresh)
    if (!key || !sameHash(key.secretHash, hash)) return { ok: false, answer: INVALID_KEY }
    // A suspension is read again on every call, so a key resumed in any instance calls again at once.
    if (key.status === ApiKey.status.suspended) return fresh ? { ok: false, answer: SUSPENDED_KEY } : this.presented(req, true)
    if (key.status !== ApiKey.status.active) return { ok: false, answer: INVALID_KEY }
    if (Date.parse(key.validUntil) <= Date.now()) return { ok: false, answer: expiredKey(key.validUntil) }
    return { ok: true, key }
  }

  private async lookup(hash: string, fresh: boolean): Promise<KeyRecord | undefined> {
    const cached = fresh ? undefined : this.keys.get(hash)
    if (cached) return cached
    // Calls of one key that find it gone from the cache together read it once, as work of its own (not stopped with one of them).
    const record = fresh ? await keyBySecretHash(hash) : await this.reads.run(hash, () => outsideRequest(() => keyBySecretHash(hash)))
    if (record) this.keys.set(hash, record)
    else this.keys.delete(hash)
    return record
  }
}

/**
 * Whether the call presents anything shaped as one of the gateway's secrets (an API key or an agent
 * grant, valid or not, checksum right or wrong): an identity provider's token never is.
 */
export function presentsSecret(req: IncomingMessage): boolean {
  if (req.headers['x-agent-token'] !== undefined) return true
  const secret = secretOf(req)
  return secret !== undefined && /^[a-z]{3}_/i.test(secret)
}

/** Whether the call presents a key at all (valid or not). */
export const presentsKey = (req: IncomingMessage) => secretOf(req) !== undefined

function secretOf(req: IncomingMessage): string | undefined {
  const authorization = req.headers.authorization
  if (typeof authorization === 'string' && /^bearer\s+/i.test(authorization)) return authorization.replace(/^bearer\s+/i, '').trim()
  const token = req.headers['x-agent-token']
  return typeof token === 'string' ? token.trim() : undefined
}
