import cds from '@sap/cds'
import { ProductGrant } from '#cds-models/gateway'
import type { KeyGrant, KeyRecord } from './accounts.ts'
import type { Product } from './keys.ts'

/**
 * Who CAP sees as the user. Through the gateway, a metered call runs as the key's grant for that
 * product (so the product's own grant checks apply); a free call ($metadata, service documents) as
 * the public principal. Self-hosted, a grant token presented in x-agent-token runs as that grant.
 */
export const PUBLIC_PRINCIPAL = user({ id: 'gateway:public', roles: ['gateway-public'] })

export interface GrantRecord {
  ID: string
  product: string
  allowedOperations: string[]
  /** Whom the grant acts for (another gateway's key): the owner of what it creates instead of the grant. */
  subject?: string | null
}

/** The key's active grant on a product, if it holds one. */
export function activeGrant(key: KeyRecord, product: Product): KeyGrant | undefined {
  return key.grants.find(grant => grant.product === product && grant.status === ProductGrant.status.active)
}

/** A key on a key-only product (one no grant is for): no grant, so no grant check and nothing owned. */
export function keyOnlyPrincipal(key: KeyRecord) {
  return user({ id: `key:${key.ID}`, roles: ['api-key'], attr: { keyId: key.ID } })
}

export function keyPrincipal(key: KeyRecord, grant: GrantRecord) {
  return user({
    id: `key:${key.ID}`,
    roles: ['product-grant'],
    attr: { keyId: key.ID, grantId: grant.ID, product: grant.product, allowedOperations: grant.allowedOperations },
  })
}

export function grantPrincipal(grant: GrantRecord) {
  return user({
    id: grant.subject ?? `grant:${grant.ID}`,
    roles: ['product-grant'],
    attr: { grantId: grant.ID, product: grant.product, allowedOperations: grant.allowedOperations },
  })
}

/** cds-types declare user attributes as strings only; CAP keeps any value, and the grant check reads a list. */
function user(init: { id: string; roles: string[]; attr?: Record<string, unknown> }) {
  return new cds.User(init as ConstructorParameters<typeof cds.User>[0])
}
