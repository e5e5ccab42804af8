import { LRUCache } from 'lru-cache'

/**
 * Token buckets by key (an API key's id, a client address): `rate` tokens per second up to
 * `burst`. A bounded LRU map: when full, the least recently seen buckets go, never all of them,
 * so cycling through many keys cannot wipe anyone else's limit. Per process.
 */

export const DEFAULT_CAPACITY = 100_000

interface Bucket {
  tokens: number
  at: number
}

export class TokenBuckets {
  private readonly buckets: LRUCache<string, Bucket>

  constructor(capacity = DEFAULT_CAPACITY) {
    // A bucket left alone this long is full again; forgetting it changes nothing.
    this.buckets = new LRUCache({ max: capacity, ttl: 600_000 })
  }

  /** Takes one token; answers the seconds to wait when none is left. */
  take(key: string, rate: number, burst: number, now = Date.now()): { ok: true } | { ok: false; retryAfterS: number } {
    const bucket = this.buckets.get(key) ?? { tokens: burst, at: now }
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * rate)
    bucket.at = now
    this.buckets.set(key, bucket)
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1
      return { ok: true }
    }
    return { ok: false, retryAfterS: Math.max(1, Math.ceil((1 - bucket.tokens) / rate)) }
  }
}
