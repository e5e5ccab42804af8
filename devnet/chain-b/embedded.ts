import cds from '@sap/cds'
import type { ChainBDevnetConfig } from '../../srv/chains/chain-b/config.ts'
import { ChainBDevnet } from './index.ts'
import { DevnetStateError } from './state.ts'

/**
 * The devnet the bootstrap embeds as chain B's upstream in development and tests. Only the
 * bootstrap loads this module, with a dynamic import and only then: production never loads devnet code.
 */

let running: ChainBDevnet | undefined

/** Starts the devnet on a free loopback port (once per process); answers it. */
export async function startEmbeddedDevnet(config: ChainBDevnetConfig & { finalityDepth?: number }): Promise<ChainBDevnet> {
  if (running) return running
  running = await ChainBDevnet.start({ ...config, port: 0 }).catch(refuseToStart)
  if (running.stateDir) cds.log('chain-b').info(`devnet chain kept in ${running.stateDir} (\`npm run devnet -- --chain b reset\` starts a new one)`)
  return running
}

function refuseToStart(error: unknown): never {
  if (error instanceof DevnetStateError && typeof (globalThis as { test?: unknown }).test !== 'function') {
    console.error(error.message)
    process.exit(1)
  }
  throw error
}

export async function stopEmbeddedDevnet(): Promise<void> {
  const stopping = running
  running = undefined
  await stopping?.stop()
}

/** The embedded devnet, if the bootstrap started one. */
export const embeddedDevnet = (): ChainBDevnet | undefined => running
