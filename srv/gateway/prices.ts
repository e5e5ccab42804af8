import cds from '@sap/cds'
import { Packs, Prices } from '#cds-models/gateway'

/** The unit table (db/seed/gateway-Prices.csv): units per call of each route class. */

const { SELECT } = cds.ql

/** Units by route class, as metering charges them. */
export async function loadPrices(): Promise<Map<string, number>> {
  const rows = await cds.tx(() => SELECT.from(Prices).columns('routeClass', 'units'))
  return new Map(rows.map(row => [row.routeClass!, Number(row.units)]))
}

/** The table, the packs on sale and the pricing rules, as /prices serves them. */
export async function priceList() {
  const [prices, packs] = await cds.tx(() => Promise.all([
    SELECT.from(Prices).columns('routeClass', 'units', 'description').orderBy('units', 'routeClass'),
    SELECT.from(Packs).columns('name', 'units', 'lovelace', 'plan_name', 'description').where({ active: true }).orderBy('lovelace'),
  ]))
  return {
    value: prices.map(price => ({ routeClass: price.routeClass, units: Number(price.units), description: price.description })),
    packs: packs.map(pack => ({ name: pack.name, units: Number(pack.units), lovelace: String(pack.lovelace), plan: pack.plan_name, description: pack.description })),
    rules: [
      'A GET of an entity set or entity costs entity-read; a forwarded action or function costs its class (read-action unless the service prices it as build, submit, signing-request, chainb-write, proof or analytics).',
      'Units are reserved before the call and refunded when the answer is an error (4xx or 5xx) or no answer comes within the timeout.',
      'Free: $metadata, service documents, the chain-B verify lane, /zk-config, /mcp (the MCP tool servers as an npm package), /me, /me/ledger, /me/rotate, /me/revoke, /prices, /health, and the key lanes (/keys and /topup cost their pack, paid in lovelace over x402).',
      'Packs are bought with POST /keys (a new key) or POST /topup (the calling key) over x402 version 2: the first call answers 402 with the payment requirements.',
    ],
  }
}
