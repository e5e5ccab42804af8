import cds from '@sap/cds'
import { MetricBuckets } from '#cds-models/analytics'
import { DIMENSION_SEPARATOR, figureKey, type BucketFigures, type Figure } from './activity.ts'
import type { Metric } from './catalogue.ts'
import { iso, time, type ChainSource, type FollowerPosition, type TimedValue } from './sources.ts'
import { gini, hhi, nakamoto, percentile, topShare } from './statistics.ts'
import { bucketStart, type Resolution } from './windows.ts'

const { SELECT } = cds.ql

/**
 * How each metric of the catalogue is worked out over a run of buckets (a window, its previous
 * window, or one point of a series). Most come from the buckets: sums, ratios of sums, the range
 * kept in min and max, and distinct counts and concentration over the dimensioned buckets (per
 * producer, contract, asset, address). Percentiles and reorgs come from the index's rows in the
 * span; the sync lag only exists now.
 */

/** The buckets of a run, merged: every figure summed (min of the mins, max of the maxes). */
export class Aggregate {
  private readonly figures = new Map<string, Figure>()
  /** The length of the run in seconds (for rates). */
  readonly seconds: number

  constructor(seconds: number, buckets: Iterable<BucketFigures>) {
    this.seconds = seconds
    for (const bucket of buckets) {
      for (const [key, figure] of bucket) {
        const merged = this.figures.get(key)
        if (!merged) {
          this.figures.set(key, { ...figure })
          continue
        }
        merged.value += figure.value
        merged.count += figure.count
        if (figure.min !== undefined) merged.min = Math.min(merged.min ?? figure.min, figure.min)
        if (figure.max !== undefined) merged.max = Math.max(merged.max ?? figure.max, figure.max)
      }
    }
  }

  figure(metric: string): Figure | undefined {
    return this.figures.get(figureKey(metric))
  }

  value(metric: string): number {
    return this.figure(metric)?.value ?? 0
  }

  /** Each dimension's value of a dimensioned metric, largest first. */
  dimensions(metric: string): { dimension: string; value: number }[] {
    const prefix = metric + DIMENSION_SEPARATOR
    const found: { dimension: string; value: number }[] = []
    for (const [key, figure] of this.figures) {
      if (key.startsWith(prefix) && key.length > prefix.length && figure.value > 0) found.push({ dimension: key.slice(prefix.length), value: figure.value })
    }
    return found.sort((a, b) => b.value - a.value || a.dimension.localeCompare(b.dimension))
  }
}

type FromBuckets = {
  needs: string[]
  of: (aggregate: Aggregate) => number | null
  /** A count of distinct dimensions of this stored metric: worked out in the database (see distinctCounts). */
  distinctOf?: string
}
type FromRows = { rows: (source: ChainSource, from: number, to: number) => Promise<TimedValue[]>; of: (values: number[]) => number | null }
type FromPosition = { now: (position: FollowerPosition) => number | null }
type Evaluation = FromBuckets | FromRows | FromPosition

const fromBuckets = (needs: string[], of: (aggregate: Aggregate) => number | null): FromBuckets => ({ needs, of })
const sum = (metric: string) => fromBuckets([metric], aggregate => aggregate.value(metric))
const ratio = (numerator: string, denominator: string) =>
  fromBuckets([numerator, denominator], aggregate => (aggregate.value(denominator) ? aggregate.value(numerator) / aggregate.value(denominator) : null))
const overProducers = (statistic: (values: number[]) => number) => fromBuckets(['producer.blocks'], aggregate => {
  const values = aggregate.dimensions('producer.blocks').map(entry => entry.value)
  return values.length ? statistic(values) : null
})
const distinct = (metric: string): FromBuckets => ({ ...fromBuckets([metric], aggregate => aggregate.dimensions(metric).length), distinctOf: metric })
const feePercentile = (p: number): FromRows => ({ rows: (source, from, to) => source.fees(from, to), of: values => percentile(values, p) ?? null })

export const EVALUATIONS: Record<string, Evaluation> = {
  'chain.blocks': sum('chain.blocks'),
  'chain.block_interval_avg': fromBuckets(['chain.blocks'], aggregate => {
    const blocks = aggregate.figure('chain.blocks')
    return blocks && blocks.count > 1 ? (blocks.max! - blocks.min!) / (blocks.count - 1) : null
  }),
  'chain.epoch': fromBuckets(['chain.epoch'], aggregate => aggregate.figure('chain.epoch')?.max ?? null),
  'tx.count': sum('tx.count'),
  'tx.system': sum('tx.system'),
  'tx.tps': fromBuckets(['tx.count'], aggregate => aggregate.value('tx.count') / aggregate.seconds),
  'tx.per_block': ratio('tx.count', 'chain.blocks'),
  'tx.failed': sum('tx.failed'),
  'tx.failed_ratio': ratio('tx.failed', 'tx.count'),
  'tx.shielded': sum('tx.shielded'),
  'tx.shielded_ratio': ratio('tx.shielded', 'tx.count'),
  'tx.script': sum('tx.script'),
  'contract.calls': sum('contract.calls'),
  'contract.deploys': sum('contract.deploys'),
  'contract.active': distinct('contract.actions'),
  'fee.total': sum('fee.total'),
  'fee.avg': fromBuckets(['fee.total'], aggregate => {
    const fees = aggregate.figure('fee.total')
    return fees?.count ? fees.value / fees.count : null
  }),
  'fee.min': fromBuckets(['fee.total'], aggregate => aggregate.figure('fee.total')?.min ?? null),
  'fee.max': fromBuckets(['fee.total'], aggregate => aggregate.figure('fee.total')?.max ?? null),
  'fee.p50': feePercentile(50),
  'fee.p95': feePercentile(95),
  'volume.output_lovelace': sum('volume.output_lovelace'),
  'asset.mint_events': sum('asset.mint_events'),
  'asset.active': distinct('asset.txs'),
  'address.active': distinct('address.txs'),
  'producer.count': distinct('producer.blocks'),
  'producer.nakamoto': overProducers(nakamoto),
  'producer.gini': overProducers(gini),
  'producer.hhi': overProducers(hhi),
  'producer.top10_share': overProducers(values => topShare(values, 10)),
  'sync.lag_blocks': { now: (position: FollowerPosition) => (position.chainHeight === null ? null : Math.max(0, position.chainHeight - position.indexedHeight)) },
  'sync.reorgs': {
    rows: async (source: ChainSource, from: number, to: number) => (await source.reorgTimes(from, to)).map(at => ({ at, value: 1 })),
    of: (values: number[]) => values.length,
  },
}

export const STEP_MS: Record<Resolution, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 }

/** The buckets of [from, to) at a resolution, as the writer stored them (minutes: the last two hours). */
export async function bucketsOver(source: ChainSource, network: string, resolution: Resolution, from: number, to: number, metrics: readonly string[]): Promise<Map<number, BucketFigures>> {
  const rows = await SELECT.from(MetricBuckets).columns('metric', 'dimension', 'bucketStart', 'value', 'count', 'min', 'max')
    .where({ chain: source.chain, network, resolution, metric: { in: [...new Set(metrics)] }, bucketStart: { between: iso(from), and: iso(to - 1) } })
  const buckets = new Map<number, BucketFigures>()
  for (const row of rows) {
    const start = time(row.bucketStart)
    let figures = buckets.get(start)
    if (!figures) buckets.set(start, (figures = new Map()))
    figures.set(figureKey(row.metric!, row.dimension ?? ''), {
      value: Number(row.value), count: Number(row.count),
      ...(row.min === null || row.min === undefined ? {} : { min: Number(row.min) }),
      ...(row.max === null || row.max === undefined ? {} : { max: Number(row.max) }),
    })
  }
  return buckets
}

/** The stored metrics an evaluation reads from buckets (none for rows or the position). */
export const bucketMetrics = (evaluation: Evaluation) => ('needs' in evaluation ? evaluation.needs : [])

/**
 * Works a metric out over runs of buckets of one resolution: `ranges` are [from, to) spans made
 * of whole buckets. The buckets (or rows) of the span from the first range's start to the last
 * one's end are read once.
 */
export async function evaluateRanges(
  metric: Metric, source: ChainSource, position: FollowerPosition, resolution: Resolution, ranges: { from: number; to: number }[],
  /** Buckets already read for a span holding every range (with the metrics this one needs). */
  preloaded?: Map<number, BucketFigures>,
): Promise<(number | null)[]> {
  const evaluation = EVALUATIONS[metric.name]
  if (!ranges.length) return []
  if ('now' in evaluation) return ranges.map(() => null)
  const from = Math.min(...ranges.map(range => range.from))
  const to = Math.max(...ranges.map(range => range.to))
  if ('rows' in evaluation) {
    const rows = await evaluation.rows(source, from, to)
    return ranges.map(range => evaluation.of(rows.filter(row => row.at >= range.from && row.at < range.to).map(row => row.value)))
  }
  if (evaluation.distinctOf && !preloaded) return distinctCounts(source, position.network, resolution, evaluation.distinctOf, ranges)
  const buckets = preloaded ?? await bucketsOver(source, position.network, resolution, from, to, evaluation.needs)
  return ranges.map(range => evaluation.of(aggregateOf(buckets, resolution, range)))
}

/** The buckets of a span merged into one Aggregate. */
function aggregateOf(buckets: Map<number, BucketFigures>, resolution: Resolution, range: { from: number; to: number }): Aggregate {
  const inRange: BucketFigures[] = []
  for (let start = bucketStart(range.from, resolution); start < range.to; start += STEP_MS[resolution]) {
    const bucket = buckets.get(start)
    if (bucket) inRange.push(bucket)
  }
  return new Aggregate((range.to - range.from) / 1000, inRange)
}

/** The merged buckets of [from, to) for some stored metrics. */
export async function aggregateOver(source: ChainSource, network: string, resolution: Resolution, range: { from: number; to: number }, metrics: readonly string[]): Promise<Aggregate> {
  return aggregateOf(await bucketsOver(source, network, resolution, range.from, range.to, metrics), resolution, range)
}

/**
 * Distinct dimensions (addresses, contracts...) with activity in each range, counted by the
 * database: one query for the ranges of one bucket each (a series), one per longer range. A window
 * of per-address buckets has thousands of rows; the counts are a few.
 */
async function distinctCounts(source: ChainSource, network: string, resolution: Resolution, metric: string, ranges: { from: number; to: number }[]): Promise<number[]> {
  const step = STEP_MS[resolution]
  const where = (from: number, to: number) => ({ chain: source.chain, network, resolution, metric, dimension: { '!=': '' }, value: { '>': 0 }, bucketStart: { between: iso(from), and: iso(to - 1) } })
  const single = ranges.filter(range => range.to - range.from === step)
  const perBucket = new Map<number, number>()
  if (single.length) {
    const from = Math.min(...single.map(range => range.from)), to = Math.max(...single.map(range => range.to))
    const rows = await SELECT.from(MetricBuckets).columns('bucketStart', 'count(1) as n').where(where(from, to)).groupBy('bucketStart') as { bucketStart: string; n: number | string }[]
    for (const row of rows) perBucket.set(time(row.bucketStart), Number(row.n))
  }
  return Promise.all(ranges.map(async range => {
    if (range.to - range.from === step) return perBucket.get(range.from) ?? 0
    const row = await SELECT.one.from(MetricBuckets).columns('count(distinct dimension) as n').where(where(range.from, range.to)) as { n?: number | string } | undefined
    return Number(row?.n ?? 0)
  }))
}
