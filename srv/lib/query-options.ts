import cds from '@sap/cds'
import { badInput } from './errors.ts'

/**
 * The query options of a read, checked before the service reads:
 * - `$top` beyond the page bound (CAP would silently cap it), negative `$top`/`$skip` (CAP would
 *   pass them on) and a `$skip` beyond what the databases can count (the SQL would fail); the same
 *   inside `$expand`. The page bound is `cds.query.limit.max`.
 * - `$apply` is not offered: the OData adapter's support for it fails on several transformations.
 */
export function guardQueryOptions(req: cds.Request) {
  const raw = (req as any).http?.req?.query ?? {}
  if (raw.$apply !== undefined)
    throw badInput('UNSUPPORTED_QUERY_OPTION', '$apply is not offered; use $filter, $select, $expand, $orderby, $top, $skip and $count', '$apply')
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
