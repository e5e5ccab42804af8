import { LRUCache } from 'lru-cache'

/**
 * Token buckets by key (an API key's id, a client address): `rate` tokens per second up to
 * `burst`, for all instances together. Each instance keeps its buckets in memory and enforces its
 * share of the limit, rate/N and burst/N (at least one call), N being the instances serving now
 * (srv/gateway/instances.ts counts them): the hot path costs no database round trip. A bounded LRU
 * map: when full, the least recently seen buckets go, never all of them, so cycling through many
 * keys cannot wipe anyone else's limit.
 */

export const DEFAULT_CAPACITY = 100_000

let instances = 1
/** The instances serving now, among which every limit is shared (at least this one). */
export const liveInstances = () => instances
export function shareLimitsAmong(count: number) {
  instances = Math.max(1, Math.floor(count) || 1)
}

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

  /** Takes one token from this instance's share of the bucket; answers the seconds to wait when none is left. */
  take(key: string, rate: number, burst: number, now = Date.now(), share = liveInstances()): { ok: true } | { ok: false; retryAfterS: number } {
    rate /= share
    burst = Math.max(1, burst / share)
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
