import cds from '@sap/cds'
import type { EventEmitter } from 'node:events'
import { applyChainAEnvironment, chainAConfig, devnetConfig, embedsDevnet } from './chains/chain-a/config.ts'
import * as chainBConfig from './chains/chain-b/config.ts'
import { stableErrorCodes } from './lib/error-codes.ts'
import { deploySqliteFile } from './lib/development-database.ts'
import { createSecondaryIndexes } from './lib/secondary-indexes.ts'
import { answerClientErrors, answerTheRest, assignRequestId, keepServingOnUncaughtErrors, refuseHostileTargets } from './lib/http-safety.ts'
import { guardInputs } from './lib/input-guard.ts'
import { followRouteAliases } from './lib/route-aliases.ts'
import { installGateway } from './gateway/index.ts'
import { installKeyLanes } from './key-lanes/index.ts'
import { gatewayConfig, rememberListeningPort } from './gateway/config.ts'
import { serveZkConfig } from './zk-config/index.ts'
import { serveFrontEnds } from './front-ends/index.ts'
import { tieWorkToAnswer } from './lib/request-work.ts'
import { limitStatementsToRequestDeadline } from './lib/statement-deadline.ts'
import { boundAnswerSize } from './lib/answer-size.ts'

/**
 * Bootstrap: creates or upgrades a SQLite file database, connects chain A before the services are
 * served (with the embedded devnet as its upstream in development and tests), puts request ids and
 * the hosted gateway (when enabled) in front of every route, guards every service's input, and
 * makes sure no request can stop the server: every error is answered as JSON with a stable code,
 * and nothing that escapes a handler ends the process.
 */
export default async function server(options: any) {
  // Each part that runs in the background (the chains, their devnets, the job runner, the
  // follower, the prover, the gateway's sweeper) stops itself on 'shutdown': more than Node's default 10.
  ;(cds as unknown as EventEmitter).setMaxListeners(32)
  const after = (cds.middlewares as any).after as unknown[]
  if (!after.includes(stableErrorCodes)) after.unshift(stableErrorCodes)
  limitStatementsOnceConnected()
  await connectChainA()
  await connectChainB()
  // The SQLite file gets the model the server loads (loading it once), before anything reads the database.
  let loaded: object | undefined
  cds.once('loaded', (csn: object) => (loaded = csn))
  const events = cds as unknown as EventEmitter
  events.prependListener('served', () => createSecondaryIndexes())
  events.prependListener('served', () => deploySqliteFile(loaded))
  // Refusals before the hosted gateway's metering say that they charged nothing.
  const uncharged: Record<string, number> = gatewayConfig().enabled ? { 'x-access-units-charged': 0 } : {}
  cds.on('bootstrap', (app: any) => app.use(assignRequestId, tieWorkToAnswer, refuseHostileTargets(uncharged), followRouteAliases))
  if (installGateway()) cds.log('gateway').info('hosted gateway on: API keys, metering and route gating in front of every route')
  installKeyLanes()
  // After the gateway: its refund sees the refusal of an answer too large.
  cds.on('bootstrap', (app: any) => app.use(['/odata', '/api'], boundAnswerSize))
  cds.on('bootstrap', (app: any) => app.use('/zk-config', serveZkConfig))
  cds.on('bootstrap', serveFrontEnds)
  cds.on('bootstrap', (app: any) => devWallet && app.use('/dev-wallet', devWallet))
  cds.on('served', services => guardInputs(Object.values(services)))
  cds.on('listening', ({ server }: any) => {
    rememberListeningPort(server.address()?.port)
    answerClientErrors(server, uncharged)
    answerTheRest(cds.app)
    // Until it listens, a failure to start ends the process as usual.
    if (typeof (globalThis as any).test !== 'function') {
      keepServingOnUncaughtErrors()
      endWithinGraceAfterSignals()
    }
  })
  // The front ends are served by serveFrontEnds; CAP's own static folder and index page stay off.
  return cds.server({ ...options, static: false, index: false })
}

/** Statements run for a request end at its deadline (on PostgreSQL), whenever the database is connected. */
function limitStatementsOnceConnected() {
  if (cds.db) return limitStatementsToRequestDeadline(cds.db)
  cds.on('connect', (service: cds.Service) => {
    if (service.name === 'db') limitStatementsToRequestDeadline(service)
  })
}

/** The development wallet's routes (/dev-wallet), where the chain-A devnet is embedded (never in production), unless CHAIN_A_DEV_WALLET=false. */
let devWallet: ((req: any, res: any, next: () => void) => void) | undefined

/**
 * Chain A before any service asks for it: the documented variables mapped into
 * `cds.requires['chain-a']`, the embedded devnet as its upstream when that is configured (its code
 * is loaded only then), and the chain-a service connected with those options.
 */
export async function connectChainA(): Promise<void> {
  const options = applyChainAEnvironment()
  if (embedsDevnet(chainAConfig(options))) {
    const { startEmbeddedDevnet, stopEmbeddedDevnet } = await import('./chains/chain-a/embedded-devnet.ts')
    const devnet = await startEmbeddedDevnet(devnetConfig(options))
    cds.log('chain-a').info('embedded devnet serving a Blockfrost-compatible API at', devnet.url)
    Object.assign(options, { network: 'devnet', credentials: { ...options.credentials, url: devnet.url } })
    payPurchasesTo(devnet.wallets().at(-1)?.address)
    cds.on('shutdown', stopEmbeddedDevnet)
    if (process.env.CHAIN_A_DEV_WALLET !== 'false') {
      const { devWalletRoutes } = await import('./chains/chain-a/devnet/dev-wallet.ts')
      devWallet = devWalletRoutes(devnet)
    }
  }
  await cds.connect.to('chain-a')
}

/** The purchase lane's payments go to the embedded devnet's last test wallet, unless an address is configured. */
function payPurchasesTo(address: string | undefined) {
  const requires = cds.env.requires as Record<string, any>
  const gateway = (requires.gateway ??= {})
  gateway.payTo ??= address
}

/**
 * Chain B the same way: the documented variables mapped into `cds.requires['chain-b']`, the embedded
 * devnet as its upstream in development and tests (unless an indexer URL is configured), and the
 * chain-b service connected. A missing production secret ends the start with one line naming it.
 */
export async function connectChainB(): Promise<void> {
  const options = chainBConfig.applyChainBEnvironment()
  if (chainBConfig.embedsDevnet(options)) {
    const { startEmbeddedDevnet, stopEmbeddedDevnet } = await import('./chains/chain-b/embedded-devnet.ts')
    const devnet = await startEmbeddedDevnet({ ...chainBConfig.devnetConfig(options), finalityDepth: chainBConfig.chainBConfig(options).finalityDepth })
    cds.log('chain-b').info('embedded devnet serving the Midnight indexer API at', devnet.indexerUrl)
    Object.assign(options, { network: 'devnet', indexerUrl: devnet.indexerUrl, indexerWsUrl: devnet.indexerWsUrl, submitUrl: devnet.submitUrl, vaultAddress: devnet.vaultAddress })
    cds.on('shutdown', stopEmbeddedDevnet)
  }
  try {
    await cds.connect.to('chain-b')
  } catch (error) {
    if (error instanceof chainBConfig.MissingSecretError && typeof (globalThis as { test?: unknown }).test !== 'function') {
      console.error(error.message)
      process.exit(1)
    }
    throw error
  }
}

/** How long a stop signal leaves the shutdown listeners before the process ends anyway. */
const SHUTDOWN_GRACE_MS = 10_000

/**
 * CAP ends the process once every shutdown listener has settled; one that never settles (work
 * waiting on a database already closed, say) or that fails would keep it running after a stop
 * signal. The process ends at the latest SHUTDOWN_GRACE_MS after the signal, saying so.
 */
function endWithinGraceAfterSignals() {
  const arm = (signal: string) => () => {
    setTimeout(() => {
      cds.log('server').warn(`shutdown after ${signal} did not finish within ${SHUTDOWN_GRACE_MS} ms; ending the process`)
      process.exit(0)
    }, SHUTDOWN_GRACE_MS).unref()
  }
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(signal, arm(signal))
}
