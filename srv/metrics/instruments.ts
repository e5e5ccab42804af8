import { Counter, Gauge, Histogram, Registry } from 'prom-client'

/**
 * The process's metrics (docs/operations.md#metrics), in one registry of their own that /metrics exposes.
 * Every name starts with `cag_`; every label takes values from a small fixed set (a route family,
 * a status class, a chain, an outcome, a route class, a circuit), never a key id, an address or a
 * path as sent. The code that does the work records here; the values read from the database are
 * collected at scrape (collectors.ts). This module imports nothing of the application, so any
 * part may record without import cycles.
 */

export const registry = new Registry()

export const PREFIX = 'cag_'

const SECONDS_FAST = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
const SECONDS_PROOF = [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 80, 160]

// HTTP requests, by the route family (route-family.ts) and the status class of the answer.
export const httpRequests = new Counter({
  name: `${PREFIX}http_requests_total`,
  help: 'HTTP requests answered, by route family, method and status class (aborted: closed before the answer was complete)',
  labelNames: ['family', 'method', 'status'] as const,
  registers: [registry],
})

export const httpDuration = new Histogram({
  name: `${PREFIX}http_request_duration_seconds`,
  help: 'Time from a request\'s arrival to the end of its answer, by route family',
  labelNames: ['family'] as const,
  buckets: SECONDS_FAST,
  registers: [registry],
})

// Units on the hosted gateway (srv/gateway/metering.ts).
export type RefundReason = 'error' | 'replay' | 'timeout' | 'shutdown' | 'job'

export const unitsCharged = new Counter({
  name: `${PREFIX}units_charged_total`,
  help: 'Units of metered calls that were charged (committed), by route class',
  labelNames: ['route_class'] as const,
  registers: [registry],
})

export const unitsRefunded = new Counter({
  name: `${PREFIX}units_refunded_total`,
  help: 'Units given back, by route class and reason: error (answered 4xx/5xx), replay (idempotent repeat), timeout (504), job (a queued job failed later)',
  labelNames: ['route_class', 'reason'] as const,
  registers: [registry],
})

export const reservationsVoided = new Counter({
  name: `${PREFIX}reservations_voided_total`,
  help: 'Reservations the sweeper voided (refunded) because they stayed pending too long',
  registers: [registry],
})

export const recordCharge = (routeClass: string, units: number) => unitsCharged.inc({ route_class: routeClass }, units)
export const recordRefund = (routeClass: string, reason: RefundReason, units: number) => unitsRefunded.inc({ route_class: routeClass, reason }, units)

// Upstream calls of the chain adapters (chain-a/blockfrost.ts, chain-b/indexer-client.ts).
export type UpstreamChain = 'chain-a' | 'chain-b'
export type UpstreamOutcome = 'ok' | 'not_found' | 'rejected' | 'rate_limited' | 'failed' | 'timeout' | 'unreachable'

export const upstreamCalls = new Counter({
  name: `${PREFIX}upstream_requests_total`,
  help: 'Calls to a chain\'s upstream, by chain and outcome (ok, not_found, rejected, rate_limited, failed, timeout, unreachable)',
  labelNames: ['chain', 'outcome'] as const,
  registers: [registry],
})

export const upstreamDuration = new Histogram({
  name: `${PREFIX}upstream_request_duration_seconds`,
  help: 'Time a call to a chain\'s upstream took, answered or not, by chain',
  labelNames: ['chain'] as const,
  buckets: SECONDS_FAST,
  registers: [registry],
})

/** The outcome of an HTTP status an upstream answered. */
export function outcomeOfStatus(status: number): UpstreamOutcome {
  if (status < 400) return 'ok'
  if (status === 404) return 'not_found'
  if (status === 429 || status === 402 || status === 418) return 'rate_limited'
  return status < 500 ? 'rejected' : 'failed'
}

/** The outcome of what an upstream call threw: an HTTP status it carries, else a time-out or an unreachable upstream. */
export function outcomeOfError(error: unknown): UpstreamOutcome {
  const failure = (error ?? {}) as { status_code?: unknown; name?: unknown; code?: unknown }
  if (typeof failure.status_code === 'number') return outcomeOfStatus(failure.status_code)
  if (failure.name === 'TimeoutError' || failure.code === 'ETIMEDOUT') return 'timeout'
  return 'unreachable'
}

/**
 * Runs one upstream call and records it: its time, and its outcome (from the answer's status when
 * `statusOf` reads one off the value, else ok; from what it threw otherwise).
 */
export async function observeUpstream<T>(chain: UpstreamChain, call: () => Promise<T>, statusOf?: (value: T) => number): Promise<T> {
  const stop = upstreamDuration.startTimer({ chain })
  try {
    const value = await call()
    upstreamCalls.inc({ chain, outcome: statusOf ? outcomeOfStatus(statusOf(value)) : 'ok' })
    return value
  } catch (error) {
    upstreamCalls.inc({ chain, outcome: outcomeOfError(error) })
    throw error
  } finally {
    stop()
  }
}

// The chain-A read index (srv/chaina-odata/indexer-core.ts): a read found fresh rows, or asked the upstream.
export const indexLookups = new Counter({
  name: `${PREFIX}chain_a_index_lookups_total`,
  help: 'Chain-A read index lookups, by kind of data and result (hit: fresh rows in the database; miss: the upstream is asked)',
  labelNames: ['kind', 'result'] as const,
  registers: [registry],
})

export const recordIndexLookups = (kind: string, hits: number, misses: number) => {
  if (hits) indexLookups.inc({ kind, result: 'hit' }, hits)
  if (misses) indexLookups.inc({ kind, result: 'miss' }, misses)
}

// The chain-B prover pool (srv/chains/chain-b/zk/prover.ts).
export const proverClaims = new Gauge({
  name: `${PREFIX}prover_claims`,
  help: 'Claims in the prover pool: waiting for a thread, or proving',
  labelNames: ['state'] as const,
  registers: [registry],
})
proverClaims.set({ state: 'waiting' }, 0)
proverClaims.set({ state: 'proving' }, 0)

export const proofDuration = new Histogram({
  name: `${PREFIX}proof_duration_seconds`,
  help: 'Time a proving thread took for one claim, by circuit and outcome (proved, refused: the witness does not satisfy the circuit, failed: the thread was lost)',
  labelNames: ['circuit', 'outcome'] as const,
  buckets: SECONDS_PROOF,
  registers: [registry],
})

// Values read at scrape (collectors.ts).
export const followerLagBlocks = new Gauge({
  name: `${PREFIX}follower_lag_blocks`,
  help: 'Blocks between the chain\'s tip as the follower last saw it and the last block it indexed, by chain',
  labelNames: ['chain'] as const,
  registers: [registry],
})

export const followerLagSeconds = new Gauge({
  name: `${PREFIX}follower_lag_seconds`,
  help: 'Seconds between the time of the chain\'s tip as the follower last saw it and that of the last block it indexed, by chain',
  labelNames: ['chain'] as const,
  registers: [registry],
})

export const chainBJobs = new Gauge({
  name: `${PREFIX}chain_b_jobs`,
  help: 'Chain-B jobs not finished, across instances, by status (queued, running, submitted)',
  labelNames: ['status'] as const,
  registers: [registry],
})

export const dbPoolConnections = new Gauge({
  name: `${PREFIX}db_pool_connections`,
  help: 'Database connections of this instance\'s pool, by state (open, available, borrowed)',
  labelNames: ['state'] as const,
  registers: [registry],
})

export const dbPoolWaiting = new Gauge({
  name: `${PREFIX}db_pool_waiting`,
  help: 'Requests waiting for a database connection in this instance',
  registers: [registry],
})

export const dbPoolMax = new Gauge({
  name: `${PREFIX}db_pool_max_connections`,
  help: 'The most connections this instance\'s pool opens',
  registers: [registry],
})

export const collectorUp = new Gauge({
  name: `${PREFIX}metrics_collector_up`,
  help: 'Whether a value read at scrape could be read this time (1) or not, within its time-out (0); its metrics are then left out',
  labelNames: ['collector'] as const,
  registers: [registry],
})
