/**
 * In-memory limits, per gateway instance (several instances each apply them; balances are exact
 * across instances, rate limits are per instance).
 */

/** A token bucket per key: `rate` tokens per second up to `burst`. */
export class KeyRateLimit {
  private readonly buckets = new Map<string, { tokens: number; at: number }>()

  /** Takes one token; answers the seconds to wait when none is left. */
  take(key: string, rate: number, burst: number, now = Date.now()): { ok: true } | { ok: false; retryAfterS: number } {
    const bucket = this.buckets.get(key) ?? { tokens: burst, at: now }
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * rate)
    bucket.at = now
    if (this.buckets.size > 100_000) this.buckets.clear()
    this.buckets.set(key, bucket)
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1
      return { ok: true }
    }
    return { ok: false, retryAfterS: Math.max(1, Math.ceil((1 - bucket.tokens) / rate)) }
  }
}

/** Unauthenticated failures per client address in a fixed window: too many answer 429. */
export class FailureWindow {
  private readonly windows = new Map<string, { failures: number; until: number }>()
  private readonly limit: number
  private readonly windowMs: number

  constructor(limit: number, windowSeconds: number) {
    this.limit = limit
    this.windowMs = windowSeconds * 1000
  }

  /** Seconds until the address may try again, when it is blocked. */
  blocked(address: string, now = Date.now()): number | undefined {
    const window = this.windows.get(address)
    if (!window || window.until <= now || window.failures < this.limit) return undefined
    return Math.ceil((window.until - now) / 1000)
  }

  record(address: string, now = Date.now()) {
    let window = this.windows.get(address)
    if (!window || window.until <= now) {
      if (this.windows.size > 100_000) this.windows.clear()
      window = { failures: 0, until: now + this.windowMs }
      this.windows.set(address, window)
    }
    window.failures++
  }
}
