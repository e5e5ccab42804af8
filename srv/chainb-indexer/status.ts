import cds from '@sap/cds'
import { Blocks, ContractActions, ReorgLog, Transactions } from '#cds-models/chainb'
import type { SyncState as SyncRow } from '#cds-models/chainb'
import type { ChainBPort } from '../chains/chain-b/port.ts'
import { healthThresholds } from './settings.ts'
import { countOf, readSyncState } from './store.ts'

/** What the indexer service answers about the follower: sync status, health, counters, probes. */

const { SELECT } = cds.ql

const seconds = (from?: string | null, to?: string | null) => (from && to ? Math.max(0, Math.round((Date.parse(to) - Date.parse(from)) / 1000)) : null)

/** Blocks the index is behind the tip the follower last saw; null before it has seen one. */
const lagOf = (state?: SyncRow) => (state?.chainHeight === null || state?.chainHeight === undefined ? null : Math.max(0, state.chainHeight - (state.indexedHeight ?? -1)))

export async function syncStatus() {
  const state = await readSyncState()
  return {
    network: state?.network ?? null,
    chainHeight: state?.chainHeight ?? null,
    chainTipAt: state?.chainTipAt ?? null,
    indexedHeight: state?.indexedHeight ?? null,
    indexedHash: state?.indexedHash ?? null,
    indexedAt: state?.indexedAt ?? null,
    finalizedHeight: state?.finalizedHeight ?? null,
    lagBlocks: lagOf(state),
    lagSeconds: seconds(state?.indexedBlockAt, state?.chainTipAt),
    status: state?.status ?? 'unknown',
    lastError: state?.lastError ?? null,
    lastErrorAt: state?.lastErrorAt ?? null,
    consecutiveErrors: state?.consecutiveErrors ?? 0,
  }
}

type HealthStatus = 'healthy' | 'degraded' | 'unhealthy' | 'unknown'

/** healthy up to degradedLag blocks behind, degraded up to unhealthyLag, unhealthy above; unknown before the first run. */
function healthOf(lag: number | null, thresholds = healthThresholds()): HealthStatus {
  if (lag === null) return 'unknown'
  if (lag > thresholds.unhealthyLag) return 'unhealthy'
  if (lag > thresholds.degradedLag) return 'degraded'
  return 'healthy'
}

export async function health(instanceId: string | null) {
  const state = await readSyncState()
  const thresholds = healthThresholds()
  const lag = lagOf(state)
  return {
    status: healthOf(lag, thresholds),
    chainHeight: state?.chainHeight ?? null,
    indexedHeight: state?.indexedHeight ?? null,
    finalizedHeight: state?.finalizedHeight ?? null,
    lag,
    finalizedLag: state?.finalizedHeight === null || state?.finalizedHeight === undefined ? null : Math.max(0, state.finalizedHeight - (state.indexedHeight ?? -1)),
    syncStatus: state?.status ?? 'unknown',
    ...thresholds,
    instanceId,
  }
}

export async function counters() {
  const [blocks, transactions, shieldedTransactions, contractCalls, reorgs] = await Promise.all([
    countOf(Blocks),
    countOf(Transactions),
    countOf(Transactions, { isShielded: true }),
    countOf(ContractActions, { actionType: 'ContractCall' }),
    countOf(ReorgLog, { cause: 'reorg' }),
  ])
  return { blocks, transactions, shieldedTransactions, contractCalls, reorgs }
}

/** The latest reorgs (and reindexes) first; limit clamped to 1..100, default 10. */
export function reorgHistory(limit?: number | null) {
  const top = Math.min(100, Math.max(1, Math.trunc(limit ?? 10)))
  return SELECT.from(ReorgLog).orderBy('detectedAt desc', 'forkHeight desc').limit(top)
}

const STARTED = Date.now()

export function liveness(instanceId: string | null) {
  return { status: 'alive', timestamp: new Date().toISOString(), uptime: Math.round((Date.now() - STARTED) / 1000), instanceId }
}

/** Ready when the database answers, the follower is not failing (or is off here), and the upstream answers. */
export async function readiness(instanceId: string | null, crawlerEnabled: boolean, port?: ChainBPort) {
  const state = await readSyncState().then(row => row ?? null, () => undefined)
  const database = state !== undefined
  const crawler = !crawlerEnabled || (!!state && state.status !== 'error')
  const node = port ? await port.tip().then(() => true, () => false) : false
  return { ready: database && crawler && node, crawlerEnabled, checks: { database, crawler, node }, instanceId }
}
