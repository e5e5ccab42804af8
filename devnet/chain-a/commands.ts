import { chainAConfig, devnetConfig, type DevnetConfig } from '../../srv/chains/chain-a/config.ts'
import { CliError, parseOptions, type ChainCommands } from '../shared/cli.ts'
import { shown } from '../shared/state.ts'
import { signDataWithWallet, signWithWallet, SignerInputError, transactionArgument } from './dev-signer.ts'
import { buildGenesis, describeWallet, type WalletKeys } from './genesis.ts'
import { ChainADevnet } from './index.ts'
import { readGenesis, resetState } from './state.ts'

/**
 * `npm run devnet -- <command>`: serve the chain-A devnet, print its test wallets, reset its saved
 * chain, sign a transaction or a message (CIP-30 signData) with a test wallet (`help` lists them).
 * Every command refuses to run in production: the test wallets' keys are public.
 */

const DEFAULT_PORT = 3001

const USAGE = `Usage: npm run devnet -- <command>
  serve (or nothing)              serve the chain-A devnet on PORT (${DEFAULT_PORT}) and HOST (127.0.0.1)
  wallets                         print the funded test wallets and their signing keys as JSON
  reset                           delete the saved chain (DEVNET_STATE_DIR, default data/devnet-chain-a), so that
                                  the next start makes a new one; stop the server first
  sign --wallet <n> --tx <tx>     sign an unsigned transaction with test wallet n (1, 2, … or wallet-1, …); <tx> is
                                  its CBOR hex or a file holding it (hex, or a cardano-cli text envelope); prints
                                  JSON { txHash, witnessSetCbor, signedTxCbor } (witnessSetCbor as CIP-30 signTx answers)
  sign-data --wallet <n> --payload <hex> [--address <address>]
                                  sign data as CIP-30 signData(address, payload) does, e.g. a wallet sign-in message's
                                  payloadHex (--message <text> signs the text's UTF-8 bytes instead); the address is
                                  the wallet's base address unless --address names it (or its stake address: the
                                  stake key signs; --address stake for short); prints JSON { signature, key }
  help                            print this list
Refused in production (NODE_ENV or CDS_ENV): the test wallets' keys are public.`

const COMMAND_HINT = 'Commands: npm run devnet -- wallets | reset | sign --wallet <n> --tx <cbor hex or file> | help;'
  + ' sign a message as CIP-30 signData: npm run devnet -- sign-data --wallet <n> --payload <hex> [--address <address>]'

const SIGN_USAGE = 'npm run devnet -- sign --wallet <n> --tx <cbor hex or file>'
const SIGN_DATA_USAGE = 'npm run devnet -- sign-data --wallet <n> (--payload <hex> | --message <text>) [--address <address> | stake]'

/** Why chain A does not use the devnet here, if it does not. */
function notDevnetReason(): string | undefined {
  const config = chainAConfig()
  if (config.url) return `BLOCKFROST_URL points it at ${config.url}`
  if (!config.devnet) return "cds.requires['chain-a'].devnet (CHAIN_A_DEVNET) is false"
  return undefined
}

export const chainA: ChainCommands = {
  chain: 'chain-A',
  usage: USAGE,
  help: 'npm run devnet -- help',
  refusal: reason => `The chain-A devnet refuses to run in production (${reason}); its wallet keys are public.`,
  commands: { serve, wallets: printWallets, reset, sign, 'sign-data': signData },
  isUserError: (error): error is Error => error instanceof SignerInputError,
}

async function serve() {
  const config = devnetConfig()
  const devnet = await ChainADevnet.start({ ...config, port: Number(process.env.PORT ?? DEFAULT_PORT), host: process.env.HOST || '127.0.0.1' })
  console.log(devnet.url)
  console.log(devnet.summary())
  console.log(COMMAND_HINT)
  // The producer's timer does not hold the process open; the server does until a signal arrives.
  const stop = () => { devnet.stop().then(() => process.exit(0)) }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

function printWallets() {
  console.log(JSON.stringify(testWallets(devnetConfig()).map(describeWallet), null, 2))
}

/** The test wallets of the saved chain (its seed and wallet count win), or of the configuration. */
function testWallets(config: DevnetConfig): WalletKeys[] {
  let saved
  try {
    saved = config.stateDir ? readGenesis(config.stateDir) : undefined
  } catch {
    // An unreadable saved chain is reported by the server; its wallets are the configured ones.
  }
  return buildGenesis(saved?.seed ?? config.seed, saved?.wallets ?? config.wallets).testWallets
}

function reset() {
  const { stateDir } = devnetConfig()
  if (!stateDir) {
    console.log('The chain-A devnet keeps its chain in memory here (DEVNET_STATE_DIR=none): nothing to reset, each start makes a new chain.')
    return
  }
  const { deleted } = resetState(stateDir)
  const next = 'The next start makes a new chain (new system start, new transaction hashes); the app then forgets its builds of the old chain.'
  if (deleted === undefined) console.log(`No saved chain-A devnet chain in ${shown(stateDir)}. ${next}`)
  else if (deleted === 'unreadable') console.log(`Deleted the unreadable chain-A devnet chain saved in ${shown(stateDir)}. ${next}`)
  else console.log(`Deleted the chain-A devnet chain saved in ${shown(stateDir)} (system start ${deleted.systemStart}, tip #${deleted.tipHeight}). ${next}`)
}

function devnetOnly() {
  const notDevnet = notDevnetReason()
  if (notDevnet) throw new CliError(`The dev signer signs for the chain-A devnet only, and chain A does not use it here (${notDevnet}).`)
}

async function sign(args: string[]) {
  devnetOnly()
  const options = parseOptions(args, { required: ['wallet', 'tx'], usage: SIGN_USAGE })
  const wallet = walletNamed(options.wallet, testWallets(devnetConfig()))
  console.log(JSON.stringify(await signWithWallet(transactionArgument(options.tx), wallet), null, 2))
}

/** CIP-30 signData by a test wallet: a DataSignature for its base address (payment key) or its stake address (stake key). */
function signData(args: string[]) {
  devnetOnly()
  const options = parseOptions(args, { required: ['wallet'], optional: ['payload', 'message', 'address'], usage: SIGN_DATA_USAGE })
  if ((options.payload === undefined) === (options.message === undefined)) throw new CliError(`Give either --payload or --message; usage: ${SIGN_DATA_USAGE}.`, 2)
  const wallet = walletNamed(options.wallet, testWallets(devnetConfig()))
  const address = options.address === undefined ? wallet.address : options.address === 'stake' ? wallet.stakeAddress : options.address
  const payload = options.payload ?? Buffer.from(options.message!, 'utf8').toString('hex')
  console.log(JSON.stringify(signDataWithWallet(address, payload, wallet), null, 2))
}

function walletNamed(name: string, wallets: WalletKeys[]): WalletKeys {
  const wallet = wallets.find(w => w.name === name || w.name === `wallet-${name}`)
  if (!wallet) throw new CliError(`No devnet test wallet '${name}': the devnet has ${wallets.map(w => w.name).join(', ')} (DEVNET_WALLETS sets how many).`, 2)
  return wallet
}
