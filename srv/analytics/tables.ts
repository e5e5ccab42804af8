import cds from '@sap/cds'
import { EpochSnapshots } from '#cds-models/analytics'
import type { DailyRow } from '#cds-models/AnalyticsService'
import { badInput } from '../lib/errors.ts'
import { SOURCES } from './bucket-writer.ts'
import { metricNamed, type Chain } from './catalogue.ts'
import { aggregateOver, evaluateRanges } from './figures.ts'
import { iso } from './sources.ts'
import { gini, hhi, histogram, nakamoto, percentile, topShare } from './statistics.ts'
import { bucketStart, windowAt, windowNamed, type Window } from './windows.ts'
import { unavailable, windowSpan } from './windowed.ts'

const { SELECT } = cds.ql

/** Daily tables, rankings, concentration and distributions. */

const DAY = 86_400_000

/** Something chosen from a list: 400 `code` naming the valid values otherwise. */
function oneOf<T extends string>(value: unknown, valid: readonly T[], code: string, target: string): T {
  if (typeof value === 'string' && (valid as readonly string[]).includes(value)) return value as T
  throw badInput(code, `${target} must be one of ${valid.join(', ')}`, target)
}

/** A whole number within bounds, or the default when absent. */
function wholeNumber(value: unknown, target: string, { min, max, otherwise }: { min: number; max: number; otherwise: number }): number {
  if (value === null || value === undefined) return otherwise
  const number = Number(value)
  if (!Number.isInteger(number) || number < min || number > max) throw badInput('INVALID_PARAMETER', `${target} must be a whole number from ${min} to ${max}`, target)
  return number
}

const windowOrDay = (name: unknown, now: number): Window => windowAt(name === null || name === undefined ? '24h' : windowNamed(name), now)

export const TOPICS = {
  blocks: ['chain.blocks', 'chain.block_interval_avg', 'producer.count'],
  transactions: ['tx.count', 'tx.failed', 'tx.script', 'tx.shielded', 'tx.system', 'tx.tps'],
  fees: ['fee.total', 'fee.avg', 'fee.min', 'fee.max'],
  tokens: ['asset.mint_events', 'asset.active'],
} as const

/** A row per UTC day, chain and metric of the topic, for the last `days` days (today, still counting, last). */
export async function daily(topicName: unknown, daysGiven: unknown, now = Date.now()) {
  const topic = oneOf(topicName, Object.keys(TOPICS) as (keyof typeof TOPICS)[], 'UNKNOWN_TOPIC', 'topic')
  const days = wholeNumber(daysGiven, 'days', { min: 1, max: 90, otherwise: 7 })
  const today = bucketStart(now, 'day')
  const ranges = Array.from({ length: days }, (_, i) => today - (days - 1 - i) * DAY).map(from => ({ from, to: Math.min(from + DAY, now) }))
  const rows: DailyRow[] = []
  for (const source of SOURCES) {
    const position = await source.position()
    for (const name of TOPICS[topic]) {
      const metric = metricNamed(name)
      if (unavailable(metric, source, position)) continue
      const values = await evaluateRanges(metric, source, position!, 'day', ranges)
      ranges.forEach((range, i) => rows.push({ day: iso(range.from).slice(0, 10) as DailyRow['day'], chain: source.chain, metric: name, value: values[i], complete: range.from + DAY <= now }))
    }
  }
  return { topic, days, metrics: [...TOPICS[topic]], rows }
}

export const RANKINGS = {
  producers: { metric: 'producer.blocks', unit: 'blocks', chains: ['chain-a', 'chain-b'] },
  addresses: { metric: 'address.volume', unit: 'lovelace received', chains: ['chain-a'] },
  tokens: { metric: 'asset.txs', unit: 'transactions', chains: ['chain-a'] },
  contracts: { metric: 'contract.calls', unit: 'calls', chains: ['chain-b'] },
} as const satisfies Record<string, { metric: string; unit: string; chains: readonly Chain[] }>

/** The top entities of a ranking over a window, with their share of the chain's total. */
export async function rankings(rankingName: unknown, windowName: unknown, topGiven: unknown, now = Date.now()) {
  const ranking = oneOf(rankingName, Object.keys(RANKINGS) as (keyof typeof RANKINGS)[], 'UNKNOWN_RANKING', 'ranking')
  const top = wholeNumber(topGiven, 'top', { min: 1, max: 100, otherwise: 10 })
  const window = windowOrDay(windowName, now)
  const { metric, unit, chains } = RANKINGS[ranking]
  const notes: string[] = []
  const entries: { chain: string; rank: number; entity: string; value: number; share: number }[] = []
  for (const source of SOURCES) {
    if (!(chains as readonly string[]).includes(source.chain)) {
      notes.push(`${source.chain} has no ${ranking} ranking: it exists on ${chains.join(' and ')} only`)
      continue
    }
    const position = await source.position()
    if (!position) {
      notes.push(`${source.chain} is not indexed yet`)
      continue
    }
    const ranked = (await aggregateOver(source, position.network, window.resolution, window, [metric])).dimensions(metric)
    const total = ranked.reduce((sum, entry) => sum + entry.value, 0)
    ranked.slice(0, top).forEach((entry, i) => entries.push({ chain: source.chain, rank: i + 1, entity: entry.dimension, value: entry.value, share: entry.value / total }))
  }
  return { ranking, metric, unit, ...windowSpan(window), notes, entries }
}

/** The latest stake snapshot of chain A: active stake per pool. */
async function latestStake(): Promise<{ epoch: number; values: number[] } | undefined> {
  const latest = await SELECT.one.from(EpochSnapshots).columns('max(epoch) as epoch').where({ chain: 'chain-a', resource: 'stake' }) as { epoch?: number | null }
  if (latest?.epoch === null || latest?.epoch === undefined) return undefined
  const rows = await SELECT.from(EpochSnapshots).columns('value').where({ chain: 'chain-a', resource: 'stake', epoch: latest.epoch })
  return { epoch: latest.epoch, values: rows.map(row => Number(row.value)) }
}

const NO_STAKE = 'chain B\'s index holds no stake distribution'

interface ConcentrationFigure {
  chain: string; available: boolean; note: string | null; basis: string | null
  entities?: number; total?: number; gini?: number; nakamoto?: number; hhi?: number; top10Share?: number
}

/** Gini, Nakamoto, HHI and top-10 share over blocks produced in a window, or over stake at the latest snapshot. */
export async function concentration(resourceName: unknown, windowName: unknown, now = Date.now()) {
  const resource = oneOf(resourceName, ['blocks', 'stake'] as const, 'UNKNOWN_RESOURCE', 'resource')
  const window = windowOrDay(windowName, now)
  const chains = await Promise.all(SOURCES.map(async (source): Promise<ConcentrationFigure> => {
    const base: ConcentrationFigure = { chain: source.chain, available: true, note: null, basis: null }
    let values: number[]
    if (resource === 'stake') {
      const stake = source.chain === 'chain-a' ? await latestStake() : undefined
      if (source.chain !== 'chain-a') return { ...base, available: false, note: NO_STAKE }
      if (!stake) return { ...base, note: 'no stake snapshot yet' }
      values = stake.values
      base.basis = `stake at epoch ${stake.epoch}`
    } else {
      const position = await source.position()
      if (!position) return { ...base, note: `${source.chain} is not indexed yet` }
      values = (await aggregateOver(source, position.network, window.resolution, window, ['producer.blocks'])).dimensions('producer.blocks').map(entry => entry.value)
      base.basis = `blocks in ${window.name}`
    }
    if (!values.length) return { ...base, entities: 0, total: 0 }
    return {
      ...base, entities: values.length, total: values.reduce((sum, value) => sum + value, 0),
      gini: gini(values), nakamoto: nakamoto(values), hhi: hhi(values), top10Share: topShare(values, 10),
    }
  }))
  return { resource, window: window.name, chains }
}

/** A histogram with count, range, mean and percentiles: fees or transaction sizes over a window, or stake per pool. */
export async function distributions(distributionName: unknown, windowName: unknown, binsGiven: unknown, now = Date.now()) {
  const distribution = oneOf(distributionName, ['fees', 'sizes', 'stake'] as const, 'UNKNOWN_DISTRIBUTION', 'distribution')
  const bins = wholeNumber(binsGiven, 'bins', { min: 1, max: 50, otherwise: 10 })
  const window = windowOrDay(windowName, now)
  const chains = await Promise.all(SOURCES.map(async source => {
    const unit = distribution === 'sizes' ? 'bytes' : distribution === 'fees' ? source.feeUnit : 'lovelace'
    const base = { chain: source.chain, available: true, note: null as string | null, unit }
    let values: number[] | null
    if (distribution === 'stake') values = source.chain === 'chain-a' ? ((await latestStake())?.values ?? []) : null
    else if (distribution === 'fees') values = (await source.fees(window.from, window.to)).map(entry => entry.value)
    else values = (await source.sizes(window.from, window.to))?.map(entry => entry.value) ?? null
    if (values === null) return { ...base, available: false, note: distribution === 'stake' ? NO_STAKE : `${source.chain}'s index keeps no transaction sizes` }
    if (!values.length) return { ...base, count: 0, bins: [] }
    return {
      ...base, count: values.length, min: Math.min(...values), max: Math.max(...values), mean: values.reduce((sum, value) => sum + value, 0) / values.length,
      p50: percentile(values, 50), p95: percentile(values, 95), bins: histogram(values, bins),
    }
  }))
  return { distribution, ...windowSpan(window), chains }
}
