import cds from '@sap/cds'
import { LRUCache } from 'lru-cache'
import { FailedAttempts } from '#cds-models/gateway'
import { DEFAULT_CAPACITY } from '../lib/token-buckets.ts'
import { forDatabase, tableOf } from '../lib/plain-sql.ts'

/**
 * Failed attempts per subject (a client address, a key) in a fixed window, counted in the database
 * (gateway.FailedAttempts), so that every instance counts the same failures: N instances allow as
 * many as one. Only failing attempts are counted and asked about: a request that succeeds never
 * reaches the database for its limit, so a client behind the same address (one NAT, one router,
 * one machine) is never locked out by someone else's mistakes. A subject found blocked is
 * remembered here until its window ends, so its further failures cost no round trip.
 */

const { SELECT, DELETE } = cds.ql

export class FailureWindow {
  private readonly scope: string
  private readonly limit: number
  private readonly windowMs: number
  /** Subjects known to be blocked, with the end of their window (bounded: the least recently seen go first). */
  private readonly blockedHere: LRUCache<string, number>

  /** `scope` tells this limit's rows from the others' (at most 20 characters). */
  constructor(scope: string, limit: number, windowSeconds: number) {
    this.scope = scope
    this.limit = limit
    this.windowMs = windowSeconds * 1000
    this.blockedHere = new LRUCache({ max: DEFAULT_CAPACITY, ttl: Math.max(1, this.windowMs) })
  }

  /**
   * Counts one failed attempt of the subject. Answers the seconds until it may fail again once it
   * has failed more than the limit in its window (this attempt included), else undefined.
   */
  async fail(subject: string, now = Date.now()): Promise<number | undefined> {
    const knownUntil = this.blockedHere.get(subject)
    if (knownUntil !== undefined && knownUntil > now) return secondsUntil(knownUntil, now)
    const window = await countFailure(this.scope, subject.slice(0, SUBJECT_LENGTH), now, this.windowMs)
    if (window.failures <= this.limit) return undefined
    this.blockedHere.set(subject, window.ends)
    return secondsUntil(window.ends, now)
  }
}

/** The subject column's size: an address, a /64 prefix or a key id fit with room to spare. */
const SUBJECT_LENGTH = 100

const secondsUntil = (until: number, now: number) => Math.max(1, Math.ceil((until - now) / 1000))

let upsert: string | undefined

/**
 * One failure more in the subject's window, or the first of a new window when the last one ended:
 * one atomic upsert (concurrent failures on any instance each count once), then the row as it is now.
 */
async function countFailure(scope: string, subject: string, now: number, windowMs: number): Promise<{ failures: number; ends: number }> {
  const table = tableOf(FailedAttempts)
  upsert ??= forDatabase(`INSERT INTO ${table} (scope, subject, failures, windowEnds) VALUES (?, ?, 1, ?) `
    + `ON CONFLICT (scope, subject) DO UPDATE SET `
    + `failures = CASE WHEN ${table}.windowEnds <= ? THEN 1 ELSE ${table}.failures + 1 END, `
    + `windowEnds = CASE WHEN ${table}.windowEnds <= ? THEN excluded.windowEnds ELSE ${table}.windowEnds END`)
  return cds.tx(async tx => {
    await tx.run(upsert!, [scope, subject, now + windowMs, now, now])
    const row = await tx.run(SELECT.one.from(FailedAttempts).columns('failures', 'windowEnds').where({ scope, subject }))
    return { failures: Number(row?.failures ?? 1), ends: Number(row?.windowEnds ?? now + windowMs) }
  })
}

/** Removes the rows of windows that have ended (they count nothing any more), in the current transaction. */
export async function forgetEndedWindows(now = Date.now()): Promise<void> {
  await DELETE.from(FailedAttempts).where({ windowEnds: { '<=': now } })
}
