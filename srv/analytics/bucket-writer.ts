import cds from '@sap/cds'
import { BucketWriterState, EpochSnapshots, MetricBuckets } from '#cds-models/analytics'
import { Pools } from '#cds-models/chaina'
import { foldActivity, splitKey, type BlockItem, type BucketFigures, type Figure } from './activity.ts'
import { chainASource } from './chain-a-source.ts'
import { chainBSource } from './chain-b-source.ts'
import { iso, time, type ChainSource } from './sources.ts'
import { bucketStart } from './windows.ts'

const { SELECT, INSERT, DELETE, UPDATE, UPSERT } = cds.ql

/**
 * Folds each chain's index into hourly and daily metric buckets and per-epoch snapshots. Each run
 * recomputes, in one transaction per chain, every hour from the earliest one that can have
 * changed: the hour of the first block not folded yet, of the oldest bucket not yet final, or of a
 * reorg's fork since the last run. Daily buckets are the sums of their hours. A bucket is final
 * once every block it covers is (the follower's finalized height). A run first locks its chain's
 * writer row, so runs in several instances take turns, each starting from what the last one wrote.
 */

export const SOURCES: readonly ChainSource[] = [chainASource, chainBSource]
const HOUR = 3_600_000
const DAY = 24 * HOUR

export interface FoldOutcome { chain: string; hours: number; foldedHeight: number | null }

/** Folds both chains; answers what each run recomputed. */
export async function foldAll(now = Date.now(), options: { from?: number } = {}): Promise<FoldOutcome[]> {
  const outcomes: FoldOutcome[] = []
  for (const source of SOURCES) outcomes.push(await foldChain(source, now, options))
  return outcomes
}

/** Folds what changed on one chain since the last run (or everything from `options.from`, a rebuild). */
export async function foldChain(source: ChainSource, now = Date.now(), options: { from?: number } = {}): Promise<FoldOutcome> {
  return cds.tx(async () => {
    const position = await source.position()
    if (!position) return { chain: source.chain, hours: 0, foldedHeight: null }
    const { network } = position
    const state = await lockedState(source.chain, network)
    // The index is behind what was folded: a new chain (a devnet reset, another network). Everything again.
    const rewound = position.indexedHeight < Number(state.foldedHeight ?? 0)
    if (rewound) await DELETE.from(EpochSnapshots).where({ chain: source.chain })
    const from = rewound ? 0 : options.from ?? await firstHourToFold(source, network, state)
    if (from === undefined) return { chain: source.chain, hours: 0, foldedHeight: position.indexedHeight }
    const finalizedAt = position.finalizedHeight === null ? -Infinity : (await source.blockTime(position.finalizedHeight)) ?? -Infinity
    const activity = await source.activity(from)
    const hours = foldActivity(activity, 'hour')
    const common = { chain: source.chain, network, sourceTipHeight: position.indexedHeight, computedAt: iso(now) }
    await DELETE.from(MetricBuckets).where({ chain: source.chain, network, resolution: 'hour', bucketStart: { '>=': iso(from) } })
    await insertBuckets(hours, { ...common, resolution: 'hour' }, start => start + HOUR <= finalizedAt)
    await foldDays(bucketStart(from, 'day'), common, finalizedAt)
    await snapshotProducers(source, network, activity.blocks, common.computedAt, finalizedAt)
    if (source.chain === 'chain-a') await snapshotStake(network, position.epoch, common.computedAt)
    const reorgs = await source.reorgsSince(null)
    const lastReorgAt = reorgs.reduce<string | null>((latest, reorg) => (latest && latest > reorg.detectedAt ? latest : reorg.detectedAt), null)
    await UPDATE.entity(BucketWriterState).with({ network, foldedHeight: position.indexedHeight, foldedAt: common.computedAt, lastReorgAt }).where({ chain: source.chain })
    return { chain: source.chain, hours: hours.size, foldedHeight: position.indexedHeight }
  })
}

/** The chain's writer row, locked for this transaction (made on the first run). */
async function lockedState(chain: string, network: string) {
  const state = await SELECT.one.from(BucketWriterState).where({ chain }).forUpdate()
  if (state) return state
  await UPSERT.into(BucketWriterState).entries({ chain, network, foldedHeight: null, foldedAt: null, lastReorgAt: null })
  return (await SELECT.one.from(BucketWriterState).where({ chain }).forUpdate())!
}

/** The earliest hour that can have changed since the last run, or undefined when nothing did. */
async function firstHourToFold(source: ChainSource, network: string, state: { foldedHeight?: number | string | null; lastReorgAt?: string | null }) {
  const folded = Number(state.foldedHeight ?? 0)
  const reorgs = await source.reorgsSince(state.lastReorgAt ?? null)
  // A reorg replaced the blocks from its fork: from the last block before it on.
  const fork = Math.min(folded + 1, ...reorgs.map(reorg => reorg.forkHeight))
  const candidates: number[] = []
  const first = await source.firstBlockTimeFrom(Math.max(0, fork - 1))
  if (first !== undefined) candidates.push(bucketStart(first, 'hour'))
  const provisional = await SELECT.one.from(MetricBuckets).columns('min(bucketStart) as start')
    .where({ chain: source.chain, network, resolution: 'hour', final: false }) as { start?: string | null } | undefined
  if (provisional?.start) candidates.push(time(provisional.start))
  return candidates.length ? Math.min(...candidates) : undefined
}

async function insertBuckets(buckets: Map<number, BucketFigures>, common: Record<string, unknown>, isFinal: (start: number) => boolean) {
  const entries = [...buckets].flatMap(([start, figures]) => [...figures].map(([key, figure]) => ({
    ...common, ...splitKey(key), bucketStart: iso(start), final: isFinal(start),
    value: String(figure.value), count: figure.count, sum: String(figure.value),
    min: figure.min === undefined ? null : String(figure.min), max: figure.max === undefined ? null : String(figure.max),
  })))
  for (let at = 0; at < entries.length; at += 1000) await INSERT.into(MetricBuckets).entries(entries.slice(at, at + 1000))
}

/** Daily buckets from `fromDay`: each metric's hours summed; final when its last hour is. */
async function foldDays(fromDay: number, common: { chain: string; network: string }, finalizedAt: number) {
  const { chain, network } = common
  const hourly = await SELECT.from(MetricBuckets).columns('metric', 'dimension', 'bucketStart', 'value', 'count', 'min', 'max')
    .where({ chain, network, resolution: 'hour', bucketStart: { '>=': iso(fromDay) } })
  const days = new Map<number, BucketFigures>()
  for (const hour of hourly) {
    const day = bucketStart(time(hour.bucketStart), 'day')
    const figures = days.get(day) ?? new Map<string, Figure>()
    days.set(day, figures)
    const key = `${hour.metric}\u0000${hour.dimension ?? ''}`
    const figure = figures.get(key) ?? { value: 0, count: 0 }
    figure.value += Number(hour.value)
    figure.count += Number(hour.count)
    if (hour.min !== null && hour.min !== undefined) figure.min = Math.min(figure.min ?? Number(hour.min), Number(hour.min))
    if (hour.max !== null && hour.max !== undefined) figure.max = Math.max(figure.max ?? Number(hour.max), Number(hour.max))
    figures.set(key, figure)
  }
  await DELETE.from(MetricBuckets).where({ chain, network, resolution: 'day', bucketStart: { '>=': iso(fromDay) } })
  await insertBuckets(days, { ...common, resolution: 'day' }, day => day + DAY <= finalizedAt)
}

/** Blocks per producer of each epoch the folded blocks touch, counted over the whole epoch's indexed blocks. */
async function snapshotProducers(source: ChainSource, network: string, blocks: BlockItem[], computedAt: string, finalizedAt: number) {
  const epochs = [...new Set(blocks.map(block => block.epoch).filter((epoch): epoch is number => epoch !== null))]
  for (const epoch of epochs) {
    const { producers, ended, lastBlockAt } = await source.producersOfEpoch(epoch)
    const total = producers.reduce((sum, producer) => sum + producer.blocks, 0)
    await DELETE.from(EpochSnapshots).where({ chain: source.chain, network, epoch, resource: 'producers' })
    if (!total) continue
    const final = ended && lastBlockAt !== null && lastBlockAt <= finalizedAt
    await INSERT.into(EpochSnapshots).entries(producers.map(producer => ({
      chain: source.chain, network, epoch, resource: 'producers', entity: producer.producer, value: String(producer.blocks), share: producer.blocks / total, final, computedAt,
    })))
  }
}

/** Chain A's active stake per pool as the index holds it, for the current epoch. */
async function snapshotStake(network: string, epoch: number | null, computedAt: string) {
  if (epoch === null) return
  const pools = await SELECT.from(Pools).columns('poolId', 'activeStake').where({ activeStake: { '>': 0 } })
  if (!pools.length) return
  const total = pools.reduce((sum, pool) => sum + Number(pool.activeStake), 0)
  await DELETE.from(EpochSnapshots).where({ chain: 'chain-a', network, epoch, resource: 'stake' })
  await INSERT.into(EpochSnapshots).entries(pools.map(pool => ({
    chain: 'chain-a', network, epoch, resource: 'stake', entity: pool.poolId, value: String(pool.activeStake), share: Number(pool.activeStake) / total, final: false, computedAt,
  })))
}
