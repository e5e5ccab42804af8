import cds from '@sap/cds'
import type { EventEmitter } from 'node:events'
import type { Server } from 'node:http'
import { applyChainAEnvironment, chainAConfig, chainAEnabled, devnetConfig, embedsDevnet } from './chains/chain-a/config.ts'
import * as chainBConfig from './chains/chain-b/config.ts'
import { deploySqliteFile } from './lib/development-database.ts'
import { untilTheSchemaIsDeployed } from './lib/schema-wait.ts'
import { createSecondaryIndexes } from './lib/secondary-indexes.ts'
import { checkTheDatabaseAnswers } from './lib/production-database.ts'
import { isProduction } from './lib/settings.ts'
import { stopGracefullyOnSignals } from './lib/graceful-stop.ts'

/**
 * Bootstrap, step by step. The request pipeline (request ids, the hosted gateway, the guards,
 * stable error codes) is the local plugin plugins/request-pipeline, which CAP loads before this.
 */
export default async function server(options: any) {
  allowAListenerForEveryBackgroundPart()
  if (isProduction()) await checkTheDatabaseAnswers()
  await untilTheSchemaIsDeployed()
  await connectChainA()
  await connectChainB()
  prepareTheDatabaseWhenServed()
  serveTheDevelopmentWallet()
  // Before `cds serve` says it listens: a signal sent the moment it does finds the graceful stop in place.
  const events = cds as unknown as EventEmitter
  events.prependListener('listening', ({ server }: { server: Server }) => stopGracefullyOnSignals(server))
  // The front ends are served by the pipeline; CAP's own static folder and index page stay off.
  return cds.server({ ...options, static: false, index: false })
}

/**
 * Each part that runs in the background (the chains, their devnets, the job runner, the followers,
 * the prover, the gateway's sweeper) stops itself on 'shutdown': more than Node's default 10.
 */
function allowAListenerForEveryBackgroundPart() {
  ;(cds as unknown as EventEmitter).setMaxListeners(32)
}

/**
 * The SQLite file gets the model the server loads (loading it once), and the secondary indexes,
 * before anything reads the database.
 */
function prepareTheDatabaseWhenServed() {
  let loaded: object | undefined
  cds.once('loaded', (csn: object) => (loaded = csn))
  const events = cds as unknown as EventEmitter
  events.prependListener('served', () => createSecondaryIndexes())
  events.prependListener('served', () => deploySqliteFile(loaded))
}

/** The development wallet's routes, after the pipeline's, where the chain-A devnet is embedded. */
function serveTheDevelopmentWallet() {
  cds.on('bootstrap', (app: any) => devWallet && app.use('/dev-wallet', devWallet))
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
  if (!chainAEnabled()) turnOffBackgroundWork(options, 'follower')
  if (embedsDevnet(chainAConfig(options))) {
    const { startEmbeddedDevnet, stopEmbeddedDevnet } = await import('../devnet/chain-a/embedded.ts')
    const devnet = await startEmbeddedDevnet(devnetConfig(options))
    cds.log('chain-a').info('embedded devnet serving a Blockfrost-compatible API at', devnet.url)
    // The devnet speaks each kind's API: Blockfrost's at its root, Koios's under /koios/api/v1, Ogmios's and Kupo's under /ogmios and /kupo.
    const credentials = { url: devnet.url, koiosUrl: `${devnet.url}/koios/api/v1`, ogmiosUrl: `${devnet.url.replace(/^http/, 'ws')}/ogmios`, kupoUrl: `${devnet.url}/kupo` }
    Object.assign(options, { network: 'devnet', credentials: { ...options.credentials, ...credentials } })
    payPurchasesTo(devnet.wallets().at(-1)?.address)
    cds.on('shutdown', stopEmbeddedDevnet)
    if (process.env.CHAIN_A_DEV_WALLET !== 'false') {
      const { devWalletRoutes } = await import('../devnet/chain-a/dev-wallet.ts')
      devWallet = devWalletRoutes(devnet)
    }
  }
  await cds.connect.to('chain-a')
}

/** A chain turned off runs none of its background work (its follower, crawler, job runner), which would ask its upstream. */
function turnOffBackgroundWork(options: Record<string, unknown>, ...parts: string[]) {
  for (const part of parts) options[part] = { ...(options[part] as object), enabled: false }
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
  if (!chainBConfig.chainBEnabled()) turnOffBackgroundWork(options, 'crawler', 'jobs')
  if (chainBConfig.embedsDevnet(options)) {
    const { startEmbeddedDevnet, stopEmbeddedDevnet } = await import('../devnet/chain-b/embedded.ts')
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
