import cds from '@sap/cds'
import { startEmbeddedChainA, stopEmbeddedChainA } from './chains/chain-a/index.ts'
import { stableErrorCodes } from './lib/error-codes.ts'
import { deploySqliteFile } from './lib/development-database.ts'
import { answerClientErrors, answerTheRest, assignRequestId, keepServingOnUncaughtErrors, refuseHostileTargets } from './lib/http-safety.ts'
import { guardInputs } from './lib/input-guard.ts'
import { installGateway } from './gateway/index.ts'
import { gatewayConfig } from './gateway/config.ts'

/**
 * Bootstrap: starts the embedded devnets (development and tests) before the services are served,
 * so the chain adapters point at them from the first request on, creates or upgrades a SQLite
 * file database, puts request ids and the hosted gateway (when enabled) in front of every route,
 * guards every service's input, and makes sure no request can stop the server: every error is
 * answered as JSON with a stable code, and nothing that escapes a handler ends the process.
 */
export default async function server(options: any) {
  const after = (cds.middlewares as any).after as unknown[]
  if (!after.includes(stableErrorCodes)) after.unshift(stableErrorCodes)
  await deploySqliteFile()
  const devnet = await startEmbeddedChainA()
  if (devnet) cds.log('chain-a').info('embedded devnet serving a Blockfrost-compatible API at', devnet.url)
  // Refusals before the hosted gateway's metering say that they charged nothing.
  const uncharged: Record<string, number> = gatewayConfig().enabled ? { 'x-access-units-charged': 0 } : {}
  cds.on('bootstrap', (app: any) => app.use(assignRequestId, refuseHostileTargets(uncharged)))
  if (installGateway()) cds.log('gateway').info('hosted gateway on: API keys, metering and route gating in front of every route')
  cds.on('served', services => guardInputs(Object.values(services)))
  cds.on('listening', ({ server }: any) => {
    answerClientErrors(server, uncharged)
    answerTheRest(cds.app)
    // Until it listens, a failure to start ends the process as usual.
    if (typeof (globalThis as any).test !== 'function') keepServingOnUncaughtErrors()
  })
  cds.on('shutdown', () => stopEmbeddedChainA())
  return cds.server(options)
}
