import { chainAConfig, devnetConfig, type DevnetConfig } from '../../srv/chains/chain-a/config.ts'
import { signDataWithWallet, signWithWallet, SignerInputError, transactionArgument } from './dev-signer.ts'
import { buildGenesis, describeWallet, type WalletKeys } from './genesis.ts'
import { ChainADevnet } from './index.ts'
import { DevnetStateError, readGenesis, resetState, shown } from './state.ts'

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

/** A failure the CLI reports in one line on stderr, with its exit code. */
class CliError extends Error {
  readonly exitCode: number
  constructor(message: string, exitCode = 1) {
    super(message)
    this.exitCode = exitCode
  }
}

export function productionReason(env: NodeJS.ProcessEnv): string | undefined {
  if (env.NODE_ENV === 'production') return 'NODE_ENV is production'
  if ((env.CDS_ENV ?? '').split(',').map(p => p.trim()).includes('production')) return 'CDS_ENV includes the production profile'
  return undefined
}

/** Why chain A does not use the devnet here, if it does not. */
export function notDevnetReason(): string | undefined {
  const config = chainAConfig()
  if (config.url) return `BLOCKFROST_URL points it at ${config.url}`
  if (!config.devnet) return "cds.requires['chain-a'].devnet (CHAIN_A_DEVNET) is false"
  return undefined
}

async function main(args: string[]) {
  const [command = 'serve', ...rest] = args
  if (['help', '--help', '-h'].includes(command)) {
    console.log(USAGE)
    return
  }
  const refusal = productionReason(process.env)
  if (refusal) throw new CliError(`The chain-A devnet refuses to run in production (${refusal}); its wallet keys are public.`)
  switch (command) {
    case 'serve': return serve()
    case 'wallets': return printWallets()
    case 'reset': return reset()
    case 'sign': return sign(rest)
    case 'sign-data': return signData(rest)
    default: throw new CliError(`Unknown command '${command}'; \`npm run devnet -- help\` lists the commands.`, 2)
  }
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

interface OptionSpec<Required extends string, Optional extends string> {
  required: Required[]
  optional?: Optional[]
  /** The command line shown when a required option is missing. */
  usage: string
}

/** `--name value` or `--name=value` for each of the names, the required ones present, nothing else. */
function parseOptions<Required extends string, Optional extends string = never>(
  args: string[], spec: OptionSpec<Required, Optional>,
): Record<Required, string> & Partial<Record<Optional, string>> {
  const names: string[] = [...spec.required, ...(spec.optional ?? [])]
  const options: Partial<Record<string, string>> = {}
  for (let i = 0; i < args.length; i++) {
    const match = /^--([a-z-]+)(?:=(.*))?$/s.exec(args[i])
    if (!match || !names.includes(match[1])) throw new CliError(`Unexpected argument '${args[i]}'; the command takes ${listed(names)}.`, 2)
    const value = match[2] ?? args[++i]
    if (value === undefined || value === '') throw new CliError(`--${match[1]} needs a value.`, 2)
    options[match[1]] = value
  }
  const missing = spec.required.filter(name => options[name] === undefined)
  if (missing.length) throw new CliError(`Missing ${missing.map(n => `--${n}`).join(' and ')}; usage: ${spec.usage}.`, 2)
  return options as Record<Required, string> & Partial<Record<Optional, string>>
}

/** `--a and --b`, `--a, --b and --c`. */
function listed(names: string[]): string {
  const flags = names.map(name => `--${name}`)
  return flags.length > 1 ? `${flags.slice(0, -1).join(', ')} and ${flags[flags.length - 1]}` : flags.join('')
}

/** One line for what the user can act on; a stack only for what is a defect. */
function report(error: unknown): never {
  if (error instanceof CliError) {
    console.error(error.message)
    process.exit(error.exitCode)
  }
  if (error instanceof SignerInputError || error instanceof DevnetStateError) {
    console.error(error.message)
    process.exit(1)
  }
  if ((error as NodeJS.ErrnoException)?.code === 'EADDRINUSE') {
    console.error(`The chain-A devnet cannot listen: ${(error as Error).message}; set PORT to a free port.`)
    process.exit(1)
  }
  console.error(error)
  process.exit(1)
}

/** `--chain b` (or `--chain=b`) hands the command to the chain-B devnet's CLI; `--chain a` is this one. */
async function dispatch(args: string[]) {
  const at = args.findIndex(arg => arg === '--chain' || arg.startsWith('--chain='))
  if (at < 0) return main(args)
  const chain = args[at].includes('=') ? args[at].split('=')[1] : args[at + 1]
  const rest = args.filter((_, i) => i !== at && (args[at].includes('=') || i !== at + 1))
  if (chain === 'a') return main(rest)
  if (chain !== 'b') throw new CliError(`Unknown chain '${chain ?? ''}'; --chain takes a or b.`, 2)
  const chainB = await import('../chain-b/cli.ts')
  return chainB.main(rest).catch(chainB.report)
}

if (/devnet[\\/]cli\.[jt]s$/.test(process.argv[1] ?? '')) dispatch(process.argv.slice(2)).catch(report)
