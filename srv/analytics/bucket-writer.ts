import cds from '@sap/cds'
import { BucketWriterState, EpochSnapshots, MetricBuckets } from '#cds-models/analytics'
import { foldActivity, splitKey, type BucketFigures, type Figure } from './activity.ts'
import { chainASource, poolsWithStake } from './chain-a-source.ts'
import { chainBSource } from './chain-b-source.ts'
import { iso, time, type ChainSource } from './sources.ts'
import { bucketStart } from './windows.ts'

const { SELECT, INSERT, DELETE, UPDATE, UPSERT } = cds.ql

/**
 * Folds each chain's index into metric buckets (minutes for the last two hours, hours, UTC days)
 * and per-epoch snapshots. Each run folds, in one transaction per chain, every hour from the first
 * block not folded yet or from a reorg's fork (the followers log every reorg, so nothing else can
 * change what was folded); daily buckets are the sums of their hours. Buckets become final once
 * every block they cover is (the follower's finalized height). A run first locks its chain's writer
 * row, so runs in several instances take turns, each starting from what the last one wrote.
 */

export const SOURCES: readonly ChainSource[] = [chainASource, chainBSource]
const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

interface FoldOutcome { chain: string; hours: number; foldedHeight: number | null }

/** Folds both chains; answers what each run recomputed. */
export async function foldAll(now = Date.now(), options: { from?: number } = {}): Promise<FoldOutcome[]> {
  const outcomes: FoldOutcome[] = []
  for (const source of SOURCES) outcomes.push(await foldChain(source, now, options))
  return outcomes
}

/** Hours folded from one read of the index: bounds memory on a long rebuild. */
const SPAN_HOURS = 6
/** Minute buckets kept back from now: the 1h window and the one before it. */
const MINUTES_KEPT_MS = 2 * HOUR

/**
 * Folds what changed on one chain since the last run: every hour from the first block not folded
 * yet, or from a reorg's fork (or everything from `options.from`, a rebuild), read from the index a
 * few hours at a time. Buckets and snapshots whose blocks have become final since are marked so.
 */
export async function foldChain(source: ChainSource, now = Date.now(), options: { from?: number } = {}): Promise<FoldOutcome> {
  return cds.tx(async () => {
    const position = await source.position()
    if (!position) return { chain: source.chain, hours: 0, foldedHeight: null }
    const { network } = position
    const state = await lockedState(source.chain, network)
    // The index is behind what was folded: a new chain (a devnet reset, another network). Everything again.
    const rewound = position.indexedHeight < Number(state.foldedHeight ?? 0)
    if (rewound) {
      await DELETE.from(EpochSnapshots).where({ chain: source.chain })
      await DELETE.from(MetricBuckets).where({ chain: source.chain })
    }
    const first = rewound ? 0 : options.from ?? await firstHourToFold(source, state, position.indexedHeight)
    const finalized = position.finalizedHeight === null ? undefined : await source.blockAt(position.finalizedHeight)
    const finalizedAt = finalized?.time ?? -Infinity
    const computedAt = iso(now)
    let hours = 0
    if (first !== undefined) {
      // A rebuild from before the first indexed block starts at that block's hour.
      const from = bucketStart(Math.max(first, (await source.firstBlockTimeFrom(0)) ?? first), 'hour')
      const lastBlockAt = (await source.blockAt(position.indexedHeight))?.time ?? from
      const common = { chain: source.chain, network, sourceTipHeight: position.indexedHeight, computedAt }
      for (const resolution of ['hour', 'minute'] as const) {
        await DELETE.from(MetricBuckets).where({ chain: source.chain, network, resolution, bucketStart: { '>=': iso(from) } })
      }
      const epochs = new Set<number>()
      for (let spanStart = from; spanStart <= lastBlockAt; spanStart += SPAN_HOURS * HOUR) {
        const activity = await source.activity(spanStart, spanStart + SPAN_HOURS * HOUR)
        const byHour = foldActivity(activity, 'hour')
        hours += byHour.size
        await insertBuckets(byHour, { ...common, resolution: 'hour' }, start => start + HOUR <= finalizedAt)
        const recentMinutes = new Map([...foldActivity(activity, 'minute')].filter(([start]) => start >= now - MINUTES_KEPT_MS))
        await insertBuckets(recentMinutes, { ...common, resolution: 'minute' }, start => start + MINUTE <= finalizedAt)
        for (const block of activity.blocks) if (block.epoch !== null) epochs.add(block.epoch)
      }
      await foldDays(bucketStart(from, 'day'), common, finalizedAt)
      await snapshotProducers(source, network, [...epochs], computedAt, finalizedAt)
    }
    await DELETE.from(MetricBuckets).where({ chain: source.chain, network, resolution: 'minute', bucketStart: { '<': iso(now - MINUTES_KEPT_MS - HOUR) } })
    await markFinal(source.chain, network, finalizedAt, finalized?.epoch ?? null)
    if (source.chain === 'chain-a') await snapshotStake(network, position.epoch, computedAt)
    const reorgs = await source.reorgsSince(null)
    const lastReorgAt = reorgs.reduce<string | null>((latest, reorg) => (latest && latest > reorg.detectedAt ? latest : reorg.detectedAt), null)
    await UPDATE.entity(BucketWriterState).with({ network, foldedHeight: position.indexedHeight, foldedAt: computedAt, lastReorgAt }).where({ chain: source.chain })
    return { chain: source.chain, hours, foldedHeight: position.indexedHeight }
  })
}

/** Buckets whose every block is final now, and producer snapshots of epochs before the finalized block's, are final. */
async function markFinal(chain: string, network: string, finalizedAt: number, finalizedEpoch: number | null) {
  if (finalizedAt === -Infinity) return
  for (const [resolution, length] of [['minute', MINUTE], ['hour', HOUR], ['day', DAY]] as const) {
    await UPDATE.entity(MetricBuckets).set({ final: true }).where({ chain, network, resolution, final: false, bucketStart: { '<=': iso(finalizedAt - length) } })
  }
  if (finalizedEpoch !== null) await UPDATE.entity(EpochSnapshots).set({ final: true }).where({ chain, network, resource: 'producers', final: false, epoch: { '<': finalizedEpoch } })
}

/** The chain's writer row, locked for this transaction (made on the first run). */
async function lockedState(chain: string, network: string) {
  const state = await SELECT.one.from(BucketWriterState).where({ chain }).forUpdate()
  if (state) return state
  await UPSERT.into(BucketWriterState).entries({ chain, network, foldedHeight: null, foldedAt: null, lastReorgAt: null })
  return (await SELECT.one.from(BucketWriterState).where({ chain }).forUpdate())!
}

/** The time of the earliest block that can have changed since the last run (new, or from a reorg's fork), or undefined when none did. */
async function firstHourToFold(source: ChainSource, state: { foldedHeight?: number | string | null; lastReorgAt?: string | null }, indexedHeight: number) {
  const folded = Number(state.foldedHeight ?? -1)
  const reorgs = await source.reorgsSince(state.lastReorgAt ?? null)
  if (folded >= indexedHeight && !reorgs.length) return undefined
  const fork = Math.min(folded + 1, ...reorgs.map(reorg => reorg.forkHeight))
  // From the block before the fork on: the hour it shares with replaced or new blocks is folded whole.
  return source.firstBlockTimeFrom(Math.max(0, fork - 1))
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
async function snapshotProducers(source: ChainSource, network: string, epochs: number[], computedAt: string, finalizedAt: number) {
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
  const pools = await poolsWithStake()
  if (!pools.length) return
  const total = pools.reduce((sum, pool) => sum + Number(pool.activeStake), 0)
  await DELETE.from(EpochSnapshots).where({ chain: 'chain-a', network, epoch, resource: 'stake' })
  await INSERT.into(EpochSnapshots).entries(pools.map(pool => ({
    chain: 'chain-a', network, epoch, resource: 'stake', entity: pool.poolId, value: String(pool.activeStake), share: Number(pool.activeStake) / total, final: false, computedAt,
  })))
}
