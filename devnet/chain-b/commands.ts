import { chainBConfig, devnetConfig } from '../../srv/chains/chain-b/config.ts'
import type { ChainCommands } from '../shared/cli.ts'
import { shown } from '../shared/state.ts'
import { ChainBDevnet } from './index.ts'
import { resetState } from './state.ts'

/**
 * `npm run devnet -- --chain b <command>`: serve the chain-B devnet standalone, or reset its saved
 * chain. Refused in production. The app reaches a standalone devnet with
 * CHAIN_B_INDEXER_URL=http://127.0.0.1:8088/api/v4/graphql (its submission API and WebSocket are
 * found beside it).
 */

const DEFAULT_PORT = 8088

const USAGE = `Usage: npm run devnet -- --chain b <command>
  serve (or nothing)   serve the chain-B devnet on PORT (${DEFAULT_PORT}) and HOST (127.0.0.1): the Midnight indexer
                       API at /api/v4/graphql (subscriptions at /api/v4/graphql/ws), the submission API at
                       /api/v4/submit, /api/v4/sponsors/<publicKey> and /api/v4/faucet, control at /api/v4/devnet/*
  reset                delete the saved chain (CHAIN_B_DEVNET_STATE_DIR, default data/devnet-chain-b); stop the server first
  help                 print this list
Refused in production (NODE_ENV or CDS_ENV).`

export const chainB: ChainCommands = {
  chain: 'chain-B',
  usage: USAGE,
  help: 'npm run devnet -- --chain b help',
  refusal: reason => `The chain-B devnet refuses to run in production (${reason}).`,
  commands: { serve, reset },
}

async function serve() {
  const devnet = await ChainBDevnet.start({ ...devnetConfig(), finalityDepth: chainBConfig().finalityDepth, port: Number(process.env.PORT ?? DEFAULT_PORT), host: process.env.HOST || '127.0.0.1' })
  console.log(devnet.indexerUrl)
  console.log(devnet.summary())
  const stop = () => { devnet.stop().then(() => process.exit(0)) }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

function reset() {
  const { stateDir } = devnetConfig()
  if (!stateDir) {
    console.log('The chain-B devnet keeps its chain in memory here (CHAIN_B_DEVNET_STATE_DIR=none): nothing to reset.')
    return
  }
  const { deleted } = resetState(stateDir)
  if (deleted === undefined) console.log(`No saved chain-B devnet chain in ${shown(stateDir)}.`)
  else if (deleted === 'unreadable') console.log(`Deleted the unreadable chain-B devnet chain saved in ${shown(stateDir)}.`)
  else console.log(`Deleted the chain-B devnet chain saved in ${shown(stateDir)} (made ${deleted.createdAt}, tip #${deleted.tipHeight}). The next start makes a new chain.`)
}
