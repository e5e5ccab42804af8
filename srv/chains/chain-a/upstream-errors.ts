import { BlockfrostClientError, BlockfrostServerError } from '@blockfrost/blockfrost-js'
import { ApiError } from '../../lib/errors.ts'

/**
 * How chain-A upstream failures become ApiErrors. `find` reads may legitimately find nothing
 * (404 becomes an internal UPSTREAM_NOT_FOUND the adapter turns into null); `read` must find
 * something; `submit` sends a transaction.
 */
export type UpstreamOperation = 'find' | 'read' | 'submit'

export const NOT_FOUND = 'UPSTREAM_NOT_FOUND'

/** Statuses after which the upstream's Retry-After is honoured before it is called again. */
const BACKOFF_STATUSES = new Set([402, 418, 429, 503])
const DEFAULT_RATE_LIMIT_SECONDS = 1

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
])

/** Retry-After as whole seconds (at least 1): either delta-seconds or an HTTP date. */
function parseRetryAfter(header: string | string[] | undefined, now: number): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim()
  if (!value) return undefined
  if (/^\d+$/.test(value)) return Math.max(1, Number(value))
  const at = Date.parse(value)
  if (Number.isNaN(at)) return undefined
  return Math.max(1, Math.ceil((at - now) / 1000))
}

/** Seconds the adapter must leave the upstream alone after answering `status`, if any. */
export function backoffSeconds(status: number, retryAfterHeader: string | string[] | undefined, now: number): number | undefined {
  if (!BACKOFF_STATUSES.has(status)) return undefined
  return parseRetryAfter(retryAfterHeader, now) ?? (status === 429 ? DEFAULT_RATE_LIMIT_SECONDS : undefined)
}

const retryHint = (retryAfter: number | undefined) => (retryAfter === undefined ? '' : `; retry after ${retryAfter} s`)

function rejectionReason(error: BlockfrostServerError): string {
  const { body } = error
  if (body === undefined || body === null || body === '') return error.message
  return typeof body === 'string' ? body : JSON.stringify(body)
}

/** The ApiError for an upstream HTTP status; `retryAfter` is the remaining back-off, if any. */
export function upstreamStatusError(status: number, operation: UpstreamOperation, upstreamMessage: string, retryAfter?: number): ApiError {
  const extra = { retryAfter }
  switch (status) {
    case 400:
      return operation === 'submit'
        ? new ApiError(400, 'TX_REJECTED', `chain-A rejected the transaction: ${upstreamMessage}`)
        : new ApiError(400, 'UPSTREAM_BAD_REQUEST', `chain-A upstream rejected the request: ${upstreamMessage}`)
    case 402:
      return new ApiError(503, 'UPSTREAM_QUOTA_EXCEEDED', `chain-A upstream request quota of this service is exhausted${retryHint(retryAfter)}`, extra)
    case 403:
      return new ApiError(503, 'UPSTREAM_AUTH_FAILED', 'chain-A upstream refused the credentials of this service (the configured Blockfrost project id is missing, wrong or for another network)')
    case 404:
      if (operation === 'find') return new ApiError(404, NOT_FOUND, `chain-A upstream found nothing: ${upstreamMessage}`)
      if (operation === 'submit') return new ApiError(503, 'UPSTREAM_UNAVAILABLE', 'chain-A upstream does not accept transaction submissions (404)')
      return new ApiError(503, 'UPSTREAM_UNAVAILABLE', `chain-A upstream has no data where it must have some (404): ${upstreamMessage}`)
    case 418:
      return new ApiError(503, 'UPSTREAM_BANNED', `chain-A upstream has banned this service for flooding${retryHint(retryAfter)}`, extra)
    case 425:
      return new ApiError(503, 'UPSTREAM_MEMPOOL_FULL', 'chain-A mempool is full; retry the submission later')
    case 429:
      return new ApiError(429, 'UPSTREAM_RATE_LIMITED', `chain-A upstream rate limited this call; retry after ${retryAfter ?? DEFAULT_RATE_LIMIT_SECONDS} s`, {
        retryAfter: retryAfter ?? DEFAULT_RATE_LIMIT_SECONDS,
      })
  }
  if (status >= 500) return new ApiError(503, 'UPSTREAM_UNAVAILABLE', `chain-A upstream failed with ${status}: ${upstreamMessage}${retryHint(retryAfter)}`, extra)
  return new ApiError(503, 'UPSTREAM_UNAVAILABLE', `chain-A upstream answered an unexpected ${status}: ${upstreamMessage}`)
}

function clientError(error: BlockfrostClientError, timeoutMs: number): ApiError {
  if (error.code === 'ETIMEDOUT') return new ApiError(503, 'UPSTREAM_TIMEOUT', `chain-A upstream did not answer within ${timeoutMs} ms`)
  if (UNREACHABLE_CODES.has(error.code)) return new ApiError(503, 'UPSTREAM_UNAVAILABLE', `chain-A upstream is unreachable (${error.code})`)
  return new ApiError(503, 'UPSTREAM_UNAVAILABLE', `chain-A upstream answered unreadably (${error.code}: ${error.message})`)
}

/**
 * Translates what a Blockfrost SDK call threw. `remainingBackoff(status)` answers the seconds
 * still to wait when that status put the upstream under back-off.
 */
export function upstreamError(
  error: unknown,
  operation: UpstreamOperation,
  timeoutMs: number,
  remainingBackoff: (status: number) => number | undefined,
): unknown {
  if (error instanceof BlockfrostServerError) {
    const message = operation === 'submit' && error.status_code === 400 ? rejectionReason(error) : error.message
    return upstreamStatusError(error.status_code, operation, message, remainingBackoff(error.status_code))
  }
  if (error instanceof BlockfrostClientError) return clientError(error, timeoutMs)
  return error
}
