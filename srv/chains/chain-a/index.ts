import cds from '@sap/cds'
import type { ChainAPort } from './port.ts'
import { chainAConfig, devnetConfig, type ChainAConfig } from './config.ts'
import { BlockfrostAdapter } from './blockfrost.ts'
import { ChainADevnet } from './devnet/index.ts'
import { DevnetStateError } from './devnet/state.ts'

/**
 * The one way services reach chain A. The upstream is always spoken to through the Blockfrost
 * adapter: hosted Blockfrost in production, the embedded devnet (a real local chain with a
 * Blockfrost-compatible API) in development and tests, or any compatible server via BLOCKFROST_URL.
 */

let port: ChainAPort | undefined
let devnet: ChainADevnet | undefined

/** Starts the embedded devnet when configured (development, tests) and not pointed elsewhere. */
export async function startEmbeddedChainA(): Promise<ChainADevnet | undefined> {
  const config = chainAConfig()
  if (!config.devnet || config.url || devnet) return devnet
  devnet = await ChainADevnet.start({ ...devnetConfig(), port: 0 }).catch(refuseToStart)
  if (devnet.stateDir) cds.log('chain-a').info(`devnet chain kept in ${devnet.stateDir} (\`npm run devnet -- reset\` starts a new one)`)
  port = undefined
  return devnet
}

/** A saved chain that cannot be resumed ends the start with its one-line message, not a stack. */
function refuseToStart(error: unknown): never {
  if (error instanceof DevnetStateError && typeof (globalThis as any).test !== 'function') {
    console.error(error.message)
    process.exit(1)
  }
  throw error
}

export async function stopEmbeddedChainA(): Promise<void> {
  const running = devnet
  devnet = undefined
  port = undefined
  await running?.stop()
}

export function embeddedDevnet(): ChainADevnet | undefined {
  return devnet
}

export function chainAUpstreamConfig(): ChainAConfig {
  const config = chainAConfig()
  if (devnet) return { ...config, url: devnet.url, network: 'devnet' }
  return config
}

export function chainA(): ChainAPort {
  if (!port) port = new BlockfrostAdapter(chainAUpstreamConfig())
  return port
}
