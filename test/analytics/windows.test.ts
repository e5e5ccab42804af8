import { METRICS, metricNamed } from '../../srv/analytics/catalogue.ts'
import { EVALUATIONS } from '../../srv/analytics/figures.ts'
import { changePercent, windowAt, windowNamed, WINDOW_NAMES } from '../../srv/analytics/windows.ts'

/** Windows hold complete buckets only, at the resolution of their series; names are checked. */

const NOW = Date.UTC(2026, 10, 24, 13, 27, 45, 500) // 2026-11-24 13:27:45.5 UTC

test.each([
  ['1h', 'minute', 60, Date.UTC(2026, 10, 24, 12, 27), Date.UTC(2026, 10, 24, 13, 27)],
  ['24h', 'hour', 24, Date.UTC(2026, 10, 23, 13), Date.UTC(2026, 10, 24, 13)],
  ['7d', 'day', 7, Date.UTC(2026, 10, 17), Date.UTC(2026, 10, 24)],
  ['30d', 'day', 30, Date.UTC(2026, 9, 25), Date.UTC(2026, 10, 24)],
] as const)('%s: %s buckets, %i of them, ending where the current bucket begins', (name, resolution, points, from, to) => {
  const window = windowAt(name, NOW)
  expect(window).toMatchObject({ name, resolution, from, to, previous: { from: from - (to - from), to: from } })
  expect(window.buckets).toHaveLength(points)
  expect(window.buckets[0]).toBe(from)
  expect(window.buckets.at(-1)! + (to - from) / points).toBe(to)
})

test('unknown windows and metrics answer 400 with the valid values', () => {
  expect(WINDOW_NAMES).toEqual(['1h', '24h', '7d', '30d'])
  expect(() => windowNamed('2h')).toThrow(expect.objectContaining({ status: 400, code: 'INVALID_WINDOW', message: expect.stringContaining('1h, 24h, 7d, 30d') }))
  expect(() => windowNamed('toString')).toThrow(expect.objectContaining({ code: 'INVALID_WINDOW' }))
  expect(metricNamed('tx.count')).toMatchObject({ chains: ['chain-a', 'chain-b'], unit: 'transactions' })
  expect(metricNamed('tx.shielded').chains).toEqual(['chain-b'])
  expect(() => metricNamed('tx.counts')).toThrow(expect.objectContaining({ status: 400, code: 'UNKNOWN_METRIC', message: expect.stringContaining('tx.count') }))
  expect(new Set(METRICS.map(metric => metric.name)).size).toBe(METRICS.length)
  for (const metric of METRICS) expect(metric.name).toMatch(/^[a-z]+\.[a-z0-9_]+$/)
  // Every metric of the catalogue is worked out somehow, and nothing is worked out that the catalogue does not list.
  expect(Object.keys(EVALUATIONS).sort()).toEqual(METRICS.map(metric => metric.name).sort())
})

test('change in percent against the previous window; nothing to compare with gives null', () => {
  expect(changePercent(150, 100)).toBe(50)
  expect(changePercent(50, 100)).toBe(-50)
  expect(changePercent(10, 0)).toBeNull()
  expect(changePercent(null, 5)).toBeNull()
})
