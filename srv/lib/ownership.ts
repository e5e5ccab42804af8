import cds from '@sap/cds'

/**
 * Tenancy (DESIGN 5): every record a caller creates carries its owner, the CAP user id (`key:<keyId>`
 * through the hosted gateway, the same across rotations; self-hosted the user, or `grant:<grantId>`
 * for an x-agent-token). A caller reads and acts only on its own records; an operator (role `admin`)
 * and CAP's privileged user on all. Entity-set reads are restricted in each service's access.cds;
 * the actions add `ownedBy()` to every lookup and guarded UPDATE by id, so another owner's id finds
 * nothing and answers the same 404 as an id that does not exist.
 */

const OPERATOR_ROLE = 'admin'

const callerOf = (user?: cds.User): cds.User => user ?? cds.context?.user ?? cds.User.anonymous

/** The owner of what the caller creates. */
export const ownerOf = (user?: cds.User): string => String(callerOf(user).id)

/** Whether the caller sees and acts on every owner's records. */
function seesAll(user?: cds.User): boolean {
  const caller = callerOf(user) as cds.User & { _is_privileged?: boolean }
  return caller._is_privileged === true || caller.is(OPERATOR_ROLE)
}

/** The condition to add to a query by id: none for an operator, the caller's owner otherwise. */
export const ownedBy = (user?: cds.User): { owner?: string } => (seesAll(user) ? {} : { owner: ownerOf(user) })

/**
 * CAP 10 applies `@restrict` to a read's target and to the entities of its navigation path, but not
 * to what it `$expand`s. Every service reads with this hook (`before READ *`), so an expanded
 * association whose target has an owner answers only the caller's rows too, whatever links a
 * row might carry.
 */
export function ownExpands(req: cds.Request) {
  const { owner } = ownedBy(req.user)
  const columns = (req.query as any)?.SELECT?.columns
  if (owner && Array.isArray(columns)) limitExpands(columns, req.target, owner)
}

function limitExpands(columns: any[], entity: any, owner: string) {
  for (const column of columns) {
    if (!Array.isArray(column?.expand) || !Array.isArray(column.ref)) continue
    const target = column.ref.reduce((from: any, step: any) => from?.elements?.[step?.id ?? step]?._target, entity)
    if (!target) continue
    if (target.elements?.owner) {
      const mine = [{ ref: ['owner'] }, '=', { val: owner }]
      column.where = column.where?.length ? [{ xpr: column.where }, 'and', ...mine] : mine
    }
    limitExpands(column.expand, target, owner)
  }
}
