import type { NextFunction, Request, Response } from 'express'

/**
 * PostgREST's conventions, as Koios serves them on every endpoint: horizontal filters
 * (`?<column>=<op>.<value>`), `order`, `offset`/`limit` or a `Range` header, at most 1000 rows per
 * answer, vertical filtering with `select`, `Content-Range` on the answer and JSON error bodies
 * `{ code, details, hint, message }`. The endpoints compute their full result; this module applies
 * the request's filters, order, page and columns to it.
 */

/** Koios' page size (PostgREST's `max-rows`). */
export const MAX_ROWS = 1000

export type Row = Record<string, unknown>

export class PostgrestError extends Error {
  readonly status: number
  readonly code: string
  readonly details: string | null
  readonly hint: string | null
  constructor(status: number, code: string, message: string, details: string | null = null, hint: string | null = null) {
    super(message)
    this.status = status
    this.code = code
    this.details = details
    this.hint = hint
  }
}

/** A request PostgREST could not parse (filters, order, select, range). */
export const parseError = (message: string, details: string | null = null) => new PostgrestError(400, 'PGRST100', message, details)
/** A value of the wrong type for an argument or a column (Postgres' invalid_text_representation). */
export const invalidInput = (message: string) => new PostgrestError(400, '22P02', message)

const unknownColumn = (endpoint: string, column: string) => new PostgrestError(400, '42703', `column ${endpoint}.${column} does not exist`)

/** Query parameters that are not filters: PostgREST's own, and the function's arguments (Koios' start with `_`). */
const RESERVED = new Set(['select', 'order', 'limit', 'offset', 'columns', 'on_conflict'])

type Comparison = (value: unknown) => boolean

interface Query {
  filters: ((row: Row) => boolean)[]
  order: { column: string; descending: boolean; nullsFirst: boolean }[]
  select: string[] | null
  offset: number
  limit: number
}

function single(value: unknown, name: string): string {
  if (typeof value === 'string') return value
  throw parseError(`"failed to parse ${name}"`, `the parameter ${name} was given more than once`)
}

function nonNegativeInteger(text: string, name: string): number {
  if (!/^\d{1,9}$/.test(text)) throw parseError(`"failed to parse ${name} (${text})"`, `${name} must be a non-negative integer`)
  return Number(text)
}

/** Compares a row's value with a filter operand: numbers and integer strings by number, the rest as text. */
function compare(value: unknown, operand: string): number {
  if (typeof value === 'number') {
    const number = Number(operand)
    if (operand.trim() === '' || Number.isNaN(number)) throw invalidInput(`invalid input syntax for type numeric: "${operand}"`)
    return value === number ? 0 : value < number ? -1 : 1
  }
  if (typeof value === 'boolean') {
    if (operand !== 'true' && operand !== 'false') throw invalidInput(`invalid input syntax for type boolean: "${operand}"`)
    return Number(value) - Number(operand === 'true')
  }
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  if (/^-?\d+$/.test(text) && /^-?\d+$/.test(operand)) {
    const [a, b] = [BigInt(text), BigInt(operand)]
    return a === b ? 0 : a < b ? -1 : 1
  }
  return text === operand ? 0 : text < operand ? -1 : 1
}

/** The `in.(a,b,"c,d")` list. */
function listOperand(text: string, raw: string): string[] {
  const match = /^\((.*)\)$/.exec(text)
  if (!match) throw parseError(`"failed to parse filter (${raw})"`, 'an in list is written in.(a,b,c)')
  const items: string[] = []
  const pattern = /\s*(?:"((?:[^"\\]|\\.)*)"|([^,]*))\s*(?:,|$)/gy
  const body = match[1]
  if (body === '') return items
  let found: RegExpExecArray | null
  while (pattern.lastIndex < body.length && (found = pattern.exec(body))) {
    items.push(found[1] !== undefined ? found[1].replace(/\\(.)/g, '$1') : found[2].trim())
  }
  if (body.endsWith(',')) items.push('')
  return items
}

function filterOf(raw: string): Comparison {
  const negated = raw.startsWith('not.')
  const expression = negated ? raw.slice(4) : raw
  const dot = expression.indexOf('.')
  if (dot < 0) throw parseError(`"failed to parse filter (${raw})"`, 'a filter is written <operator>.<value>')
  const operator = expression.slice(0, dot)
  const operand = expression.slice(dot + 1)
  let test: Comparison
  let nullable = false
  switch (operator) {
    case 'eq': test = v => compare(v, operand) === 0; break
    case 'neq': test = v => compare(v, operand) !== 0; break
    case 'gt': test = v => compare(v, operand) > 0; break
    case 'gte': test = v => compare(v, operand) >= 0; break
    case 'lt': test = v => compare(v, operand) < 0; break
    case 'lte': test = v => compare(v, operand) <= 0; break
    case 'in': {
      const items = listOperand(operand, raw)
      test = v => items.some(item => compare(v, item) === 0)
      break
    }
    case 'is': {
      nullable = true
      const what = operand.toLowerCase()
      if (what === 'null') test = v => v === null || v === undefined
      else if (what === 'true' || what === 'false') test = v => v === (what === 'true')
      else if (what === 'unknown') test = v => v === null || v === undefined
      else throw parseError(`"failed to parse filter (${raw})"`, 'is takes null, true, false or unknown')
      break
    }
    default:
      throw parseError(`"failed to parse filter (${raw})"`, `unknown operator ${operator}`)
  }
  // SQL's three-valued logic: a comparison with NULL is never true, negated or not; IS is two-valued.
  if (nullable) return negated ? v => !test(v) : test
  return v => (v === null || v === undefined ? false : negated ? !test(v) : test(v))
}

function parseQuery(req: Request, endpoint: string, columns: readonly string[]): Query {
  const known = new Set(columns)
  const check = (column: string) => {
    if (!known.has(column)) throw unknownColumn(endpoint, column)
    return column
  }
  const filters: Query['filters'] = []
  for (const [name, value] of Object.entries(req.query)) {
    if (RESERVED.has(name) || name.startsWith('_')) continue
    const column = check(name)
    const raws = Array.isArray(value) ? value : [value]
    for (const raw of raws) {
      if (typeof raw !== 'string') throw parseError(`"failed to parse filter (${name})"`)
      const test = filterOf(raw)
      filters.push(row => test(row[column]))
    }
  }

  const order: Query['order'] = []
  if (req.query.order !== undefined) {
    for (const term of single(req.query.order, 'order').split(',')) {
      const [column, ...modifiers] = term.trim().split('.')
      if (!column) throw parseError(`"failed to parse order (${term})"`)
      let descending = false
      let nullsFirst: boolean | undefined
      for (const modifier of modifiers) {
        if (modifier === 'asc' || modifier === 'desc') descending = modifier === 'desc'
        else if (modifier === 'nullsfirst' || modifier === 'nullslast') nullsFirst = modifier === 'nullsfirst'
        else throw parseError(`"failed to parse order (${term})"`, `unknown modifier ${modifier}`)
      }
      // Postgres sorts NULL as the largest value: last when ascending, first when descending.
      order.push({ column: check(column), descending, nullsFirst: nullsFirst ?? descending })
    }
  }

  let select: string[] | null = null
  if (req.query.select !== undefined) {
    const text = single(req.query.select, 'select').trim()
    if (text !== '*' && text !== '') {
      select = text.split(',').map(column => {
        const name = column.trim()
        if (!name) throw parseError(`"failed to parse select parameter (${text})"`)
        return check(name)
      })
    }
  }

  let offset = 0
  let limit = MAX_ROWS
  const range = req.get('range')
  if (range !== undefined && req.query.offset === undefined && req.query.limit === undefined) {
    const match = /^\s*(?:items=)?(\d+)-(\d*)\s*$/.exec(range)
    if (match) {
      offset = Number(match[1])
      if (match[2] !== '') {
        const to = Number(match[2])
        if (to < offset) throw new PostgrestError(416, 'PGRST103', 'Requested range not satisfiable', `the range ${range} ends before it starts`)
        limit = Math.min(MAX_ROWS, to - offset + 1)
      }
    }
  }
  if (req.query.offset !== undefined) offset = nonNegativeInteger(single(req.query.offset, 'offset'), 'offset')
  if (req.query.limit !== undefined) limit = Math.min(MAX_ROWS, nonNegativeInteger(single(req.query.limit, 'limit'), 'limit'))
  return { filters, order, select, offset, limit }
}

function sortRows(rows: Row[], order: Query['order']): Row[] {
  if (order.length === 0) return rows
  const absent = (v: unknown) => v === null || v === undefined
  return [...rows].sort((a, b) => {
    for (const { column, descending, nullsFirst } of order) {
      const [x, y] = [a[column], b[column]]
      if (absent(x) || absent(y)) {
        if (absent(x) && absent(y)) continue
        return absent(x) === nullsFirst ? -1 : 1
      }
      let result: number
      if (typeof x === 'number' && typeof y === 'number') result = x - y
      else if (typeof x === 'string' && typeof y === 'string' && /^-?\d+$/.test(x) && /^-?\d+$/.test(y)) result = BigInt(x) < BigInt(y) ? -1 : BigInt(x) > BigInt(y) ? 1 : 0
      else {
        const [s, t] = [typeof x === 'string' ? x : JSON.stringify(x), typeof y === 'string' ? y : JSON.stringify(y)]
        result = s < t ? -1 : s > t ? 1 : 0
      }
      if (result !== 0) return descending ? -result : result
    }
    return 0
  })
}

/**
 * Answers an endpoint's rows through the request's filters, order, page and columns, with
 * `Content-Range`. `columns` are the endpoint's result columns (filters on others are refused).
 */
export function sendRows(req: Request, res: Response, endpoint: string, columns: readonly string[], rows: Row[], status = 200) {
  const query = parseQuery(req, endpoint, columns)
  const filtered = rows.filter(row => query.filters.every(test => test(row)))
  const page = sortRows(filtered, query.order).slice(query.offset, query.offset + query.limit)
  const shaped = query.select ? page.map(row => Object.fromEntries(query.select!.map(column => [column, row[column] ?? null]))) : page
  res.set('Content-Range', shaped.length === 0 ? '*/*' : `${query.offset}-${query.offset + shaped.length - 1}/*`)
  res.status(status).json(shaped)
}

export function sendError(res: Response, error: PostgrestError) {
  res.status(error.status).json({ code: error.code, details: error.details, hint: error.hint, message: error.message })
}

/** Errors of the Koios routes (and of express' body parsers) as PostgREST answers them. */
export function postgrestErrorHandler(thrown: unknown, _req: Request, res: Response, _next: NextFunction) {
  const error = thrown as { type?: string; limit?: number; status?: unknown; message?: string } | undefined
  if (thrown instanceof PostgrestError) return sendError(res, thrown)
  if (error?.type === 'entity.parse.failed') return sendError(res, new PostgrestError(400, 'PGRST102', 'Empty or invalid json'))
  if (error?.type === 'entity.too.large') return sendError(res, new PostgrestError(413, 'PGRST413', `The request body exceeds the limit of ${error.limit} bytes.`))
  if (typeof error?.status === 'number' && error.status >= 400 && error.status < 500) return sendError(res, new PostgrestError(error.status, 'PGRST000', String(error.message)))
  sendError(res, new PostgrestError(500, 'XX000', 'internal error'))
}
