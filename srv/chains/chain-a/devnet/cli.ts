import { devnetConfig } from '../config.ts'
import { buildGenesis, describeWallet } from './genesis.ts'
import { ChainADevnet } from './index.ts'

/**
 * `npm run devnet` starts the chain-A devnet on PORT (default 3001) and HOST (default 127.0.0.1).
 * `npm run devnet -- wallets` prints the funded test wallets with their signing keys as JSON.
 * Both refuse to run in production: the test wallets' keys are public.
 */

const DEFAULT_PORT = 3001

export function productionReason(env: NodeJS.ProcessEnv): string | undefined {
  if (env.NODE_ENV === 'production') return 'NODE_ENV is production'
  if ((env.CDS_ENV ?? '').split(',').map(p => p.trim()).includes('production')) return 'CDS_ENV includes the production profile'
  return undefined
}

async function main(args: string[]) {
  const refusal = productionReason(process.env)
  if (refusal) {
    console.error(`The chain-A devnet refuses to run in production (${refusal}); its wallet keys are public.`)
    process.exit(1)
  }
  const config = devnetConfig()
  if (args[0] === 'wallets') {
    console.log(JSON.stringify(buildGenesis(config.seed, config.wallets).testWallets.map(describeWallet), null, 2))
    return
  }
  const devnet = await ChainADevnet.start({ ...config, port: Number(process.env.PORT ?? DEFAULT_PORT), host: process.env.HOST || '127.0.0.1' })
  console.log(devnet.url)
  console.log(devnet.summary())
  // The producer's timer does not hold the process open; the server does until a signal arrives.
  const stop = () => { devnet.stop().then(() => process.exit(0)) }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

if (/devnet[\\/]cli\.[jt]s$/.test(process.argv[1] ?? '')) {
  main(process.argv.slice(2)).catch(error => {
    console.error(error)
    process.exit(1)
  })
}
