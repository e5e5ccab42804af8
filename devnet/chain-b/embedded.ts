import cds from '@sap/cds'
import type { ChainBDevnetConfig } from '../../srv/chains/chain-b/config.ts'
import { embedding } from '../shared/lifecycle.ts'
import { ChainBDevnet } from './index.ts'

/**
 * The devnet the bootstrap embeds as chain B's upstream in development and tests. Only the
 * bootstrap loads this module, with a dynamic import and only then: production never loads devnet code.
 */

const embedded = embedding((config: ChainBDevnetConfig & { finalityDepth?: number }) => ChainBDevnet.start({ ...config, port: 0 }))

/** Starts the devnet on a free loopback port (once per process); answers it. */
export async function startEmbeddedDevnet(config: ChainBDevnetConfig & { finalityDepth?: number }): Promise<ChainBDevnet> {
  const started = embedded.current()
  const devnet = await embedded.start(config)
  if (!started && devnet.stateDir) cds.log('chain-b').info(`devnet chain kept in ${devnet.stateDir} (\`npm run devnet -- --chain b reset\` starts a new one)`)
  return devnet
}

export const stopEmbeddedDevnet = embedded.stop

/** The embedded devnet, if the bootstrap started one. */
export const embeddedDevnet = embedded.current
