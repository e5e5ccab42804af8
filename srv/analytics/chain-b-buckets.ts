import cds from '@sap/cds'
import { BucketWriterState, MetricBuckets } from '#cds-models/analytics'
import { Blocks, ContractActions, ReorgLog, SyncState, Transactions } from '#cds-models/chainb'
import { bucketStart } from './windows.ts'

const { SELECT, INSERT, DELETE, UPSERT } = cds.ql

/**
 * Folds chain B's index (what its follower read: srv/chainb-indexer) into hourly and daily metric
 * buckets. Each run recomputes, in one transaction, every hour from the earliest one that can have
 * changed: the hour of the first block not folded yet, of the oldest bucket not yet final, or of
 * a reorg's fork since the last run. Daily buckets are the sums of their hours. A bucket is final
 * once every block it covers is (the follower's finalized height).
 */

const CHAIN = 'chain-b'
const HOUR = 3_600_000

/** The additive metrics of one hour, from its blocks, transactions and contract actions. */
export interface HourFigures {
  [metric: string]: { value: number; count: number; min?: number; max?: number }
}

interface BlockRow { hash: string; height: number; timestamp: string }
interface TransactionRow { blockHeight: number; hash: string; transactionType: string; status: string | null; paidFees: string | null; isShielded: boolean | null }
interface ActionRow { blockHeight: number; transaction_hash: string; actionType: string }

const time = (value: string | Date | null | undefined) => (value ? new Date(value).getTime() : NaN)

/** Folds what changed since the last run; answers the hours recomputed. */
export async function foldChainB(now = Date.now()): Promise<number> {
  return cds.tx(async () => {
    const sync = await SELECT.one.from(SyncState).where({ ID: CHAIN })
    if (!sync?.indexedHeight) return 0
    const network = sync.network ?? 'devnet'
    const state = await SELECT.one.from(BucketWriterState).where({ chain: CHAIN })
    const from = await firstHourToFold(state ?? undefined, network)
    if (from === undefined) return 0
    const finalizedAt = await blockTime(sync.finalizedHeight)
    const hours = await figuresByHour(from)
    const computedAt = new Date(now).toISOString()
    const common = { chain: CHAIN, network, dimension: '', sourceTipHeight: sync.indexedHeight, computedAt }
    await DELETE.from(MetricBuckets).where({ chain: CHAIN, network, resolution: 'hour', bucketStart: { '>=': new Date(from).toISOString() } })
    const hourly = [...hours].flatMap(([start, figures]) => rows(figures, { ...common, resolution: 'hour', bucketStart: start, final: isFinal(start + HOUR, finalizedAt) }))
    if (hourly.length) await INSERT.into(MetricBuckets).entries(hourly)
    await foldDays(bucketStart(from, 'day'), { ...common }, finalizedAt)
    const lastReorg = await SELECT.one.from(ReorgLog).columns('max(detectedAt) as at') as { at?: string | null } | undefined
    await UPSERT.into(BucketWriterState).entries({ chain: CHAIN, network, foldedHeight: sync.indexedHeight, foldedAt: computedAt, lastReorgAt: lastReorg?.at ?? state?.lastReorgAt ?? null })
    return hours.size
  })
}

/** The earliest hour that can have changed since the last run, or undefined when nothing did. */
async function firstHourToFold(state: { foldedHeight?: number | string | null; lastReorgAt?: string | null } | undefined, network: string): Promise<number | undefined> {
  const folded = Number(state?.foldedHeight ?? 0)
  const candidates: number[] = []
  const reorgs = await SELECT.from(ReorgLog).columns('forkHeight').where(state?.lastReorgAt ? { detectedAt: { '>': state.lastReorgAt } } : {})
  // A reorg replaced the blocks from its fork: from the last block before it on.
  const fork = Math.min(folded + 1, ...reorgs.map(reorg => Number(reorg.forkHeight)))
  const first = await SELECT.one.from(Blocks).columns('timestamp').where({ height: { '>=': Math.max(0, fork - 1) } }).orderBy('height')
  if (first?.timestamp) candidates.push(bucketStart(time(first.timestamp), 'hour'))
  const provisional = await SELECT.one.from(MetricBuckets).columns('min(bucketStart) as start').where({ chain: CHAIN, network, resolution: 'hour', final: false }) as { start?: string | null } | undefined
  if (provisional?.start) candidates.push(time(provisional.start))
  return candidates.length ? Math.min(...candidates) : undefined
}

async function blockTime(height: number | null | undefined): Promise<number> {
  if (height === null || height === undefined) return -Infinity
  const block = await SELECT.one.from(Blocks).columns('timestamp').where({ height })
  return block?.timestamp ? time(block.timestamp) : -Infinity
}

const isFinal = (end: number, finalizedAt: number) => end <= finalizedAt

/** Every hour from `from` that has blocks, with its figures. */
async function figuresByHour(from: number): Promise<Map<number, HourFigures>> {
  const blocks = await SELECT.from(Blocks).columns('hash', 'height', 'timestamp').where({ timestamp: { '>=': new Date(from).toISOString() } }) as BlockRow[]
  if (!blocks.length) return new Map()
  const lowest = Math.min(...blocks.map(block => block.height))
  const transactions = await SELECT.from(Transactions).columns('blockHeight', 'hash', 'transactionType', 'status', 'paidFees', 'isShielded').where({ blockHeight: { '>=': lowest } }) as TransactionRow[]
  const actions = await SELECT.from(ContractActions).columns('blockHeight', 'transaction_hash', 'actionType').where({ blockHeight: { '>=': lowest } }) as ActionRow[]
  return hourFigures(blocks, transactions, actions)
}

/** The figures per hour (pure: the test checks it against hand-counted histories through foldChainB). */
export function hourFigures(blocks: BlockRow[], transactions: TransactionRow[], actions: ActionRow[]): Map<number, HourFigures> {
  const hourOfHeight = new Map(blocks.map(block => [block.height, bucketStart(time(block.timestamp), 'hour')]))
  const hours = new Map<number, HourFigures>()
  const figures = (hour: number) => {
    let entry = hours.get(hour)
    if (!entry) hours.set(hour, (entry = {}))
    return entry
  }
  const add = (hour: number, metric: string, amount = 1) => {
    const figure = (figures(hour)[metric] ??= { value: 0, count: 0 })
    figure.value += amount
    figure.count += 1
    if (metric === 'fee.total') {
      figure.min = Math.min(figure.min ?? amount, amount)
      figure.max = Math.max(figure.max ?? amount, amount)
    }
  }
  for (const block of blocks) add(hourOfHeight.get(block.height)!, 'chain.blocks')
  const scripted = new Set(actions.map(action => action.transaction_hash))
  for (const tx of transactions) {
    const hour = hourOfHeight.get(tx.blockHeight)
    if (hour === undefined) continue
    if (tx.transactionType === 'system') {
      add(hour, 'tx.system')
      continue
    }
    add(hour, 'tx.count')
    if (tx.status === 'FAILURE' || tx.status === 'PARTIAL_SUCCESS') add(hour, 'tx.failed')
    if (tx.isShielded) add(hour, 'tx.shielded')
    if (scripted.has(tx.hash)) add(hour, 'tx.script')
    if (tx.paidFees !== null && tx.paidFees !== undefined) add(hour, 'fee.total', Number(tx.paidFees))
  }
  for (const action of actions) {
    const hour = hourOfHeight.get(action.blockHeight)
    if (hour === undefined) continue
    if (action.actionType === 'ContractCall') add(hour, 'contract.calls')
    if (action.actionType === 'ContractDeploy') add(hour, 'contract.deploys')
  }
  return hours
}

function rows(figures: HourFigures, bucket: Record<string, unknown>) {
  return Object.entries(figures).map(([metric, figure]) => ({
    ...bucket, metric, bucketStart: new Date(bucket.bucketStart as number).toISOString(),
    value: String(figure.value), count: figure.count, sum: String(figure.value),
    min: figure.min === undefined ? null : String(figure.min), max: figure.max === undefined ? null : String(figure.max),
  }))
}

/** Daily buckets from `fromDay`: each metric's hours summed; final when its last hour is. */
async function foldDays(fromDay: number, common: Record<string, unknown>, finalizedAt: number) {
  const { chain, network } = common as { chain: string; network: string }
  const hourly = await SELECT.from(MetricBuckets).columns('metric', 'bucketStart', 'value', 'count', 'min', 'max')
    .where({ chain, network, resolution: 'hour', bucketStart: { '>=': new Date(fromDay).toISOString() } })
  const days = new Map<string, HourFigures[string] & { day: number; metric: string }>()
  for (const hour of hourly) {
    const day = bucketStart(time(hour.bucketStart), 'day')
    const key = `${day}|${hour.metric}`
    const figure = days.get(key) ?? { day, metric: hour.metric!, value: 0, count: 0 }
    figure.value += Number(hour.value)
    figure.count += Number(hour.count)
    if (hour.min !== null && hour.min !== undefined) figure.min = Math.min(figure.min ?? Number(hour.min), Number(hour.min))
    if (hour.max !== null && hour.max !== undefined) figure.max = Math.max(figure.max ?? Number(hour.max), Number(hour.max))
    days.set(key, figure)
  }
  await DELETE.from(MetricBuckets).where({ chain, network, resolution: 'day', bucketStart: { '>=': new Date(fromDay).toISOString() } })
  const entries = [...days.values()].flatMap(({ day, metric, ...figure }) =>
    rows({ [metric]: figure }, { ...common, resolution: 'day', bucketStart: day, final: isFinal(day + 24 * HOUR, finalizedAt) }))
  if (entries.length) await INSERT.into(MetricBuckets).entries(entries)
}
