/**
 * The statistics analytics answers with, as pure functions over plain numbers (the formulas of
 * the metric catalogue, reference gateway-lanes-analytics.md sections 5 and 7):
 * concentration (Gini, Nakamoto, HHI, top-N share), percentiles, histograms, and the robust
 * modified z-score that flags anomalies.
 */

const ascending = (values: readonly number[]) => [...values].sort((a, b) => a - b)
const descending = (values: readonly number[]) => [...values].sort((a, b) => b - a)
const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0)

/** Gini over values sorted ascending x_1..x_n: Σ (2i − n − 1)·x_i / (n · Σx); 0 when all are equal (or there is nothing). */
export function gini(values: readonly number[]): number {
  const sorted = ascending(values)
  const n = sorted.length
  const total = sum(sorted)
  if (n === 0 || total === 0) return 0
  return sorted.reduce((acc, value, index) => acc + (2 * (index + 1) - n - 1) * value, 0) / (n * total)
}

/** The fewest entities whose combined share is strictly above 50 % (0 when nothing is held). */
export function nakamoto(values: readonly number[]): number {
  const total = sum(values)
  if (total <= 0) return 0
  let held = 0
  let count = 0
  for (const value of descending(values)) {
    held += value
    count++
    if (held / total > 0.5) return count
  }
  return count
}

/** Herfindahl-Hirschman index: Σ (100 · share)², 10 000 for one entity holding all. */
export function hhi(values: readonly number[]): number {
  const total = sum(values)
  if (total <= 0) return 0
  return values.reduce((acc, value) => acc + (100 * value / total) ** 2, 0)
}

/** The share of the `n` largest values in the total. */
export function topShare(values: readonly number[], n: number): number {
  const total = sum(values)
  return total <= 0 ? 0 : sum(descending(values).slice(0, n)) / total
}

/** The p-th percentile (0..100), linear between the closest ranks (p50 of [1, 2, 3, 4] is 2.5). */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined
  const sorted = ascending(values)
  const rank = (p / 100) * (sorted.length - 1)
  const below = Math.floor(rank)
  const above = Math.ceil(rank)
  return sorted[below] + (sorted[above] - sorted[below]) * (rank - below)
}

const median = (values: readonly number[]) => percentile(values, 50)

interface HistogramBin { lower: number; upper: number; count: number }

/** `bins` equal-width bins from the smallest to the largest value; the last bin includes its upper bound. */
export function histogram(values: readonly number[], bins: number): HistogramBin[] {
  if (values.length === 0 || bins < 1) return []
  const low = Math.min(...values)
  const high = Math.max(...values)
  const width = high > low ? (high - low) / bins : 1
  const counts = Array<number>(bins).fill(0)
  for (const value of values) counts[Math.min(bins - 1, Math.floor((value - low) / width))]++
  return counts.map((count, i) => ({ lower: low + i * width, upper: low + (i + 1) * width, count }))
}

/** Fewer points than this in the baseline: no anomaly verdict. */
export const MIN_BASELINE_POINTS = 8
/** |M| above this flags an anomaly (Iglewicz and Hoaglin). */
export const ANOMALY_THRESHOLD = 3.5

interface RobustScore {
  /** The modified z-score M = 0.6745 · (x − median) / MAD (or its fallback scale). */
  score: number
  median: number
  /** The median absolute deviation, or the fallback when it is 0. */
  scale: number
  scaleKind: 'mad' | 'mean-absolute-deviation'
  anomaly: boolean
  threshold: number
  points: number
}

/**
 * The robust modified z-score of `value` against a baseline. When the MAD is 0 (more than half
 * the baseline identical), the mean absolute deviation × 1.253314 stands in for it; when that is
 * 0 too, or the baseline is shorter than MIN_BASELINE_POINTS, there is no verdict (undefined).
 */
export function robustScore(value: number, baseline: readonly number[]): RobustScore | undefined {
  if (baseline.length < MIN_BASELINE_POINTS) return undefined
  const middle = median(baseline)!
  const mad = median(baseline.map(point => Math.abs(point - middle)))!
  if (mad > 0) return verdict(0.6745 * (value - middle) / mad, middle, mad, 'mad', baseline.length)
  const meanDeviation = sum(baseline.map(point => Math.abs(point - middle))) / baseline.length
  if (meanDeviation === 0) return undefined
  // With the mean absolute deviation, M = (x − median) / (1.253314 · meanAD) (Iglewicz and Hoaglin).
  const scale = 1.253314 * meanDeviation
  return verdict((value - middle) / scale, middle, scale, 'mean-absolute-deviation', baseline.length)
}

function verdict(score: number, middle: number, scale: number, scaleKind: RobustScore['scaleKind'], points: number): RobustScore {
  return { score, median: middle, scale, scaleKind, anomaly: Math.abs(score) > ANOMALY_THRESHOLD, threshold: ANOMALY_THRESHOLD, points }
}
