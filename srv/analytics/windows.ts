import { badInput } from '../lib/errors.ts'

/**
 * Analytics windows: `1h`, `24h`, `7d`, `30d`. A window ends where the current (incomplete)
 * bucket of its resolution begins, so it holds only complete buckets: the last 60 minutes, 24
 * hours, 7 or 30 UTC days. Its series has one point per bucket at that resolution (1h → minutes,
 * 24h → hours, 7d and 30d → days); the previous window is the same length just before it.
 */

export type Resolution = 'minute' | 'hour' | 'day'

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR
const RESOLUTION_MS: Record<Resolution, number> = { minute: MINUTE, hour: HOUR, day: DAY }

const WINDOWS = {
  '1h': { resolution: 'minute', points: 60 },
  '24h': { resolution: 'hour', points: 24 },
  '7d': { resolution: 'day', points: 7 },
  '30d': { resolution: 'day', points: 30 },
} as const satisfies Record<string, { resolution: Resolution; points: number }>

export type WindowName = keyof typeof WINDOWS
export const WINDOW_NAMES = Object.keys(WINDOWS) as WindowName[]

export interface Window {
  name: WindowName
  resolution: Resolution
  /** Inclusive start, exclusive end, in ms since the epoch (UTC). */
  from: number
  to: number
  previous: { from: number; to: number }
  /** The start of each bucket of the series, oldest first. */
  buckets: number[]
}

/** A window by name; anything else is 400 INVALID_WINDOW listing the valid ones. */
export function windowNamed(name: unknown): WindowName {
  if (typeof name === 'string' && Object.hasOwn(WINDOWS, name)) return name as WindowName
  throw badInput('INVALID_WINDOW', `window must be one of ${WINDOW_NAMES.join(', ')}`, 'window')
}

/** The start of the bucket (of a resolution) that holds a moment. */
export const bucketStart = (at: number, resolution: Resolution) => Math.floor(at / RESOLUTION_MS[resolution]) * RESOLUTION_MS[resolution]

export function windowAt(name: WindowName, now: number): Window {
  const { resolution, points } = WINDOWS[name]
  const step = RESOLUTION_MS[resolution]
  const to = bucketStart(now, resolution)
  const from = to - points * step
  return { name, resolution, from, to, previous: { from: from - points * step, to: from }, buckets: Array.from({ length: points }, (_, i) => from + i * step) }
}

/** The change from the previous window's value in percent; null when there is nothing to compare with (previous 0 or unknown). */
export function changePercent(value: number | null, previous: number | null): number | null {
  if (value === null || previous === null || previous === 0) return null
  return ((value - previous) / Math.abs(previous)) * 100
}
