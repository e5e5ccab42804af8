import { badInput } from '../lib/errors.ts'
import { figureKey } from './activity.ts'
import { SOURCES } from './bucket-writer.ts'
import { METRICS, metricNamed } from './catalogue.ts'
import { Aggregate, EVALUATIONS, STEP_MS, bucketsOver } from './figures.ts'
import { iso } from './sources.ts'
import { ANOMALY_THRESHOLD, MIN_BASELINE_POINTS, robustScore } from './statistics.ts'
import { bucketStart, windowAt, windowNamed } from './windows.ts'
import { unavailable, windowSpan } from './windowed.ts'

/**
 * Robust anomalies: each bucket of the window scored with the modified z-score against a baseline
 * of earlier buckets. Hours: the same hour of the previous 28 weeks (weekly seasonality), or when
 * fewer than MIN_BASELINE_POINTS of those were indexed, the same hour of the previous 30 days.
 * Days: the previous 30 days. A baseline bucket counts when the chain was indexed then (it has
 * blocks); its metric is 0 when nothing else happened. The 1h window scores the last complete hour.
 */

const HOUR = 3_600_000
const DAY = 24 * HOUR
const WEEK = 7 * DAY
const back = (start: number, step: number, count: number) => Array.from({ length: count }, (_, k) => start - (k + 1) * step)

const BUCKET_METRICS = METRICS.filter(metric => 'needs' in EVALUATIONS[metric.name]).map(metric => metric.name)

export async function anomalies(metricName: unknown, windowName: unknown, now = Date.now()) {
  const metric = metricNamed(metricName)
  const evaluation = EVALUATIONS[metric.name]
  if (!('needs' in evaluation)) throw badInput('METRIC_NOT_SUPPORTED', `anomalies are scored on bucketed metrics: ${BUCKET_METRICS.join(', ')}`, 'metric')
  const window = windowAt(windowNamed(windowName), now)
  const resolution = window.resolution === 'day' ? 'day' : 'hour'
  const step = STEP_MS[resolution]
  const starts = window.name === '1h' ? [bucketStart(now, 'hour') - HOUR] : window.buckets
  const baselines = (start: number) => (resolution === 'day'
    ? [{ kind: 'previous-days', starts: back(start, DAY, 30) }]
    : [{ kind: 'same-hour-of-week', starts: back(start, WEEK, 28) }, { kind: 'same-hour-of-day', starts: back(start, DAY, 30) }])

  const points = []
  for (const source of SOURCES) {
    const position = await source.position()
    if (unavailable(metric, source, position)) continue
    const earliest = Math.min(...starts.flatMap(start => baselines(start).flatMap(baseline => baseline.starts)))
    const buckets = await bucketsOver(source, position!.network, resolution, earliest, starts.at(-1)! + step, [...evaluation.needs, 'chain.blocks'])
    /** The metric in one bucket; null when the chain was not indexed then. */
    const valueAt = (start: number) => {
      const bucket = buckets.get(start)
      return bucket?.has(figureKey('chain.blocks')) ? evaluation.of(new Aggregate(step / 1000, [bucket])) : null
    }
    for (const start of starts) {
      const value = valueAt(start)
      const point = { chain: source.chain, bucketStart: iso(start), value, baselineMedian: null as number | null, baselineMad: null as number | null, baselinePoints: 0, baselineKind: null as string | null, score: null as number | null, anomaly: false, note: null as string | null }
      if (value === null) {
        points.push({ ...point, note: 'no blocks indexed in this bucket' })
        continue
      }
      const usable = baselines(start).map(baseline => ({ kind: baseline.kind, values: baseline.starts.map(valueAt).filter((found): found is number => found !== null) }))
      const chosen = usable.find(baseline => baseline.values.length >= MIN_BASELINE_POINTS) ?? usable[0]
      const verdict = robustScore(value, chosen.values)
      if (!verdict) {
        points.push({ ...point, baselineKind: chosen.kind, baselinePoints: chosen.values.length, note: chosen.values.length < MIN_BASELINE_POINTS ? `not enough history: ${chosen.values.length} baseline points, ${MIN_BASELINE_POINTS} needed` : 'the baseline does not vary' })
        continue
      }
      points.push({ ...point, baselineKind: chosen.kind, baselinePoints: verdict.points, baselineMedian: verdict.median, baselineMad: verdict.scale, score: verdict.score, anomaly: verdict.anomaly })
    }
  }
  return {
    metric: metric.name, ...windowSpan(window), resolution,
    method: 'modified z-score 0.6745 * (x - median) / MAD (MAD 0: mean absolute deviation * 1.253314)',
    threshold: ANOMALY_THRESHOLD, minPoints: MIN_BASELINE_POINTS, points, flagged: points.filter(point => point.anomaly),
  }
}
