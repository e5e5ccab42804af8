import cds from '@sap/cds'
import { badInput } from './errors.ts'

/**
 * Rejects `$top` beyond the page bound (CAP would silently cap it) and negative `$top`/`$skip`
 * (CAP would pass them on). The bound is `cds.query.limit.max`.
 */
export function guardPaging(req: cds.Request) {
  const raw = (req as any).http?.req?.query ?? {}
  const max = Number((cds.env as any).query?.limit?.max ?? 1000)
  if (raw.$top !== undefined) {
    const top = Number(raw.$top)
    if (!Number.isInteger(top) || top < 0) throw badInput('INVALID_TOP', `$top must be a whole number from 0 to ${max}, got '${raw.$top}'`, '$top')
    if (top > max) throw badInput('TOP_LIMIT_EXCEEDED', `$top=${top} exceeds the page bound of ${max}; page with $skip or follow @odata.nextLink`, '$top')
  }
  if (raw.$skip !== undefined) {
    const skip = Number(raw.$skip)
    if (!Number.isInteger(skip) || skip < 0) throw badInput('INVALID_SKIP', `$skip must be a whole number of 0 or more, got '${raw.$skip}'`, '$skip')
  }
}
