import cds from '@sap/cds'
import { foldAll } from '../../srv/analytics/bucket-writer.ts'
import { anomalies } from '../../srv/analytics/anomalies.ts'
import { at, chainBHistory, type ChainBBlock, type ChainBTransaction } from './history.ts'

/**
 * A spike against 37 days of hourly history on chain B (02-01 00:00 to 03-10 11:00). Each hour has one block with 10
 * transactions on even days and 12 on odd days (days counted from 1970-01-01), so the same hour
 * over any 30 previous days holds fifteen 10s and fifteen 12s: median 11, MAD 1. Every hour then
 * scores 0.6745 · (±1) / 1, except 03-10 09:00, injected with 60: 0.6745 · 49 = 33.05 > 3.5.
 * Five weeks give only 5 same-hour-of-week points (8 needed), so the same hour of day is used.
 * Days hold 240 or 288 alternately: over the 30 days before any day of the 7d window, median 264 and MAD 24.
 */

process.env.CHAIN_B_CRAWLER_ENABLED = 'false'
cds.test(__dirname + '/../..')
afterAll(() => delete process.env.CHAIN_B_CRAWLER_ENABLED)

const HOUR = 3_600_000
const DAY = 24 * HOUR
const NOW = Date.parse(at('03-10 12:30'))
const SPIKE = Date.parse(at('03-10 09:00'))

beforeAll(async () => {
  const blocks: ChainBBlock[] = []
  const transactions: ChainBTransaction[] = []
  for (let start = Date.parse(at('02-01 00:00')), height = 1; start < Date.parse(at('03-10 12:00')); start += HOUR, height++) {
    const when = new Date(start + 5 * 60_000).toISOString().slice(5, 16).replace('T', ' ')
    blocks.push({ height, when, author: 'P1' })
    const count = start === SPIKE ? 60 : Math.floor(start / DAY) % 2 === 0 ? 10 : 12
    for (let i = 0; i < count; i++) transactions.push({ label: `${height}/${i}`, height, fee: 1 })
  }
  await chainBHistory(blocks, transactions, { indexedHeight: blocks.length, finalizedHeight: blocks.length })
  await foldAll(NOW)
})

test('the injected spike is flagged, and no other hour of the day', async () => {
  const answer = await anomalies('tx.count', '24h', NOW)
  expect(answer).toMatchObject({ metric: 'tx.count', resolution: 'hour', threshold: 3.5, minPoints: 8, windowStart: at('03-09 12:00'), windowEnd: at('03-10 12:00') })
  expect(answer.points).toHaveLength(24)
  expect(answer.flagged).toHaveLength(1)
  const spike = answer.flagged[0]
  expect(spike).toMatchObject({ chain: 'chain-b', bucketStart: at('03-10 09:00'), value: 60, baselineMedian: 11, baselineMad: 1, baselinePoints: 30, baselineKind: 'same-hour-of-day', anomaly: true })
  expect(spike.score).toBeCloseTo(0.6745 * 49, 10)
  for (const point of answer.points.filter(p => p.bucketStart !== spike.bucketStart)) {
    expect(point).toMatchObject({ anomaly: false, baselineMedian: 11, baselineMad: 1, baselinePoints: 30 })
    expect(Math.abs(point.score!)).toBeCloseTo(0.6745, 10)
  }
})

test('days against the previous 30 days: ordinary days are not flagged', async () => {
  // 03-10, with the spike, is today: not in a window of whole days.
  const answer = await anomalies('tx.count', '7d', NOW)
  expect(answer.resolution).toBe('day')
  expect(answer.points).toHaveLength(7)
  expect(answer.flagged).toEqual([])
  for (const point of answer.points) {
    expect(point.value === 240 || point.value === 288).toBe(true)
    expect(point).toMatchObject({ baselineMedian: 264, baselineMad: 24, baselinePoints: 30, baselineKind: 'previous-days', anomaly: false })
    expect(Math.abs(point.score!)).toBeCloseTo(0.6745, 10)
  }
})

test('a metric scored outside the buckets is refused, naming the ones that can be', async () => {
  await expect(anomalies('fee.p95', '24h', NOW)).rejects.toMatchObject({ status: 400, code: 'METRIC_NOT_SUPPORTED', message: expect.stringContaining('tx.count') })
  await expect(anomalies('tx.count', '2d', NOW)).rejects.toMatchObject({ status: 400, code: 'INVALID_WINDOW' })
})
