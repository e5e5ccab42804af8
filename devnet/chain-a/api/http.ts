import type { NextFunction, Request, Response } from 'express'
import { isHex } from '../crypto.ts'

/** Blockfrost's HTTP conventions: error bodies, paging parameters and path-parameter checks. */

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  404: 'Not Found',
  413: 'Request Entity Too Large',
  415: 'Unsupported Media Type',
  500: 'Internal Server Error',
}

const NOT_FOUND_MESSAGE = 'The requested component has not been found.'

export class HttpError extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.status = status
  }
}

export const badRequest = (message: string) => new HttpError(400, message)
export const notFound = () => new HttpError(404, NOT_FOUND_MESSAGE)

/** Answers the value, or 404 when there is none. */
export function found<T>(value: T | undefined | null): T {
  if (value === undefined || value === null) throw notFound()
  return value
}

function sendError(res: Response, status: number, message: string) {
  res.status(status).json({ status_code: status, error: REASONS[status] ?? 'Error', message })
}

export function errorHandler(error: any, _req: Request, res: Response, _next: NextFunction) {
  if (error instanceof HttpError) return sendError(res, error.status, error.message)
  if (error?.type === 'entity.too.large') return sendError(res, 413, `The request body exceeds the limit of ${error.limit} bytes.`)
  if (typeof error?.status === 'number' && error.status >= 400 && error.status < 500) return sendError(res, error.status, error.message)
  sendError(res, 500, 'An unexpected response was received from the backend.')
}

interface Paging {
  count: number
  page: number
  order: 'asc' | 'desc'
}

function integerParameter(query: Request['query'], name: string, min: number, max: number, fallback: number): number {
  const raw = query[name]
  if (raw === undefined) return fallback
  if (typeof raw !== 'string' || !/^\d+$/.test(raw)) throw badRequest(`querystring/${name} must be integer`)
  const value = Number(raw)
  if (value < min) throw badRequest(`querystring/${name} must be >= ${min}`)
  if (value > max) throw badRequest(`querystring/${name} must be <= ${max}`)
  return value
}

export function paging(req: Request): Paging {
  const order = req.query.order ?? 'asc'
  if (order !== 'asc' && order !== 'desc') throw badRequest('querystring/order must be equal to one of the allowed values: asc, desc')
  return {
    count: integerParameter(req.query, 'count', 1, 100, 100),
    page: integerParameter(req.query, 'page', 1, 21474836, 1),
    order,
  }
}

/** One page of a list kept in ascending (chain) order. */
export function paginate<T>(items: readonly T[], { count, page, order }: Paging): T[] {
  const ordered = order === 'desc' ? [...items].reverse() : items
  return ordered.slice((page - 1) * count, page * count)
}

export function hashParameter(value: string, what: string): string {
  if (!isHex(value, 32)) throw badRequest(`Invalid or malformed ${what} hash.`)
  return value.toLowerCase()
}

export function numberParameter(value: string, what: string): number {
  if (!/^\d{1,15}$/.test(value)) throw badRequest(`Invalid or malformed ${what}.`)
  return Number(value)
}
