import cds from '@sap/cds'
import { SyncState_ as ChainASyncState } from '#cds-models/chaina'
import { Job, Jobs, SyncState_ as ChainBSyncState } from '#cds-models/chainb'
import { chainBJobs, collectorUp, dbPoolConnections, dbPoolMax, dbPoolWaiting, followerLagBlocks, followerLagSeconds } from './instruments.ts'

/**
 * The values a scrape reads when it happens: the followers' lag (their SyncState rows), the chain-B
 * jobs not finished (a count by status, on the index over status), and this instance's database
 * pool. Each collector has the scrape's time-out; one that fails or does not finish in time is
 * reported as down (`cag_metrics_collector_up` 0) and its metrics are left out, so a scrape answers
 * what is known whatever the database does. Concurrent scrapes share one collection.
 */

const { SELECT } = cds.ql

export interface Collector {
  name: string
  /** Reads the values; answers what sets the metrics to them (applied only when read in time). */
  read: () => Promise<Apply> | Apply
  /** Empties the metrics when the values could not be read. */
  leaveOut: () => void
}

type Apply = () => void

const OPEN_STATUSES = [Job.status.queued, Job.status.running, Job.status.submitted]

interface LagRow {
  chainHeight?: number | null
  indexedHeight?: number | null
  chainTipAt?: string | null
  indexedBlockAt?: string | null
}

const LAG_COLUMNS = ['chainHeight', 'indexedHeight', 'chainTipAt', 'indexedBlockAt']

function setLag(chain: string, row: LagRow | undefined) {
  if (!row) return
  if (row.chainHeight != null && row.indexedHeight != null) followerLagBlocks.set({ chain }, Math.max(0, row.chainHeight - row.indexedHeight))
  const tipAt = Date.parse(row.chainTipAt ?? '')
  const indexedAt = Date.parse(row.indexedBlockAt ?? '')
  if (Number.isFinite(tipAt) && Number.isFinite(indexedAt)) followerLagSeconds.set({ chain }, Math.max(0, (tipAt - indexedAt) / 1000))
}

const followerLag: Collector = {
  name: 'follower_lag',
  async read() {
    const [chainA, chainB] = await Promise.all([
      SELECT.one.from(ChainASyncState).columns(...LAG_COLUMNS) as unknown as Promise<LagRow | undefined>,
      SELECT.one.from(ChainBSyncState).columns(...LAG_COLUMNS) as unknown as Promise<LagRow | undefined>,
    ])
    return () => {
      resetLag()
      setLag('chain-a', chainA)
      setLag('chain-b', chainB)
    }
  },
  leaveOut: () => resetLag(),
}

function resetLag() {
  followerLagBlocks.reset()
  followerLagSeconds.reset()
}

const jobQueue: Collector = {
  name: 'job_queue',
  async read() {
    const rows = (await SELECT.from(Jobs).columns('status', 'count(1) as count').where({ status: { in: OPEN_STATUSES } }).groupBy('status')) as unknown as { status: string; count: number | string }[]
    return () => {
      for (const status of OPEN_STATUSES) chainBJobs.set({ status }, Number(rows.find(row => row.status === status)?.count ?? 0))
    }
  },
  leaveOut: () => chainBJobs.reset(),
}

/** What this instance's pools tell (CAP's pool and generic-pool both have these); none before the database is connected. */
interface Pool {
  size?: number
  available?: number
  borrowed?: number
  pending?: number
  max?: number
  options?: { max?: number }
}

const databasePool: Collector = {
  name: 'db_pool',
  read() {
    const pools = Object.values(((cds.db as unknown as { pools?: Record<string, Pool> } | undefined)?.pools) ?? {})
    const sum = (value: (pool: Pool) => number | undefined) => pools.reduce((total, pool) => total + (Number(value(pool)) || 0), 0)
    return () => {
      dbPoolConnections.set({ state: 'open' }, sum(pool => pool.size))
      dbPoolConnections.set({ state: 'available' }, sum(pool => pool.available))
      dbPoolConnections.set({ state: 'borrowed' }, sum(pool => pool.borrowed))
      dbPoolWaiting.set(sum(pool => pool.pending))
      dbPoolMax.set(sum(pool => pool.max ?? pool.options?.max))
    }
  },
  leaveOut() {
    dbPoolConnections.reset()
    dbPoolWaiting.reset()
    dbPoolMax.reset()
  },
}

export const COLLECTORS: readonly Collector[] = [followerLag, jobQueue, databasePool]

/** Runs the collectors side by side, each for `timeoutMs` at most; never throws. A value read too late is dropped. */
export async function collectAll(collectors: readonly Collector[], timeoutMs: number): Promise<void> {
  await Promise.all(collectors.map(async collector => {
    const apply = await withinTime(collector, timeoutMs)
    if (apply) apply()
    else collector.leaveOut()
    collectorUp.set({ collector: collector.name }, apply ? 1 : 0)
  }))
}

async function withinTime(collector: Collector, timeoutMs: number): Promise<Apply | undefined> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<undefined>(resolve => {
    timer = setTimeout(() => resolve(undefined), timeoutMs)
    timer.unref()
  })
  const read = (async () => collector.read())().catch(error => {
    cds.log('metrics').debug(`${collector.name} could not be read at scrape:`, (error as Error)?.message ?? error)
    return undefined
  })
  try {
    return await Promise.race([read, late])
  } finally {
    clearTimeout(timer)
  }
}

let collecting: Promise<void> | undefined

/** One collection at a time: a scrape during another's waits for that one. */
export function collectAtScrape(timeoutMs: number): Promise<void> {
  collecting ??= collectAll(COLLECTORS, timeoutMs).finally(() => {
    collecting = undefined
  })
  return collecting
}
