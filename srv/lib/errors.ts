/**
 * Errors with a stable, upper-case code. CAP renders `status`, `code`, `message` and `target`
 * of a thrown error as the OData error body `{ error: { code, message, target } }`.
 */
export class ApiError extends Error {
  status: number
  code: string
  target?: string
  /** Seconds after which a retry may succeed (429/503 from an upstream). */
  retryAfter?: number

  constructor(status: number, code: string, message: string, extra: { target?: string; retryAfter?: number } = {}) {
    super(message)
    this.status = status
    this.code = code
    if (extra.target) this.target = extra.target
    if (extra.retryAfter !== undefined) this.retryAfter = extra.retryAfter
  }
}

export const badInput = (code: string, message: string, target?: string) => new ApiError(400, code, message, { target })
export const notFound = (code: string, message: string, target?: string) => new ApiError(404, code, message, { target })

export const isApiError = (e: unknown): e is ApiError => e instanceof ApiError
