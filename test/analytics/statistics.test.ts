import { gini, hhi, histogram, nakamoto, percentile, robustScore, topShare } from '../../srv/analytics/statistics.ts'

/** Each figure against a value worked out by hand (in the comment beside it). */

test('Gini: Σ(2i − n − 1)·x_i / (n·Σx) over ascending values', () => {
  expect(gini([1, 1, 1, 1])).toBe(0)
  expect(gini([0, 0, 0, 10])).toBeCloseTo(0.75, 12) // (3·10) / (4·10)
  expect(gini([4, 1, 3, 2])).toBeCloseTo(0.25, 12) // (−3·1 − 1·2 + 1·3 + 3·4) / (4·10) = 10/40
  expect(gini([])).toBe(0)
})

test('Nakamoto: the fewest entities strictly above half', () => {
  expect(nakamoto([10, 40, 20, 30])).toBe(2) // 40 is 40 %, 40 + 30 is 70 %
  expect(nakamoto([50, 50])).toBe(2) // exactly half is not above it
  expect(nakamoto([60, 40])).toBe(1)
  expect(nakamoto([])).toBe(0)
})

test('HHI and the top-N share', () => {
  expect(hhi([100])).toBe(10_000)
  expect(hhi([50, 50])).toBe(5_000) // 50² + 50²
  expect(hhi([25, 25, 25, 25])).toBe(2_500) // 4 · 25²
  expect(topShare([10, 40, 20, 30], 2)).toBeCloseTo(0.7, 12)
})

test('percentiles interpolate between the closest ranks; histograms split the range evenly', () => {
  expect(percentile([4, 1, 3, 2], 50)).toBe(2.5)
  expect(percentile(Array.from({ length: 20 }, (_, i) => i + 1), 95)).toBeCloseTo(19.05, 12) // rank 0.95 · 19 = 18.05
  expect(percentile([], 50)).toBeUndefined()
  expect(histogram([0, 1, 2, 3, 4, 10], 2)).toEqual([{ lower: 0, upper: 5, count: 5 }, { lower: 5, upper: 10, count: 1 }])
})

describe('the robust modified z-score', () => {
  const baseline = [10, 11, 12, 13, 14, 15, 16, 17] // median 13.5, absolute deviations' median (MAD) 2

  test('flags a spike above 3.5 and nothing within the usual range', () => {
    expect(robustScore(30, baseline)).toMatchObject({ median: 13.5, scale: 2, scaleKind: 'mad', anomaly: true, threshold: 3.5, points: 8 })
    expect(robustScore(30, baseline)!.score).toBeCloseTo(5.564625, 9) // 0.6745 · 16.5 / 2
    expect(robustScore(15, baseline)).toMatchObject({ anomaly: false })
    expect(robustScore(15, baseline)!.score).toBeCloseTo(0.505875, 9) // 0.6745 · 1.5 / 2
  })

  test('a MAD of 0 falls back to the mean absolute deviation; no spread or too short a history gives no verdict', () => {
    const flat = [5, 5, 5, 5, 5, 5, 5, 9] // MAD 0; mean absolute deviation 4/8 = 0.5
    expect(robustScore(9, flat)).toMatchObject({ scaleKind: 'mean-absolute-deviation', anomaly: true })
    expect(robustScore(9, flat)!.score).toBeCloseTo(4 / (1.253314 * 0.5), 9)
    expect(robustScore(9, Array(8).fill(5))).toBeUndefined()
    expect(robustScore(100, baseline.slice(0, 7))).toBeUndefined()
  })
})
