import { isApiError } from '../../lib/errors.ts'
import { stopIfAnswered } from '../../lib/request-work.ts'
import { observeUpstream } from '../../metrics/instruments.ts'
import { NOT_FOUND, backoffSeconds, upstreamStatusError, type UpstreamOperation } from './upstream-errors.ts'

/**
 * How an adapter calls its upstream, whichever API it speaks: reads tried again when the upstream
 * failed (never a submit), the upstream's Retry-After honoured (calls fail at once while it asked
 * to be left alone), 404 of a read that may find nothing answered as null.
 */

const RETRY_DELAY_MS = 200
/** Failures worth one more try of an idempotent read: the upstream may answer the next time. */
const RETRYABLE_CODES = new Set(['UPSTREAM_UNAVAILABLE', 'UPSTREAM_TIMEOUT'])

/** Turns what a call threw into an ApiError; `remainingBackoff(status)` tells the seconds still to wait after that status. */
export type TranslateError = (error: unknown, operation: UpstreamOperation, remainingBackoff: (status: number) => number | undefined) => unknown

const pause = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

export class UpstreamCalls {
  private readonly retries: number
  private readonly translate: TranslateError
  private backoff: { until: number; status: number } | undefined

  constructor(retries: number, translate: TranslateError) {
    this.retries = Number.isFinite(retries) ? Math.max(0, Math.floor(retries)) : 0
    this.translate = translate
  }

  /** One upstream call; reads are tried again up to `retries` times when the upstream failed. */
  async call<T>(operation: UpstreamOperation, fetch: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      stopIfAnswered()
      this.failFastWhileBackingOff(operation)
      try {
        return await observeUpstream('chain-a', fetch)
      } catch (error) {
        const mapped = this.translate(error, operation, status => this.remainingBackoff(status))
        const retryable = operation !== 'submit' && isApiError(mapped) && RETRYABLE_CODES.has(mapped.code) && mapped.retryAfter === undefined
        if (!retryable || attempt >= this.retries) throw mapped
        await pause(RETRY_DELAY_MS * (attempt + 1))
      }
    }
  }

  /** A read that may find nothing: 404 answers null. */
  async find<T>(fetch: () => Promise<T>): Promise<T | null> {
    try {
      return await this.call('find', fetch)
    } catch (error) {
      if (isApiError(error) && error.code === NOT_FOUND) return null
      throw error
    }
  }

  /** Every answer's status and Retry-After: a status that asks for it puts the upstream under back-off. */
  noteBackoff(status: number, retryAfter: string | string[] | null | undefined): void {
    const now = Date.now()
    const seconds = backoffSeconds(status, retryAfter ?? undefined, now)
    if (seconds === undefined) return
    const until = now + seconds * 1000
    if (!this.backoff || until > this.backoff.until) this.backoff = { until, status }
  }

  private remainingBackoff(status?: number): number | undefined {
    const backoff = this.backoff
    if (!backoff || (status !== undefined && status !== backoff.status)) return undefined
    const remaining = backoff.until - Date.now()
    if (remaining > 0) return Math.ceil(remaining / 1000)
    this.backoff = undefined
    return undefined
  }

  /** While the upstream asked to be left alone, calls fail at once with what it last said. */
  private failFastWhileBackingOff(operation: UpstreamOperation): void {
    const remaining = this.remainingBackoff()
    if (remaining !== undefined && this.backoff) throw upstreamStatusError(this.backoff.status, operation, 'it asked not to be called for a while', remaining)
  }
}
