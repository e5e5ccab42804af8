import cds from '@sap/cds'
import type { DevnetConfig } from '../../srv/chains/chain-a/config.ts'
import { embedding } from '../shared/lifecycle.ts'
import { ChainADevnet } from './index.ts'

/**
 * The devnet the bootstrap embeds as chain A's upstream in development and tests. Only the
 * bootstrap loads this module, with a dynamic import and only then: production never loads devnet code.
 */

const embedded = embedding((config: DevnetConfig) => ChainADevnet.start({ ...config, port: 0 }))

/** Starts the devnet on a free loopback port (once per process); answers it. */
export async function startEmbeddedDevnet(config: DevnetConfig): Promise<ChainADevnet> {
  const started = embedded.current()
  const devnet = await embedded.start(config)
  if (!started && devnet.stateDir) cds.log('chain-a').info(`devnet chain kept in ${devnet.stateDir} (\`npm run devnet -- reset\` starts a new one)`)
  return devnet
}

export const stopEmbeddedDevnet = embedded.stop

/** The embedded devnet, if the bootstrap started one. */
export const embeddedDevnet = embedded.current
