import cds from '@sap/cds'
import type { DevnetConfig } from '../../srv/chains/chain-a/config.ts'
import { ChainADevnet } from './index.ts'
import { DevnetStateError } from './state.ts'

/**
 * The devnet the bootstrap embeds as chain A's upstream in development and tests. Only the
 * bootstrap loads this module, with a dynamic import and only then: production never loads devnet code.
 */

let running: ChainADevnet | undefined

/** Starts the devnet on a free loopback port (once per process); answers it. */
export async function startEmbeddedDevnet(config: DevnetConfig): Promise<ChainADevnet> {
  if (running) return running
  running = await ChainADevnet.start({ ...config, port: 0 }).catch(refuseToStart)
  if (running.stateDir) cds.log('chain-a').info(`devnet chain kept in ${running.stateDir} (\`npm run devnet -- reset\` starts a new one)`)
  return running
}

/** A saved chain that cannot be resumed ends the start with its one-line message, not a stack. */
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
export const embeddedDevnet = (): ChainADevnet | undefined => running
