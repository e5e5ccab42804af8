import { TokenBuckets } from '../lib/token-buckets.ts'
import type { KeyRecord } from './accounts.ts'
import { refusal, withUnitsLeft, type Answer } from './answers.ts'

/**
 * The gateway's limits. Rate limits are token buckets in memory, each instance enforcing its share
 * of a limit (srv/lib/token-buckets.ts, instances.ts); failed attempts are counted in the database
 * (failure-windows.ts); calls in flight are counted per instance.
 */

/** A token bucket per key (srv/lib/token-buckets.ts). */
export { TokenBuckets as KeyRateLimit } from '../lib/token-buckets.ts'

/** Each key's rate: its plan's rate and burst unless the configuration overrides them for all keys. */
export class KeyRates {
  private readonly buckets = new TokenBuckets()
  private readonly overrides: { ratePerSecond?: number; burst?: number }

  constructor(overrides: { ratePerSecond?: number; burst?: number }) {
    this.overrides = overrides
  }

  /** Takes one call from the key's bucket; answers the 429 (uncharged) when it is empty. */
  take(key: KeyRecord): Answer | undefined {
    const rate = this.buckets.take(key.ID, this.overrides.ratePerSecond ?? key.ratePerSecond, this.overrides.burst ?? key.burst)
    if (rate.ok) return undefined
    const limited = refusal(429, 'RATE_LIMITED', `This key's rate limit is reached; retry after ${rate.retryAfterS} s`, {}, { 'Retry-After': rate.retryAfterS })
    return withUnitsLeft(limited, key.unitsLeft)
  }
}

/** Failed attempts per subject, counted across instances (failure-windows.ts). */
export { FailureWindow } from './failure-windows.ts'

/**
 * Calls each key has in flight in this instance, at most `limit`: one key's slow or heavy calls can
 * hold only that many of the instance's database connections and workers, never all of them.
 */
export class CallsInFlight {
  private readonly counts = new Map<string, number>()
  private readonly limit: number

  constructor(limit: number) {
    this.limit = limit
  }

  /** Counts a call of the key until `release` runs; answers the 429 (uncharged) when the key has `limit` calls in flight. */
  take(key: KeyRecord): Answer | undefined {
    const count = this.counts.get(key.ID) ?? 0
    if (count >= this.limit) {
      const busy = refusal(429, 'TOO_MANY_CALLS_IN_FLIGHT', `This key has ${count} calls in flight, the most one key may have at once; retry when one has been answered`, {}, { 'Retry-After': 1 })
      return withUnitsLeft(busy, key.unitsLeft)
    }
    this.counts.set(key.ID, count + 1)
    return undefined
  }

  release(key: KeyRecord) {
    const count = (this.counts.get(key.ID) ?? 1) - 1
    if (count > 0) this.counts.set(key.ID, count)
    else this.counts.delete(key.ID)
  }
}

/**
 * Metered calls this instance has in flight, at most `limit`: a burst is answered 503 SERVER_BUSY
 * (uncharged, before the key is read or anything reserved) instead of queueing for the database
 * pool until its acquire time-out. The limit is sized against the pool (config.ts).
 */
export class InstanceAdmission {
  private inFlight = 0
  private readonly limit: number

  constructor(limit: number) {
    this.limit = limit
  }

  /** Admits a call until `release` runs; answers the 503 when `limit` calls are in flight (a limit of 0 admits every call). */
  take(): Answer | undefined {
    if (this.limit > 0 && this.inFlight >= this.limit) {
      return refusal(503, 'SERVER_BUSY', `This instance is answering ${this.inFlight} metered calls, the most it takes at once; nothing was charged, retry shortly`, {}, { 'Retry-After': 1 })
    }
    this.inFlight++
    return undefined
  }

  release() {
    this.inFlight = Math.max(0, this.inFlight - 1)
  }
}
