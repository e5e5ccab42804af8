import cds from '@sap/cds'
import { ApiError } from '../lib/errors.ts'

/**
 * The products' own check of a grant principal (through the gateway or with x-agent-token): the
 * operation must be in the grant's allowed operations, and operations marked `@gateway.closed`
 * (operator functions such as HSM signing) are never allowed to a grant. The gateway refuses those
 * before they get here; this is the product refusing too.
 */

/** What a grant principal carries (see principals.ts). */
interface GrantAttributes {
  grantId?: string
  allowedOperations?: string[]
}

/** The annotations of a definition this check reads. */
type Annotated = { '@gateway.product'?: string; '@gateway.closed'?: boolean } | undefined

/**
 * The products' check of a grant principal, run as the request enters a product's service (see
 * srv/lib/service-entry.ts for why there and not as a `before` handler).
 */
export function checkGrant(srv: cds.ApplicationService, req: cds.Request) {
  if (!(srv as { definition?: Annotated }).definition?.['@gateway.product']) return
  const attr = req.user?.attr as GrantAttributes | undefined
  if (!attr?.grantId) return
  const operation = operationName(req)
  const target = req.target as { actions?: Record<string, Annotated> } | undefined
  const definition = (srv.actions?.[operation] as Annotated) ?? target?.actions?.[operation]
  if (definition?.['@gateway.closed']) throw new ApiError(403, 'GRANT_FORBIDDEN', `${operation} is an operator function; no grant may call it`)
  if (!allows(attr.allowedOperations ?? [], srv.name, operation)) throw new ApiError(403, 'GRANT_FORBIDDEN', `This grant does not allow ${srv.name}:${operation}`)
}

/** Reads are named by their entity set, operations by their name. */
function operationName(req: cds.Request): string {
  if (req.event === 'READ') return req.target?.name?.split('.').pop() ?? 'READ'
  return req.event
}

export function allows(allowed: string[], service: string, operation: string): boolean {
  return allowed.some(rule => rule === '*' || rule === `${service}:*` || rule === `${service}:${operation}`)
}
