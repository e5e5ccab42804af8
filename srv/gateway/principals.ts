import cds from '@sap/cds'
import type { KeyRecord } from './accounts.ts'

/**
 * Who CAP sees as the user. Through the gateway, a metered call runs as the key's grant for that
 * product (so the product's own grant checks apply); a free call ($metadata, service documents) as
 * the public principal. Self-hosted, a grant token presented in x-agent-token runs as that grant.
 */
export const PUBLIC_PRINCIPAL = new cds.User({ id: 'gateway:public', roles: ['gateway-public'] } as any)

export interface GrantRecord {
  ID: string
  product: string
  allowedOperations: string[]
}

export function keyPrincipal(key: KeyRecord, grant: GrantRecord) {
  return new cds.User({
    id: `key:${key.ID}`,
    roles: ['product-grant'],
    attr: { keyId: key.ID, grantId: grant.ID, product: grant.product, allowedOperations: grant.allowedOperations },
  } as any)
}

export function grantPrincipal(grant: GrantRecord) {
  return new cds.User({
    id: `grant:${grant.ID}`,
    roles: ['product-grant'],
    attr: { grantId: grant.ID, product: grant.product, allowedOperations: grant.allowedOperations },
  } as any)
}
