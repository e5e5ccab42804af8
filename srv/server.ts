import cds from '@sap/cds'
import { startEmbeddedChainA, stopEmbeddedChainA } from './chains/chain-a/index.ts'
import { stableErrorCodes } from './lib/error-codes.ts'
import { deploySqliteFile } from './lib/development-database.ts'
import { installGateway } from './gateway/index.ts'

/**
 * Bootstrap: starts the embedded devnets (development and tests) before the services are served,
 * so the chain adapters point at them from the first request on, creates or upgrades a SQLite
 * file database, puts the hosted gateway in front (when enabled), and gives framework errors stable
 * codes.
 */
export default async function server(options: any) {
  const after = (cds.middlewares as any).after as unknown[]
  if (!after.includes(stableErrorCodes)) after.unshift(stableErrorCodes)
  await deploySqliteFile()
  const devnet = await startEmbeddedChainA()
  if (devnet) cds.log('chain-a').info('embedded devnet serving a Blockfrost-compatible API at', devnet.url)
  const gateway = installGateway()
  if (gateway) cds.log('gateway').info('hosted gateway on: API keys, metering and route gating in front of every route')
  cds.on('shutdown', () => stopEmbeddedChainA())
  return cds.server(options)
}
