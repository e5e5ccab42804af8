import cds from '@sap/cds'
import { SyncState as ChainASyncState } from '#cds-models/chaina'
import { Job, Jobs, SyncState as ChainBSyncState } from '#cds-models/chainb'
import { chainA } from '../chains/chain-a/index.ts'
import { chainAEnabled } from '../chains/chain-a/config.ts'
import { chainB } from '../chains/chain-b/index.ts'
import { chainBEnabled } from '../chains/chain-b/config.ts'
import { followerSettings } from '../chaina-odata/follower-settings.ts'
import { indexerSettings } from '../chainb-indexer/settings.ts'
import { jobSettings } from '../chainb/jobs/config.ts'
import type { HealthSettings } from './settings.ts'
import { failureReason, withinTime } from './timeouts.ts'
import { publishWebhookEventSoon } from '../lib/webhooks.ts'

/**
 * The parts the readiness probe checks, each on its own and within its own time: the database, each
 * chain (its upstream, and the follower's row), the chain-B job queue and the prover pool. A check
 * never throws: what fails is in its answer, with a reason safe to show anyone.
 */

const { SELECT } = cds.ql

/**
 * UP: works. DOWN: does not (the database, an upstream). DEGRADED: works, but behind or saturated
 * (reported, never unready). DISABLED: turned off in this deployment. UNKNOWN: could not be read
 * (the database did not answer: its own check says so).
 */
export type CheckStatus = 'UP' | 'DOWN' | 'DEGRADED' | 'DISABLED' | 'UNKNOWN'

export interface Check {
  status: CheckStatus
  reason?: string
  [detail: string]: unknown
}

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString())
const millisOf = (value: unknown): number | undefined => {
  if (value === null || value === undefined) return undefined
  const ms = new Date(value as string).getTime()
  return Number.isFinite(ms) ? ms : undefined
}

/** A trivial query within the time-out. */
export async function checkDatabase(settings: HealthSettings): Promise<Check> {
  if (!cds.db) return { status: 'DOWN', reason: 'not connected' }
  try {
    await withinTime(cds.db.run('SELECT 1 AS up'), settings.databaseTimeoutMs)
    return { status: 'UP' }
  } catch (error) {
    return { status: 'DOWN', reason: failureReason(error) }
  }
}

/**
 * Whether a chain's upstream answers its tip. A success counts for upstreamIntervalMs (the probe
 * does not spend a hosted upstream's quota); a failure is asked again at the next check.
 */
export class UpstreamWatch {
  private lastSuccessAt?: number
  private last?: { at: number; ok: boolean; reason?: string }

  private readonly tip: () => Promise<unknown>
  private readonly chain: string

  constructor(chain: string, tip: () => Promise<unknown>) {
    this.chain = chain
    this.tip = tip
  }

  async check(settings: HealthSettings): Promise<Check> {
    const now = Date.now()
    if (!this.last?.ok || now - this.last.at >= settings.upstreamIntervalMs) this.noticed(this.last, (this.last = await this.ask(settings)))
    const { ok, at, reason } = this.last
    return { status: ok ? 'UP' : 'DOWN', ...(reason ? { reason } : {}), checkedAt: iso(at), lastSuccessAt: iso(this.lastSuccessAt) }
  }

  /** Webhooks hear when this instance finds the upstream down, and when it answers again (each instance tells what it saw). */
  private noticed(before: { ok: boolean } | undefined, now: { ok: boolean; reason?: string; at: number }) {
    if ((before?.ok ?? true) === now.ok) return
    publishWebhookEventSoon(now.ok ? 'upstream.recovered' : 'upstream.down', { chain: this.chain, ...(now.reason ? { reason: now.reason } : {}), checkedAt: iso(now.at) })
  }

  private async ask(settings: HealthSettings) {
    const at = Date.now()
    try {
      await withinTime(this.tip(), settings.upstreamTimeoutMs)
      this.lastSuccessAt = Date.now()
      return { at, ok: true }
    } catch (error) {
      return { at, ok: false, reason: `its tip ${failureReason(error)}` }
    }
  }
}

interface SyncRow {
  network?: string | null
  chainHeight?: number | null
  chainTipAt?: string | null
  indexedHeight?: number | null
  indexedAt?: string | null
  indexedBlockAt?: string | null
  status?: string | null
  consecutiveErrors?: number | null
  lastErrorAt?: string | null
  paused?: boolean | null
  leaseExpiresAt?: string | null
}

const SYNC_COLUMNS = ['network', 'chainHeight', 'chainTipAt', 'indexedHeight', 'indexedAt', 'indexedBlockAt', 'status', 'consecutiveErrors', 'lastErrorAt', 'paused', 'leaseExpiresAt']

/**
 * Where the chain's follower stands, from its SyncState row (one for all instances): the tip the
 * lease holder last saw, the block indexed, the lag between them. Behind by more than maxLagBlocks,
 * or failing, it is DEGRADED: the lag is the same for every instance, so it never makes one unready.
 */
async function checkFollower(entity: typeof ChainASyncState | typeof ChainBSyncState, runsHere: boolean, settings: HealthSettings): Promise<Check> {
  let row: SyncRow | undefined
  try {
    row = (await withinTime(cds.db.run(SELECT.one.from(entity).columns(...SYNC_COLUMNS)), settings.databaseTimeoutMs)) as SyncRow | undefined
  } catch (error) {
    return { status: 'UNKNOWN', reason: `its state could not be read: ${failureReason(error)}`, runsHere }
  }
  if (!row) return { status: 'UP', state: 'not started', runsHere }
  const lagBlocks = row.chainHeight === null || row.chainHeight === undefined ? null : Math.max(0, row.chainHeight - (row.indexedHeight ?? -1))
  const tipAt = millisOf(row.chainTipAt)
  const indexedBlockAt = millisOf(row.indexedBlockAt)
  const details = {
    state: row.paused ? 'paused' : (row.status ?? 'unknown'),
    runsHere,
    followed: (millisOf(row.leaseExpiresAt) ?? 0) > Date.now(),
    network: row.network ?? null,
    chainHeight: row.chainHeight ?? null,
    indexedHeight: row.indexedHeight ?? null,
    lagBlocks,
    lagSeconds: tipAt !== undefined && indexedBlockAt !== undefined ? Math.max(0, Math.round((tipAt - indexedBlockAt) / 1000)) : null,
    indexedAt: row.indexedAt ?? null,
    consecutiveErrors: row.consecutiveErrors ?? 0,
    lastErrorAt: row.lastErrorAt ?? null,
  }
  if (row.status === 'error' && !row.paused) return { status: 'DEGRADED', reason: `the follower failed ${details.consecutiveErrors} time(s) in a row`, ...details }
  if (lagBlocks !== null && lagBlocks > settings.maxLagBlocks) return { status: 'DEGRADED', reason: `the follower is ${lagBlocks} blocks behind the tip (more than ${settings.maxLagBlocks})`, ...details }
  return { status: 'UP', ...details }
}

/** A chain: DISABLED when turned off; DOWN when its upstream does not answer; DEGRADED when its follower is behind or failing. */
async function checkChain(enabled: boolean, upstream: UpstreamWatch, follower: () => Promise<Check>, settings: HealthSettings): Promise<Check> {
  if (!enabled) return { status: 'DISABLED' }
  const [upstreamCheck, followerCheck] = await Promise.all([upstream.check(settings), follower()])
  if (upstreamCheck.status === 'DOWN') return { status: 'DOWN', reason: `upstream: ${upstreamCheck.reason}`, upstream: upstreamCheck, follower: followerCheck }
  if (followerCheck.status === 'DEGRADED') return { status: 'DEGRADED', reason: `follower: ${followerCheck.reason}`, upstream: upstreamCheck, follower: followerCheck }
  return { status: 'UP', upstream: upstreamCheck, follower: followerCheck }
}

const chainAUpstream = new UpstreamWatch('chain-a', async () => (await chainA()).port.tip())
const chainBUpstream = new UpstreamWatch('chain-b', async () => (await chainB()).port.tip())

export const checkChainA = (settings: HealthSettings) =>
  checkChain(chainAEnabled(), chainAUpstream, () => checkFollower(ChainASyncState, followerSettings().enabled, settings), settings)

export const checkChainB = (settings: HealthSettings) =>
  checkChain(chainBEnabled(), chainBUpstream, () => checkFollower(ChainBSyncState, indexerSettings().enabled, settings), settings)

const OPEN = [Job.status.queued, Job.status.running, Job.status.submitted]

/**
 * The chain-B job queue (one for all instances): jobs queued, running and submitted, and how long
 * the oldest queued one has waited; DEGRADED when that is longer than maxQueueAgeS.
 */
export async function checkJobQueue(settings: HealthSettings): Promise<Check> {
  if (!chainBEnabled()) return { status: 'DISABLED' }
  const runsHere = jobSettings().enabled
  let rows: { status: string; jobs: number | string; oldest: unknown }[]
  try {
    const query = SELECT.from(Jobs).columns('status', 'count(1) as jobs', 'min(queuedAt) as oldest').where({ status: { in: OPEN } }).groupBy('status')
    rows = (await withinTime(cds.db.run(query), settings.databaseTimeoutMs)) as typeof rows
  } catch (error) {
    return { status: 'UNKNOWN', reason: `the queue could not be read: ${failureReason(error)}`, runsHere }
  }
  const countOf = (status: string) => Number(rows.find(row => row.status === status)?.jobs ?? 0)
  const oldest = millisOf(rows.find(row => row.status === Job.status.queued)?.oldest)
  const oldestQueuedSeconds = oldest === undefined ? null : Math.max(0, Math.round((Date.now() - oldest) / 1000))
  const details = { runsHere, queued: countOf(Job.status.queued), running: countOf(Job.status.running), submitted: countOf(Job.status.submitted), oldestQueuedSeconds }
  if (oldestQueuedSeconds !== null && oldestQueuedSeconds > settings.maxQueueAgeS)
    return { status: 'DEGRADED', reason: `a job has been queued for ${oldestQueuedSeconds} s (more than ${settings.maxQueueAgeS})`, ...details }
  return { status: 'UP', ...details }
}

/** This instance's prover pool: threads busy of its size, claims waiting; DEGRADED when every thread is busy and claims wait. */
export async function checkProvers(): Promise<Check> {
  if (!chainBEnabled()) return { status: 'DISABLED' }
  const { busy, waiting, size } = (await chainB()).zk.prover.usage
  if (busy >= size && waiting > 0) return { status: 'DEGRADED', reason: `all ${size} proving threads are busy and ${waiting} claim(s) wait`, busy, waiting, size }
  return { status: 'UP', busy, waiting, size }
}
