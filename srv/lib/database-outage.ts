import { ApiError } from './errors.ts'

/**
 * The database not being there for a request is no failure of the request: while PostgreSQL is
 * down, restarting, refusing connections or cutting them, the answer is 503 DATABASE_UNAVAILABLE;
 * while every pooled connection is busy past the pool's acquire time-out (or, on SQLite, another
 * process holds the file's lock past the busy time-out), 503 DATABASE_BUSY. Both
 * say when to retry. Nothing a caller sends can cause either, so neither is a 5xx without a code.
 */

/** Seconds a caller waits before retrying while the database is away (it usually returns within seconds). */
export const UNAVAILABLE_RETRY_AFTER_S = 2
/** Seconds a caller waits before retrying while the pool is exhausted. */
export const BUSY_RETRY_AFTER_S = 1

/**
 * SQLSTATEs that mean the connection is gone or cannot be made: class 08 (connection exception),
 * 57P01..57P03 (admin or crash shutdown, cannot connect now), 53300 (too many connections).
 */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[1-3]|53300)$/
/** Socket errors of a server that is not reachable or dropped the connection. */
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])
/** What the pg driver and PostgreSQL say when a connection is lost or refused (no SQLSTATE on some of them). */
const UNAVAILABLE_MESSAGE = /not queryable|The database cannot be reached|Connection terminated|is not currently accepting connections|the database system is (starting up|shutting down|in recovery mode)|terminating connection due to administrator command|Client was closed/i
/** The pool's acquire time-out: @cap-js/db-service's own pool and generic-pool (`cds.features.use_generic_pool`). */
const POOL_TIMEOUT_MESSAGE = /Pool resource could not be acquired within|ResourceRequest timed out/
/** SQLite's lock held by another process (a second instance on the same file) beyond the busy time-out. */
const SQLITE_BUSY_MESSAGE = /database is locked|SQLITE_BUSY/

export type DatabaseOutage = 'unavailable' | 'busy'

/** Whether the error, or one it wraps (`cause`), says the database is away or its pool exhausted. */
export function databaseOutageOf(error: unknown): DatabaseOutage | undefined {
  for (let e: any = error, depth = 0; e && typeof e === 'object' && depth < 5; e = e.cause, depth++) {
    const message = String(e.message ?? '')
    if (POOL_TIMEOUT_MESSAGE.test(message) || SQLITE_BUSY_MESSAGE.test(message) || e.errcode === 5) return 'busy'
    const sqlState = typeof e.sqlState === 'string' ? e.sqlState : typeof e.code === 'string' ? e.code : ''
    if (UNAVAILABLE_SQLSTATE.test(sqlState) || UNAVAILABLE_ERRNO.has(sqlState) || UNAVAILABLE_MESSAGE.test(message)) return 'unavailable'
    if (Array.isArray(e.errors) && e.errors.some((inner: unknown) => databaseOutageOf(inner))) return 'unavailable'
  }
  return undefined
}

/** The answer to a request that met the outage, or undefined when the error is something else. */
export function databaseOutageAnswer(error: unknown): ApiError | undefined {
  switch (databaseOutageOf(error)) {
    case 'unavailable':
      return new ApiError(503, 'DATABASE_UNAVAILABLE', 'The database is not reachable at the moment; nothing was charged, retry shortly', { retryAfter: UNAVAILABLE_RETRY_AFTER_S })
    case 'busy':
      return new ApiError(503, 'DATABASE_BUSY', 'Every database connection of this instance is busy; nothing was charged, retry shortly', { retryAfter: BUSY_RETRY_AFTER_S })
    default:
      return undefined
  }
}
