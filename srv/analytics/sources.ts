import cds from '@sap/cds'
import type { Activity } from './activity.ts'
import type { Chain } from './catalogue.ts'

/**
 * What analytics reads of one chain's index (its follower's tables; never the upstream): where the
 * follower stands, the reorgs it went through, and the activity of a span of time.
 */

export interface FollowerPosition {
  network: string
  chainHeight: number | null
  indexedHeight: number
  /** Blocks at or below it no longer change. */
  finalizedHeight: number | null
  status: string | null
  indexedAt: string | null
  epoch: number | null
}

export interface EpochProducers { producers: { producer: string; blocks: number }[]; ended: boolean; lastBlockAt: number | null }

export interface TimedValue { at: number; value: number }

export interface ChainSource {
  chain: Chain
  /** The fee unit of the chain (chain A lovelace, chain B DUST's smallest unit). */
  feeUnit: string
  position(): Promise<FollowerPosition | undefined>
  /** Reorgs recorded after a time (all when null), with the first replaced height. */
  reorgsSince(after: string | null): Promise<{ forkHeight: number; detectedAt: string }[]>
  /** When each reorg recorded within [from, to) was detected. */
  reorgTimes(from: number, to: number): Promise<number[]>
  /** The time and epoch of the indexed block at a height. */
  blockAt(height: number): Promise<{ time: number; epoch: number | null } | undefined>
  /** The time of the lowest indexed block at or above a height. */
  firstBlockTimeFrom(height: number): Promise<number | undefined>
  /** Blocks with their time in [from, to), with their transactions and contract actions. */
  activity(from: number, to?: number): Promise<Activity>
  /** The fee of each (regular) transaction in blocks with their time in [from, to), with the block's time. */
  fees(from: number, to: number): Promise<TimedValue[]>
  /** Transaction sizes in bytes in [from, to); null when the chain's index does not keep them. */
  sizes(from: number, to: number): Promise<TimedValue[] | null>
  /** Blocks per producer in an epoch's indexed blocks; ended once a later epoch has a block. */
  producersOfEpoch(epoch: number): Promise<EpochProducers>
}

/** Runs a read as one statement through the internal service of the index's owner, in the caller's context (and transaction). */
type IndexRead = <T>(query: PromiseLike<T>) => Promise<T>

/** The reads through an owner's internal service (connected once, then at hand). */
export function readsThrough(connect: () => Promise<cds.Service>): IndexRead {
  let connected: cds.Service | undefined
  return async query => (connected ??= await connect()).run(query as never)
}

/** A chain's reorg log as both chains keep it (forkHeight, detectedAt). */
type ReorgLogEntity = Parameters<typeof cds.ql.SELECT.from>[0]

/** The reorg queries of a ChainSource over its chain's reorg log, read through its owner's internal service. */
export function reorgQueries(reorgLog: ReorgLogEntity, read: IndexRead): Pick<ChainSource, 'reorgsSince' | 'reorgTimes'> {
  return {
    async reorgsSince(after) {
      const rows = await read(cds.ql.SELECT.from(reorgLog).columns('forkHeight', 'detectedAt').where(after ? { detectedAt: { '>': after } } : {})) as { forkHeight: number; detectedAt: string }[]
      return rows.map(row => ({ forkHeight: Number(row.forkHeight), detectedAt: row.detectedAt }))
    },
    async reorgTimes(from, to) {
      const rows = await read(cds.ql.SELECT.from(reorgLog).columns('detectedAt').where({ detectedAt: { between: iso(from), and: iso(to - 1) } })) as { detectedAt: string }[]
      return rows.map(row => time(row.detectedAt))
    },
  }
}

export const time = (value: string | Date | null | undefined) => (value ? new Date(value).getTime() : NaN)
export const iso = (at: number) => new Date(at).toISOString()
export const numberOr = <T>(value: unknown, otherwise: T): number | T => (value === null || value === undefined ? otherwise : Number(value))

/** Grouped block rows ({ producer, blocks, last }) as an epoch's producers. */
export interface ProducerRow { producer?: string | null; blocks?: number | string; last?: string | null }

export function epochProducers(rows: ProducerRow[], ended: boolean): EpochProducers {
  const producers = rows.filter(row => row.producer).map(row => ({ producer: row.producer!, blocks: Number(row.blocks) }))
  const lasts = rows.map(row => time(row.last)).filter(at => !Number.isNaN(at))
  return { producers, ended, lastBlockAt: lasts.length ? Math.max(...lasts) : null }
}
