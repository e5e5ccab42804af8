/** A check that did not answer in time. */
export class CheckTimedOut extends Error {
  readonly ms: number

  constructor(ms: number) {
    super(`no answer within ${ms} ms`)
    this.ms = ms
  }
}

/** The promise's outcome, or CheckTimedOut after `ms`; the timer never keeps the process alive. */
export function withinTime<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CheckTimedOut(ms)), ms)
    timer.unref()
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/**
 * Why a check failed, in words that are safe to show anyone: the time-out, or the error's stable
 * code (an ApiError's, a system error's errno name), never its message, which may carry an
 * upstream's address with its credentials.
 */
export function failureReason(error: unknown): string {
  if (error instanceof CheckTimedOut) return error.message
  const { code, cause } = (error ?? {}) as { code?: unknown; cause?: { code?: unknown } }
  const named = [code, cause?.code].find(value => typeof value === 'string' && /^[A-Z][A-Z0-9_]{1,60}$/.test(value))
  return named ? `failed: ${named}` : 'failed'
}
