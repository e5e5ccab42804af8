import cds from '@sap/cds'
import { badInput } from './errors.ts'

/**
 * The query options of a read, checked before the service reads:
 * - `$top` beyond the page bound (CAP would silently cap it), negative `$top`/`$skip` (CAP would
 *   pass them on) and a `$skip` beyond what the databases can count (the SQL would fail); the same
 *   inside `$expand`. The page bound is `cds.query.limit.max`.
 * - `$apply` is not offered: the OData adapter's support for it fails on several transformations.
 * - `$skip` inside `$expand` without `$top` pages with the page bound (the database layer needs a
 *   row count with an offset).
 * - A single property (`Blocks('…')/height`) is read as it is: the options of collections and
 *   entities do not apply to it (the database layer fails on some of them).
 */
export function guardQueryOptions(req: cds.Request) {
  const raw = (req as any).http?.req?.query ?? {}
  if (raw.$apply !== undefined)
    throw badInput('UNSUPPORTED_QUERY_OPTION', '$apply is not offered; use $filter, $select, $expand, $orderby, $top, $skip and $count', '$apply')
  const property = propertyRead(req)
  const misplaced = property && COLLECTION_OPTIONS.find(option => raw[option] !== undefined)
  if (misplaced) throw badInput('QUERY_OPTION_NOT_APPLICABLE', `${misplaced} does not apply to the single property ${property}`, misplaced)
  completeExpandPages((req.query as any)?.SELECT?.columns)
  if (raw.$top !== undefined) checkTop(raw.$top)
  if (raw.$skip !== undefined) checkSkip(raw.$skip)
  if (typeof raw.$expand === 'string') {
    for (const [, option, value] of raw.$expand.matchAll(/\$(top|skip)=([^;)&]*)/gi)) {
      if (option.toLowerCase() === 'top') checkTop(value)
      else checkSkip(value)
    }
  }
}

function checkTop(value: unknown) {
  const max = Number((cds.env as any).query?.limit?.max ?? 1000)
  const top = wholeNumber(value)
  if (top === undefined) throw badInput('INVALID_TOP', `$top must be a whole number from 0 to ${max}, got '${value}'`, '$top')
  if (top > max) throw badInput('TOP_LIMIT_EXCEEDED', `$top=${top} exceeds the page bound of ${max}; page with $skip or follow @odata.nextLink`, '$top')
}

function checkSkip(value: unknown) {
  if (wholeNumber(value) === undefined) throw badInput('INVALID_SKIP', `$skip must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, got '${value}'`, '$skip')
}

/** A whole number from 0 up to 2^53 - 1 written in decimal digits, or undefined. */
function wholeNumber(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^\d{1,16}$/.test(value)) return undefined
  const number = Number(value)
  return Number.isSafeInteger(number) ? number : undefined
}

const COLLECTION_OPTIONS = ['$select', '$expand', '$filter', '$orderby', '$top', '$skip', '$count', '$search', '$compute']

/** The property a read addresses (`…/height` or `…/height/$value`), when it addresses one. */
function propertyRead(req: cds.Request): string | undefined {
  const path = String((req as any).http?.req?.path ?? '')
  const segments = path.split('/').filter(segment => segment && segment !== '$value')
  const last = segments[segments.length - 1]?.split('(')[0]
  const element = last ? (req.target as any)?.elements?.[last] : undefined
  return element && !element.isAssociation ? last : undefined
}

/** An expanded `$skip` without `$top` gets the page bound as its row count, at every level. */
function completeExpandPages(columns: any[] | undefined) {
  for (const column of columns ?? []) {
    if (!Array.isArray(column?.expand)) continue
    if (column.limit?.offset && !column.limit.rows) column.limit.rows = { val: Number((cds.env as any).query?.limit?.max ?? 1000) }
    completeExpandPages(column.expand)
  }
}
