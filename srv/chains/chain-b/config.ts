import cds from '@sap/cds'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { requiresOptions, valueAt, type Environment, type OptionValue, type Tree } from '../../lib/requires-options.ts'
import { sqliteFile } from '../../lib/development-database.ts'
import { isProduction, optionalValue, profiles } from '../../lib/settings.ts'
import { availableCores, availableMemory } from '../../lib/host-capacity.ts'
import { secretProblem, urlProblem } from '../../lib/production-settings.ts'
import { APP_FILES } from '../../lib/app-files.ts'
import { readManifest, type KeysManifest } from './zk/circuits.ts'
import { ceremonyProblem } from './zk/transcript.ts'

/**
 * The options of the chain-b service, `cds.requires['chain-b']`: set per profile in package.json,
 * by CAP's own variables (`CDS_REQUIRES_CHAIN_B_NETWORK`...), and by the documented variables of
 * ENVIRONMENT, which the bootstrap maps into cds.env once at start (like chain A's config.ts).
 */

/** The documented environment variables (README, Configuration) and the option each one sets. */
const ENVIRONMENT: Environment = {
  CHAIN_B_NETWORK: 'network',
  CHAIN_B_INDEXER_URL: 'indexerUrl',
  CHAIN_B_INDEXER_WS_URL: 'indexerWsUrl',
  CHAIN_B_SUBMIT_URL: 'submitUrl',
  CHAIN_B_VAULT_ADDRESS: 'vaultAddress',
  CHAIN_B_DEVNET: 'devnet',
  CHAIN_B_FINALITY_DEPTH: 'finalityDepth',
  CHAIN_B_TIMEOUT_MS: 'timeoutMs',
  CHAIN_B_SPONSOR_SEED: 'sponsorSeed',
  CHAIN_B_ATTESTER_SECRET: 'attesterSecret',
  CHAIN_B_SPONSOR_MIN_BALANCE: 'sponsorMinBalance',
  CHAIN_B_DEVNET_BLOCK_TIME_MS: 'devnetOptions.blockTimeMs',
  CHAIN_B_DEVNET_ACTIVITY: 'devnetOptions.activity',
  CHAIN_B_DEVNET_EPOCH_LENGTH: 'devnetOptions.epochLength',
  CHAIN_B_DEVNET_STATE_DIR: 'devnetOptions.stateDir',
  CHAIN_B_DEVNET_SEED: 'devnetOptions.seed',
  CHAIN_B_ZK_KEYS: 'zk.keys',
  CHAIN_B_ZK_ALLOW_DEVELOPMENT_KEYS: 'zk.allowDevelopmentKeys',
  CHAIN_B_ZK_PROVERS: 'zk.provers',
}

/** The public indexers (reference section 9); `devnet` is the standalone devnet's default address. */
export const NETWORK_INDEXERS: Readonly<Record<string, string>> = {
  devnet: 'http://127.0.0.1:8088/api/v4/graphql',
  preprod: 'https://indexer.preprod.midnight.network/api/v4/graphql',
  preview: 'https://indexer.preview.midnight.network/api/v4/graphql',
  mainnet: 'https://indexer.midnight.network/api/v4/graphql',
}

type Value = OptionValue

export interface ChainBOptions {
  kind?: string
  impl?: string
  enabled?: Value
  network?: string
  indexerUrl?: string
  indexerWsUrl?: string
  submitUrl?: string
  vaultAddress?: string
  devnet?: Value
  finalityDepth?: Value
  timeoutMs?: Value
  sponsorSeed?: string
  attesterSecret?: string
  sponsorMinBalance?: Value
  devnetOptions?: Partial<Record<keyof ChainBDevnetConfig, Value>>
  zk?: Partial<Record<'keys' | 'allowDevelopmentKeys' | 'provers', Value>>
  [option: string]: unknown
}

/** The options with their defaults, as the service and the adapter use them. */
export interface ChainBConfig {
  /** devnet | preprod | preview | mainnet */
  network: string
  /** The indexer's GraphQL endpoint (HTTP) and its graphql-transport-ws endpoint. */
  indexerUrl: string
  indexerWsUrl: string
  /** The submission API (the devnet's); undefined on the public networks, which have none. */
  submitUrl?: string
  /**
   * The attestation-vault contract's address, hex. On a devnet without one, the service takes the
   * address of the deployment the devnet's seed makes (vaultDeployment), as the devnet does.
   */
  vaultAddress?: string
  devnetSeed: string
  devnet: boolean
  /** Blocks below the tip after which a block counts as final. */
  finalityDepth: number
  timeoutMs: number
  /** Below this DUST balance (smallest unit) the devnet faucet refills the sponsor. */
  sponsorMinBalance: bigint
}

export interface ChainBDevnetConfig {
  seed: string
  /** Milliseconds between blocks; 0 means blocks are produced only on request (tests). */
  blockTimeMs: number
  /** Seconds per epoch. */
  epochLength: number
  /** Run the built-in activity generator (transfers, vault calls, system transactions). */
  activity: boolean
  /** Folder the chain is kept in across restarts; undefined keeps it in memory. */
  stateDir?: string
  /** The circuits' keys, whose verification keys the vault checks proofs with (zk/keys by default). */
  zkKeysDir?: string
}

const options = requiresOptions<ChainBOptions>('chain-b', ENVIRONMENT)
const { optionName, reader } = options

/** `cds.requires['chain-b']` with CAP's split variables and the documented ones laid over it (the environment wins). */
export const chainBOptions = (requires?: Tree, env?: NodeJS.ProcessEnv): ChainBOptions => options.options(requires, env)

/** At start: the environment mapped into `cds.requires['chain-b']` itself, for the service to find in its options. */
export const applyChainBEnvironment = (requires?: Tree, env?: NodeJS.ProcessEnv): ChainBOptions => options.apply(requires, env)

/** The WebSocket endpoint of an indexer's GraphQL endpoint: the same URL in ws(s) with `/ws`. */
const wsUrlOf = (httpUrl: string) => httpUrl.replace(/^http/, 'ws').replace(/\/$/, '') + '/ws'

/** The devnet's submission API beside its GraphQL endpoint. */
const submitUrlOf = (httpUrl: string) => httpUrl.replace(/\/graphql\/?$/, '/submit')

export function chainBConfig(options: ChainBOptions = chainBOptions()): ChainBConfig {
  const read = reader(options)
  const production = isProduction()
  const network = read.string('network', production ? 'preprod' : 'devnet')
  const known = NETWORK_INDEXERS[network]
  const configuredUrl = read.optional('indexerUrl')
  if (!known && !configuredUrl) throw new Error(`Setting ${optionName('network')} must be one of ${Object.keys(NETWORK_INDEXERS).join(', ')} (or set CHAIN_B_INDEXER_URL), got '${network}'`)
  const indexerUrl = configuredUrl ?? known
  const isDevnet = network === 'devnet'
  const finalityDepth = read.number('finalityDepth', profiles().includes('test') ? 1 : 3)
  if (!Number.isInteger(finalityDepth) || finalityDepth < 0) throw new Error(`Setting ${optionName('finalityDepth')} must be a whole number of blocks, got '${finalityDepth}'`)
  return {
    network,
    indexerUrl,
    indexerWsUrl: read.optional('indexerWsUrl') ?? wsUrlOf(indexerUrl),
    submitUrl: read.optional('submitUrl') ?? (isDevnet ? submitUrlOf(indexerUrl) : undefined),
    vaultAddress: read.optional('vaultAddress')?.toLowerCase(),
    devnetSeed: read.string('devnetOptions.seed', DEFAULT_DEVNET_SEED),
    devnet: read.boolean('devnet', !production),
    finalityDepth,
    timeoutMs: read.number('timeoutMs', 10000),
    sponsorMinBalance: BigInt(read.string('sponsorMinBalance', '10000000000000000')),
  }
}

const DEFAULT_DEVNET_SEED = 'chain-access-devnet-b'

export function devnetConfig(options: ChainBOptions = chainBOptions()): ChainBDevnetConfig {
  const read = reader(options)
  const test = profiles().includes('test')
  return {
    seed: read.string('devnetOptions.seed', DEFAULT_DEVNET_SEED),
    blockTimeMs: read.number('devnetOptions.blockTimeMs', test ? 0 : 2000),
    epochLength: read.number('devnetOptions.epochLength', 3600),
    activity: read.boolean('devnetOptions.activity', !test),
    stateDir: devnetStateDir(valueAt(options, 'devnetOptions.stateDir')),
    zkKeysDir: zkConfig(options).keysDir,
  }
}

/**
 * devnetOptions.stateDir (CHAIN_B_DEVNET_STATE_DIR), relative to the project; `none` keeps the chain
 * in memory. By default the test profile keeps it in memory, and otherwise it is kept beside the
 * SQLite database file (`data/devnet-chain-b`).
 */
function devnetStateDir(configured: Value): string | undefined {
  const folder = optionalValue(configured === false ? 'none' : configured)
  if (folder !== undefined) return /^(none|false|memory)$/i.test(folder) ? undefined : resolve(cds.root, folder)
  if (profiles().includes('test')) return undefined
  return resolve(dataFolder(), 'devnet-chain-b')
}

/** The folder of the SQLite database file (`data` by default): development files live beside it. */
function dataFolder(): string {
  return dirname(sqliteFile() ?? resolve(cds.root, 'data', 'chain-access.sqlite'))
}

/** Whether the bootstrap starts the embedded devnet: development and test only, devnet on, no indexer URL configured. */
export function embedsDevnet(options: ChainBOptions): boolean {
  const local = profiles().some(profile => profile === 'development' || profile === 'test')
  return local && !isProduction() && chainBConfig(options).devnet && !optionalValue(valueAt(options, 'indexerUrl'))
}

/** The service's secrets: the attester secret (keys per subject) and the sponsor's seed. */
export interface ChainBSecrets {
  attesterSecret: string
  sponsorSeed: string
}

const TEST_SECRETS: ChainBSecrets = { attesterSecret: 'chain-access-test-attester-secret', sponsorSeed: 'chain-access-test-sponsor' }

/**
 * Production requires both secrets (a missing one ends the start with one line naming its
 * variable); tests use fixed ones; development makes random ones once and keeps them in a file
 * beside the devnet's chain (`data/chain-b-secrets.json`), so identities survive restarts.
 */
export function chainBSecrets(options: ChainBOptions): ChainBSecrets {
  const read = reader(options)
  const attesterSecret = read.optional('attesterSecret')
  const sponsorSeed = read.optional('sponsorSeed')
  if (attesterSecret && sponsorSeed) return { attesterSecret, sponsorSeed }
  if (!chainBEnabled()) return { attesterSecret: randomBytes(32).toString('hex'), sponsorSeed: randomBytes(32).toString('hex') }
  if (isProduction()) {
    const missing = !attesterSecret ? 'CHAIN_B_ATTESTER_SECRET' : 'CHAIN_B_SPONSOR_SEED'
    throw new MissingSecretError(`Chain B needs ${missing} in production (cds.requires['chain-b'].${missing === 'CHAIN_B_ATTESTER_SECRET' ? 'attesterSecret' : 'sponsorSeed'}); refusing to start without it.`)
  }
  const fallback = profiles().includes('test') ? TEST_SECRETS : developmentSecrets()
  return { attesterSecret: attesterSecret ?? fallback.attesterSecret, sponsorSeed: sponsorSeed ?? fallback.sponsorSeed }
}

export class MissingSecretError extends Error {}

export interface ZkConfig {
  /** The folder of the circuits' keys and their manifest (zk/keys: the development keys). */
  keysDir: string
  /** Production runs on development keys only when told to. */
  allowDevelopmentKeys: boolean
  /**
   * Proofs made at once (threads); by default one per core but one, which the event loop keeps for
   * itself, and no more than the memory holds (PROOF_PEAK_BYTES each beside the server's own), at least 1.
   */
  provers: number
}

/** What one Groth16 proof of the largest circuit takes at its peak (measured: 420 MB), with room to spare. */
export const PROOF_PEAK_BYTES = 450 * 1024 * 1024
/** What the server needs beside its provers. */
const SERVER_BYTES = 256 * 1024 * 1024

/** The provers this container runs by default: its cores but one, bounded by its memory; at least 1. */
export function defaultProvers(cores = availableCores(), memory = availableMemory()): number {
  return Math.max(1, Math.min(cores - 1, Math.floor((memory - SERVER_BYTES) / PROOF_PEAK_BYTES)))
}

export function zkConfig(options: ChainBOptions = chainBOptions()): ZkConfig {
  const read = reader(options)
  const provers = read.number('zk.provers', defaultProvers())
  if (!Number.isInteger(provers) || provers < 1) throw new Error(`Setting ${optionName('zk.provers')} must be a whole number of threads, at least 1`)
  return { keysDir: resolve(cds.root, read.string('zk.keys', APP_FILES.zkKeys)), allowDevelopmentKeys: read.boolean('zk.allowDevelopmentKeys', false), provers }
}

/**
 * The keys a start may use: they must be there, and production takes only keys from a verified
 * ceremony: a transcript on a published phase 1 with at least two contributions and a beacon, a
 * verification record of `npm run ceremony -- verify` for that transcript, and files and proving
 * keys that match both (ceremonyProblem; it hashes the files, without the phase-1 file).
 * Development keys (anyone could forge proofs under them) pass only with allowDevelopmentKeys,
 * which lets nothing else through.
 */
export function checkZkKeys(config: ZkConfig, manifest: Pick<KeysManifest, 'development'> & Partial<KeysManifest>): void {
  if (!isProduction()) return
  const problem = productionKeysProblem(config, manifest)
  if (problem) throw new MissingSecretError(problem)
}

/** Why production would refuse these keys (checkZkKeys), whatever the profile: the build checks the keys it ships with it. */
export function productionKeysProblem(config: ZkConfig, manifest: Pick<KeysManifest, 'development'> & Partial<KeysManifest>): string | undefined {
  if (manifest.development) {
    if (config.allowDevelopmentKeys) return undefined
    return `Chain B's zero-knowledge keys in ${config.keysDir} are development keys; refusing to start in production. Set CHAIN_B_ZK_KEYS to the operator's keys (from a ceremony with several parties, verified: npm run ceremony -- verify), or CHAIN_B_ZK_ALLOW_DEVELOPMENT_KEYS=true.`
  }
  const problem = ceremonyProblem(config.keysDir, { ceremony: '', circuits: {}, ...manifest })
  if (problem)
    return `Chain B's zero-knowledge keys in ${config.keysDir} are not from a verified ceremony: ${problem}; refusing to start in production. Set CHAIN_B_ZK_KEYS to keys whose ceremony npm run ceremony -- verify --keys <folder> passed (docs/security.md, Ceremony).`
  return undefined
}

function developmentSecrets(): ChainBSecrets {
  const file = resolve(dataFolder(), 'chain-b-secrets.json')
  if (existsSync(file)) {
    try {
      const saved = JSON.parse(readFileSync(file, 'utf8')) as Partial<ChainBSecrets>
      if (saved.attesterSecret && saved.sponsorSeed) return { attesterSecret: saved.attesterSecret, sponsorSeed: saved.sponsorSeed }
    } catch {
      // An unreadable file is replaced by new secrets below.
    }
  }
  const secrets = { attesterSecret: randomBytes(32).toString('hex'), sponsorSeed: randomBytes(32).toString('hex') }
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, JSON.stringify(secrets, null, 2) + '\n', { mode: 0o600 })
  return secrets
}

/** Whether chain B is served (CHAIN_B_ENABLED, on by default); off, its routes answer 503 CHAIN_B_DISABLED. */
const switchOptions = requiresOptions<ChainBOptions>('chain-b', { CHAIN_B_ENABLED: 'enabled' }, { named: 'variable' })
export const chainBEnabled = (requires?: Tree, env?: NodeJS.ProcessEnv): boolean => switchOptions.reader(switchOptions.options(requires, env)).boolean('enabled', true)

/**
 * Chain B's production settings (lib/production-settings.ts), unless chain B is turned off: an
 * upstream the operator chose (an indexer URL, or a public network by name), both secrets strong,
 * and zero-knowledge keys a production start may use.
 */
export function chainBProductionProblems(options: ChainBOptions = chainBOptions(), enabled = chainBEnabled()): string[] {
  if (!enabled) return []
  const read = reader(options)
  const network = read.optional('network')
  const indexerUrl = read.optional('indexerUrl')
  const indexerWsUrl = read.optional('indexerWsUrl')
  const problems: (string | undefined)[] = []
  if (!network && !indexerUrl) problems.push(`CHAIN_B_INDEXER_URL or CHAIN_B_NETWORK: chain B has no upstream; set the indexer's URL, or CHAIN_B_NETWORK to ${PUBLIC_NETWORKS.join(', ')} for its public indexer, or CHAIN_B_ENABLED=false to start without chain B`)
  if (network && !indexerUrl && !PUBLIC_NETWORKS.includes(network)) problems.push(`CHAIN_B_NETWORK must be one of ${PUBLIC_NETWORKS.join(', ')} (another only with CHAIN_B_INDEXER_URL), got '${network.slice(0, 100)}'`)
  if (indexerUrl) problems.push(urlProblem('CHAIN_B_INDEXER_URL', indexerUrl))
  if (indexerWsUrl) problems.push(urlProblem('CHAIN_B_INDEXER_WS_URL', indexerWsUrl, ['ws:', 'wss:']))
  problems.push(secretProblem('CHAIN_B_ATTESTER_SECRET', read.optional('attesterSecret'), 'the attester keys are derived from it'))
  problems.push(secretProblem('CHAIN_B_SPONSOR_SEED', read.optional('sponsorSeed'), 'the sponsor that pays for every chain-B write comes from it'))
  problems.push(zkKeysProblem(options))
  return problems.filter(problem => problem !== undefined)
}

const PUBLIC_NETWORKS = ['preprod', 'preview', 'mainnet']

/** What keeps the configured zero-knowledge keys from a production start (checkZkKeys), naming CHAIN_B_ZK_KEYS. */
function zkKeysProblem(options: ChainBOptions): string | undefined {
  try {
    const config = zkConfig(options)
    checkZkKeys(config, readManifest(config.keysDir))
    return undefined
  } catch (error) {
    return `CHAIN_B_ZK_KEYS: ${(error as Error).message}`
  }
}
