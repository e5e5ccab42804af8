import { SOURCES } from './bucket-writer.ts'
import { METRICS, metricNamed, type Metric } from './catalogue.ts'
import type { BucketFigures } from './activity.ts'
import { EVALUATIONS, bucketMetrics, bucketsOver, evaluateRanges } from './figures.ts'
import { iso, type ChainSource, type FollowerPosition } from './sources.ts'
import { bucketStart, changePercent, windowAt, windowNamed, type Window } from './windows.ts'

/** Figures over a window: one metric on both chains (compare), the key figures, and the overview. */

const HOUR = 3_600_000

/** The metrics keyFigures answers, in this order. */
const KEY_METRICS = ['chain.blocks', 'tx.count', 'tx.tps', 'fee.total', 'fee.avg', 'address.active', 'producer.count', 'tx.failed_ratio'] as const

interface ChainFigure {
  chain: string
  network: string | null
  metric: string
  unit: string
  available: boolean
  note: string | null
  value: number | null
  previous: number | null
  changePercent: number | null
  series: { bucketStart: string; value: number | null }[]
}

export function windowSpan(window: Window) {
  return {
    window: window.name, resolution: window.resolution,
    windowStart: iso(window.from), windowEnd: iso(window.to), previousStart: iso(window.previous.from), previousEnd: iso(window.previous.to),
  }
}

/** Why a metric has no figure on a chain, or undefined when it has one. */
export function unavailable(metric: Metric, source: ChainSource, position: FollowerPosition | undefined): string | undefined {
  if (!metric.chains.includes(source.chain)) return `${metric.name} exists on ${metric.chains.join(' and ')} only`
  if (!position) return `${source.chain} is not indexed yet: its follower has not read a block`
  return undefined
}

/** One metric on one chain over a window: value, previous window, change and series. */
async function chainFigure(
  metric: Metric, source: ChainSource, window: Window, position: FollowerPosition | undefined, preloaded?: Map<number, BucketFigures>,
): Promise<ChainFigure> {
  const figure: ChainFigure = {
    chain: source.chain, network: position?.network ?? null, metric: metric.name, unit: metric.unit,
    available: metric.chains.includes(source.chain), note: null, value: null, previous: null, changePercent: null, series: [],
  }
  const why = unavailable(metric, source, position)
  if (why) return { ...figure, note: why }
  const evaluation = EVALUATIONS[metric.name]
  if ('now' in evaluation) return { ...figure, value: evaluation.now(position!), note: 'known only now: no previous window or series' }
  const step = (window.to - window.from) / window.buckets.length
  const points = window.buckets.map(start => ({ from: start, to: start + step }))
  const [value, previous, ...series] = await evaluateRanges(metric, source, position!, window.resolution, [{ from: window.from, to: window.to }, window.previous, ...points], preloaded)
  return { ...figure, value, previous, changePercent: changePercent(value, previous), series: window.buckets.map((start, i) => ({ bucketStart: iso(start), value: series[i] })) }
}

const positions = () => Promise.all(SOURCES.map(source => source.position()))

export async function compare(metricName: unknown, windowName: unknown, now = Date.now()) {
  const metric = metricNamed(metricName)
  const window = windowAt(windowNamed(windowName), now)
  const known = await positions()
  const chains = await Promise.all(SOURCES.map((source, i) => chainFigure(metric, source, window, known[i])))
  return { metric: metric.name, description: metric.description, ...windowSpan(window), chains }
}

export async function keyFigures(windowName: unknown, now = Date.now()) {
  const window = windowAt(windowNamed(windowName), now)
  const known = await positions()
  const figures: ChainFigure[] = []
  // One read of the buckets both windows span for the key figures summed from them; distinct counts are counted by the database.
  const counted = (name: string) => {
    const evaluation = EVALUATIONS[name]
    return 'needs' in evaluation && !!evaluation.distinctOf
  }
  const needs = KEY_METRICS.filter(name => !counted(name)).flatMap(name => bucketMetrics(EVALUATIONS[name]))
  for (const [i, source] of SOURCES.entries()) {
    const buckets = known[i] && await bucketsOver(source, known[i]!.network, window.resolution, window.previous.from, window.to, needs)
    for (const name of KEY_METRICS) figures.push(await chainFigure(metricNamed(name), source, window, known[i], counted(name) ? undefined : buckets))
  }
  return { ...windowSpan(window), figures }
}

/** Both chains now: where they stand, tps over the last complete hour, and the current hour with the 23 before it. */
export async function overview(now = Date.now()) {
  const lastHour = windowAt('1h', now)
  const currentHour = bucketStart(now, 'hour')
  const day = { from: currentHour - 23 * HOUR, to: currentHour + HOUR }
  const chains = await Promise.all(SOURCES.map(async source => {
    const position = await source.position()
    const base = { chain: source.chain, feeUnit: source.feeUnit, network: position?.network ?? null, syncStatus: position?.status ?? 'unknown' }
    if (!position) return base
    const over = async (name: string, range: { from: number; to: number }, resolution: 'minute' | 'hour') => {
      const metric = METRICS.find(entry => entry.name === name)!
      if (!metric.chains.includes(source.chain)) return null
      return (await evaluateRanges(metric, source, position, resolution, [range]))[0]
    }
    return {
      ...base,
      tipHeight: position.chainHeight, indexedHeight: position.indexedHeight, finalizedHeight: position.finalizedHeight,
      lagBlocks: position.chainHeight === null ? null : Math.max(0, position.chainHeight - position.indexedHeight), epoch: position.epoch,
      tps: await over('tx.tps', { from: lastHour.from, to: lastHour.to }, 'minute'),
      blocks24h: await over('chain.blocks', day, 'hour'),
      transactions24h: await over('tx.count', day, 'hour'),
      fees24h: await over('fee.total', day, 'hour'),
      activeAddresses24h: await over('address.active', day, 'hour'),
      producers24h: await over('producer.count', day, 'hour'),
      reorgs24h: await over('sync.reorgs', day, 'hour'),
    }
  }))
  return { generatedAt: iso(now), chains }
}
