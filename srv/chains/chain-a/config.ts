import cds from '@sap/cds'
import { dirname, resolve } from 'node:path'
import { requiresOptions, valueAt, type Environment, type OptionValue, type Tree } from '../../lib/requires-options.ts'
import { sqliteFile } from '../../lib/development-database.ts'
import { isProduction, optionalValue, profiles } from '../../lib/settings.ts'
import { urlProblem } from '../../lib/production-settings.ts'

/**
 * The options of the chain-a service, `cds.requires['chain-a']`: set per profile in package.json,
 * by CAP's own variables (`CDS_REQUIRES_CHAIN_A_NETWORK`, `cds_requires_chain_a_credentials_url`,
 * `CDS_CONFIG`...), and by the documented variables of ENVIRONMENT, which the bootstrap maps into
 * cds.env once at start (lib/requires-options.ts). Inside the code there is one set of names: the options'.
 */

/** Kinds of cached chain-A data that expire; each has its own TTL in seconds. */
export const TTL_KINDS = ['tip', 'address', 'account', 'pool', 'drep', 'parameters', 'network', 'epoch', 'transaction', 'assetHistory'] as const
export type TtlKind = (typeof TTL_KINDS)[number]

export const DEFAULT_TTL_SECONDS: Record<TtlKind, number> = {
  tip: 5,
  address: 20,
  account: 60,
  pool: 300,
  drep: 300,
  parameters: 300,
  network: 60,
  epoch: 60,
  transaction: 20,
  assetHistory: 60,
}

const envNameForTtl = (kind: TtlKind) => 'CHAIN_A_TTL_' + kind.replace(/[A-Z]/g, c => '_' + c).toUpperCase()

/** The documented environment variables (README, Configuration) and the option each one sets. */
export const ENVIRONMENT: Environment = {
  CHAIN_A_KIND: 'kind',
  CHAIN_A_NETWORK: 'network',
  BLOCKFROST_PROJECT_ID: 'credentials.projectId',
  BLOCKFROST_URL: 'credentials.url',
  KOIOS_URL: 'credentials.koiosUrl',
  KOIOS_TOKEN: 'credentials.koiosToken',
  OGMIOS_URL: 'credentials.ogmiosUrl',
  KUPO_URL: 'credentials.kupoUrl',
  OGMIOS_SYNC_FROM: 'ogmiosSyncFrom',
  OGMIOS_INDEX_BLOCKS: 'ogmiosIndexBlocks',
  CHAIN_A_DEVNET: 'devnet',
  CHAIN_A_TIMEOUT_MS: 'timeoutMs',
  CHAIN_A_RETRIES: 'retries',
  CHAIN_A_CLIENT_RATE_LIMIT: 'clientRateLimit',
  CHAIN_A_SPEND_LOCK_S: 'spendLockSeconds',
  CHAIN_A_EXPIRY_INTERVAL_MS: 'expiryIntervalMs',
  CHAIN_A_BUILDER: 'builder',
  ...Object.fromEntries(TTL_KINDS.map(kind => [envNameForTtl(kind), `ttl.${kind}`])),
  DEVNET_SEED: 'devnetOptions.seed',
  DEVNET_BLOCK_TIME_MS: 'devnetOptions.blockTimeMs',
  DEVNET_SLOT_LENGTH_MS: 'devnetOptions.slotLengthMs',
  DEVNET_EPOCH_LENGTH: 'devnetOptions.epochLength',
  DEVNET_SECURITY_PARAM: 'devnetOptions.securityParam',
  DEVNET_ACTIVITY: 'devnetOptions.activity',
  DEVNET_WALLETS: 'devnetOptions.wallets',
  DEVNET_LATENCY_MS: 'devnetOptions.latencyMs',
  DEVNET_STATE_DIR: 'devnetOptions.stateDir',
}

type Value = OptionValue

/** `cds.requires['chain-a']`: each value as configured (text from the environment, typed from package.json). */
export interface ChainAOptions {
  kind?: string
  impl?: string
  enabled?: Value
  network?: string
  credentials?: { projectId?: string; url?: string; [more: string]: unknown }
  devnet?: Value
  timeoutMs?: Value
  retries?: Value
  clientRateLimit?: Value
  ttl?: Partial<Record<TtlKind, Value>>
  spendLockSeconds?: Value
  expiryIntervalMs?: Value
  builder?: string
  devnetOptions?: Partial<Record<keyof DevnetConfig, Value>>
  [option: string]: unknown
}

/** The options with their defaults, as the service and the adapter use them. */
/** The upstreams chain A speaks to, each a `kind` of the chain-a service. */
export const CHAIN_A_KINDS = ['blockfrost', 'koios', 'ogmios'] as const
export type ChainAKind = (typeof CHAIN_A_KINDS)[number]

export interface ChainAConfig {
  kind: ChainAKind
  /** preprod | preview | mainnet (hosted Blockfrost or Koios), devnet (the embedded devnet) */
  network: string
  projectId?: string
  /** A Blockfrost-compatible base URL (the devnet, or a self-hosted server). */
  url?: string
  /** Koios's base URL (…/api/v1): the devnet's, an instance of one's own; the hosted one of the network when unset. */
  koiosUrl?: string
  /** A Koios bearer token (its free tier needs none). */
  koiosToken?: string
  /** Ogmios's WebSocket URL (ws:// or wss://). */
  ogmiosUrl?: string
  /** Kupo's base URL. */
  kupoUrl?: string
  /** Where the ogmios kind's chain index starts: origin, tip, or a point `<slot>.<block hash>`. */
  ogmiosSyncFrom: OgmiosSyncFrom
  /** The most blocks the ogmios kind's chain index holds; older ones are forgotten. */
  ogmiosIndexBlocks: number
  /** Start the embedded devnet and use it as the upstream (development and test profiles only). */
  devnet: boolean
  timeoutMs: number
  /** Retries for idempotent reads (never for submit). */
  retries: number
  /** blockfrost-js client-side limiter (10 req/s, burst 500). */
  clientRateLimit: boolean
  ttlSeconds: Record<TtlKind, number>
  /**
   * How long a build locks the outputs it spends against the same owner's other builds: long
   * enough to sign, never beyond the build's validity. A signing request extends the locks to its
   * own expiry; a submission to the build's validity.
   */
  spendLockSeconds: number
  /** How often the expiry jobs of builds and signing requests run (at least 100 ms). */
  expiryIntervalMs: number
  /** The default transaction builder: csl or buildooor. */
  builder: string
}

export interface DevnetConfig {
  seed: string
  /** Milliseconds between blocks; 0 means blocks are produced only on request (tests). */
  blockTimeMs: number
  slotLengthMs: number
  /** Slots per epoch. */
  epochLength: number
  /** Security parameter k: blocks after which a block is immutable. */
  securityParam: number
  /** Run the built-in activity generator (transfers, mints, metadata). */
  activity: boolean
  /** Number of funded test wallets printed by `npm run devnet -- wallets`. */
  wallets: number
  /** Milliseconds every HTTP answer is delayed, to behave like a remote upstream (default 0). */
  latencyMs?: number
  /** Folder the chain is kept in across restarts; undefined keeps it in memory (a new chain each start). */
  stateDir?: string
}

const options = requiresOptions<ChainAOptions>('chain-a', ENVIRONMENT)
const { optionName, reader } = options

/**
 * `cds.requires['chain-a']` with CAP's split variables and the documented ones laid over it, as a
 * new object: the environment wins over package.json.
 */
export const chainAOptions = (requires?: Tree, env?: NodeJS.ProcessEnv): ChainAOptions => options.options(requires, env)

/** At start: the environment mapped into `cds.requires['chain-a']` itself, for the service to find in its options. */
export const applyChainAEnvironment = (requires?: Tree, env?: NodeJS.ProcessEnv): ChainAOptions => options.apply(requires, env)

export function chainAConfig(options: ChainAOptions = chainAOptions()): ChainAConfig {
  const read = reader(options)
  const production = isProduction()
  const spendLockSeconds = read.number('spendLockSeconds', 900)
  if (spendLockSeconds <= 0) throw new Error(`Setting ${optionName('spendLockSeconds')} must be a positive number of seconds, got '${spendLockSeconds}'`)
  return {
    kind: chainAKind(read.string('kind', 'blockfrost')),
    network: read.string('network', 'preprod'),
    projectId: read.optional('credentials.projectId'),
    url: read.optional('credentials.url'),
    koiosUrl: read.optional('credentials.koiosUrl'),
    koiosToken: read.optional('credentials.koiosToken'),
    ogmiosUrl: read.optional('credentials.ogmiosUrl'),
    kupoUrl: read.optional('credentials.kupoUrl'),
    ogmiosSyncFrom: ogmiosSyncFrom(read.string('ogmiosSyncFrom', production ? 'tip' : 'origin')),
    ogmiosIndexBlocks: positiveInteger('ogmiosIndexBlocks', read.number('ogmiosIndexBlocks', 2160)),
    devnet: read.boolean('devnet', !production),
    timeoutMs: read.number('timeoutMs', 10000),
    retries: read.number('retries', production ? 1 : 0),
    clientRateLimit: read.boolean('clientRateLimit', production),
    ttlSeconds: Object.fromEntries(TTL_KINDS.map(kind => [kind, read.number(`ttl.${kind}`, DEFAULT_TTL_SECONDS[kind])])) as Record<TtlKind, number>,
    spendLockSeconds,
    expiryIntervalMs: Math.max(100, read.number('expiryIntervalMs', 5000)),
    builder: read.string('builder', 'csl'),
  }
}

export type OgmiosSyncFrom = 'origin' | 'tip' | { slot: number; id: string }

/** OGMIOS_SYNC_FROM: `origin`, `tip`, or a point `<slot>.<block hash>`. */
export function ogmiosSyncFrom(text: string): OgmiosSyncFrom {
  if (text === 'origin' || text === 'tip') return text
  const point = /^(\d{1,15})\.([0-9a-f]{64})$/.exec(text)
  if (point) return { slot: Number(point[1]), id: point[2] }
  throw new Error(`Setting ${optionName('ogmiosSyncFrom')} must be origin, tip or a point <slot>.<block hash>, got '${text.slice(0, 100)}'`)
}

function positiveInteger(option: string, value: number): number {
  if (Number.isInteger(value) && value > 0) return value
  throw new Error(`Setting ${optionName(option)} must be a positive whole number, got '${value}'`)
}

function chainAKind(kind: string): ChainAKind {
  if ((CHAIN_A_KINDS as readonly string[]).includes(kind)) return kind as ChainAKind
  throw new Error(`Setting ${optionName('kind')} must be one of ${CHAIN_A_KINDS.join(', ')}, got '${kind.slice(0, 40)}'`)
}

/** The upstream URL configured for the kind in use (none: the hosted service of the network, or the embedded devnet). */
export function configuredUpstream(config: ChainAConfig): string | undefined {
  if (config.kind === 'koios') return config.koiosUrl
  if (config.kind === 'ogmios') return config.ogmiosUrl
  return config.url
}

export function devnetConfig(options: ChainAOptions = chainAOptions()): DevnetConfig {
  const read = reader(options)
  return {
    seed: read.string('devnetOptions.seed', 'chain-access-devnet'),
    blockTimeMs: read.number('devnetOptions.blockTimeMs', 2000),
    slotLengthMs: read.number('devnetOptions.slotLengthMs', 1000),
    epochLength: read.number('devnetOptions.epochLength', 600),
    securityParam: read.number('devnetOptions.securityParam', 10),
    activity: read.boolean('devnetOptions.activity', true),
    wallets: read.number('devnetOptions.wallets', 4),
    latencyMs: read.number('devnetOptions.latencyMs', 0),
    stateDir: devnetStateDir(valueAt(options, 'devnetOptions.stateDir')),
  }
}

/**
 * devnetOptions.stateDir (DEVNET_STATE_DIR), relative to the project; `none` (or false) keeps the
 * chain in memory. By default the test profile keeps it in memory, and otherwise it is kept beside
 * the SQLite database file (`data/devnet-chain-a`), so a database and its chain stay together.
 */
function devnetStateDir(configured: Value): string | undefined {
  const folder = optionalValue(configured === false ? 'none' : configured)
  if (folder !== undefined) return /^(none|false|memory)$/i.test(folder) ? undefined : resolve(cds.root, folder)
  if (profiles().includes('test')) return undefined
  return resolve(dirname(sqliteFile() ?? resolve(cds.root, 'data', 'chain-access.sqlite')), 'devnet-chain-a')
}

/**
 * Whether the bootstrap starts the embedded devnet: in the development and test profiles only
 * (never in production), when the devnet option is on and no upstream URL is configured.
 */
export function embedsDevnet(config: ChainAConfig): boolean {
  const local = profiles().some(profile => profile === 'development' || profile === 'test')
  return local && !isProduction() && config.devnet && !configuredUpstream(config)
}

/** Whether chain A is served (CHAIN_A_ENABLED, on by default); off, its routes answer 503 CHAIN_A_DISABLED. */
const switchOptions = requiresOptions<ChainAOptions>('chain-a', { CHAIN_A_ENABLED: 'enabled' }, { named: 'variable' })
export const chainAEnabled = (requires?: Tree, env?: NodeJS.ProcessEnv): boolean => switchOptions.reader(switchOptions.options(requires, env)).boolean('enabled', true)

/** The hosted Blockfrost networks; a Blockfrost project id starts with the name of its network. */
const HOSTED_NETWORKS = ['mainnet', 'preprod', 'preview']

/**
 * Chain A's production settings (lib/production-settings.ts): an upstream (a Blockfrost project id
 * or a Blockfrost-compatible URL) on a network that exists, unless chain A is turned off.
 */
export function chainAProductionProblems(options: ChainAOptions = chainAOptions(), enabled = chainAEnabled()): string[] {
  if (!enabled) return []
  const read = reader(options)
  const kind = read.string('kind', 'blockfrost')
  if (!(CHAIN_A_KINDS as readonly string[]).includes(kind)) return [`CHAIN_A_KIND must be one of ${CHAIN_A_KINDS.join(', ')}, got '${kind.slice(0, 40)}'`]
  if (kind === 'koios') return koiosProductionProblems(read)
  if (kind === 'ogmios') return ogmiosProductionProblems(read)
  const projectId = read.optional('credentials.projectId')
  const url = read.optional('credentials.url')
  const network = read.string('network', 'preprod')
  const problems: string[] = []
  if (!projectId && !url) problems.push(`BLOCKFROST_PROJECT_ID or BLOCKFROST_URL: chain A has no upstream; set the Blockfrost project id (or a Blockfrost-compatible URL), or CHAIN_A_ENABLED=false to start without chain A`)
  if (url) {
    const problem = urlProblem('BLOCKFROST_URL', url)
    if (problem) problems.push(problem)
  }
  if (!HOSTED_NETWORKS.includes(network) && !(network === 'devnet' && url)) problems.push(`CHAIN_A_NETWORK must be one of ${HOSTED_NETWORKS.join(', ')} (devnet only with BLOCKFROST_URL), got '${network.slice(0, 100)}'`)
  const projectNetwork = HOSTED_NETWORKS.find(name => projectId?.startsWith(name))
  if (!url && projectNetwork && HOSTED_NETWORKS.includes(network) && projectNetwork !== network) problems.push(`BLOCKFROST_PROJECT_ID is a project of ${projectNetwork}, but CHAIN_A_NETWORK is ${network}`)
  return problems
}

/** Koios: the hosted service of a hosted network needs nothing (its free tier); any other network needs KOIOS_URL. */
function koiosProductionProblems(read: ReturnType<typeof reader>): string[] {
  const url = read.optional('credentials.koiosUrl')
  const network = read.string('network', 'preprod')
  const problems: string[] = []
  if (url) {
    const problem = urlProblem('KOIOS_URL', url)
    if (problem) problems.push(problem)
  } else if (!HOSTED_NETWORKS.includes(network)) {
    problems.push(`KOIOS_URL: CHAIN_A_NETWORK '${network.slice(0, 100)}' has no hosted Koios (${HOSTED_NETWORKS.join(', ')}); set the URL of a Koios instance`)
  }
  return problems
}

/** Ogmios with Kupo: both URLs, a known network, and a start the chain index can read. */
function ogmiosProductionProblems(read: ReturnType<typeof reader>): string[] {
  const problems: string[] = []
  const ogmiosUrl = read.optional('credentials.ogmiosUrl')
  const kupoUrl = read.optional('credentials.kupoUrl')
  if (!ogmiosUrl) problems.push('OGMIOS_URL: the ogmios kind needs the WebSocket URL of Ogmios (ws:// or wss://)')
  else {
    const problem = urlProblem('OGMIOS_URL', ogmiosUrl, ['ws:', 'wss:'])
    if (problem) problems.push(problem)
  }
  if (!kupoUrl) problems.push('KUPO_URL: the ogmios kind needs the URL of Kupo')
  else {
    const problem = urlProblem('KUPO_URL', kupoUrl)
    if (problem) problems.push(problem)
  }
  const network = read.string('network', 'preprod')
  if (!HOSTED_NETWORKS.includes(network)) problems.push(`CHAIN_A_NETWORK must be one of ${HOSTED_NETWORKS.join(', ')} with the ogmios kind, got '${network.slice(0, 100)}'`)
  for (const [option, check] of [['ogmiosSyncFrom', () => ogmiosSyncFrom(read.string('ogmiosSyncFrom', 'tip'))], ['ogmiosIndexBlocks', () => positiveInteger('ogmiosIndexBlocks', read.number('ogmiosIndexBlocks', 2160))]] as const) {
    try {
      check()
    } catch (error) {
      problems.push(`${option === 'ogmiosSyncFrom' ? 'OGMIOS_SYNC_FROM' : 'OGMIOS_INDEX_BLOCKS'}: ${(error as Error).message}`)
    }
  }
  return problems
}
