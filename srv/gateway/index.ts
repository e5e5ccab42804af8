import cds from '@sap/cds'
import type { Application } from 'express'
import { gatewayConfig } from './config.ts'
import { Gateway } from './gateway.ts'
import { enforceGrants } from './grant-policy.ts'

/**
 * Puts the hosted gateway in front of every route when it is enabled (development and the hosted
 * deployment; not self-hosted), and lets the products check grant principals in every profile.
 */
export function installGateway(): Gateway | undefined {
  cds.on('served', services => enforceGrants(Object.values(services)))
  const config = gatewayConfig()
  if (!config.enabled) return undefined
  const gateway = new Gateway(config)
  cds.on('bootstrap', (app: Application) => {
    // Routing must see the path exactly as the gateway classified it.
    app.set('case sensitive routing', true)
    app.set('strict routing', true)
    app.use(gateway.middleware)
  })
  cds.on('served', services => gateway.start(Object.values(services)))
  cds.on('shutdown', () => gateway.stop())
  return gateway
}
