import cds from '@sap/cds'
import { badInput } from './errors.ts'

/**
 * Rejects `$top` beyond the page bound (CAP would silently cap it), negative `$top`/`$skip` (CAP
 * would pass them on) and a `$skip` beyond what the databases can count (CAP would pass it to the
 * SQL, which fails). The same rules hold for `$top` and `$skip` inside `$expand`. The page bound is
 * `cds.query.limit.max`.
 */
export function guardPaging(req: cds.Request) {
  const raw = (req as any).http?.req?.query ?? {}
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
