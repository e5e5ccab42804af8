import cds from '@sap/cds'
import { dirname, resolve } from 'node:path'
import { booleanSetting, numberSetting, optionalSetting, profiles, requiresBlock, stringSetting, isProduction } from '../../lib/settings.ts'

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

export interface ChainAConfig {
  /** preprod | preview | mainnet (hosted Blockfrost) */
  network: string
  projectId?: string
  /** A Blockfrost-compatible base URL (the devnet, or a self-hosted server). */
  url?: string
  /** Start the embedded devnet and use it as the upstream. */
  devnet: boolean
  timeoutMs: number
  /** Retries for idempotent reads (never for submit). */
  retries: number
  /** blockfrost-js client-side limiter (10 req/s, burst 500). */
  clientRateLimit: boolean
  ttlSeconds: Record<TtlKind, number>
}

export const envNameForTtl = (kind: TtlKind) => 'CHAIN_A_TTL_' + kind.replace(/[A-Z]/g, c => '_' + c).toUpperCase()

export function chainAConfig(): ChainAConfig {
  const block = requiresBlock('chain-a')
  const production = isProduction()
  const ttlSeconds = {} as Record<TtlKind, number>
  for (const kind of TTL_KINDS) ttlSeconds[kind] = numberSetting(envNameForTtl(kind), block.ttl?.[kind], DEFAULT_TTL_SECONDS[kind])
  return {
    network: stringSetting('CHAIN_A_NETWORK', block.network, 'preprod'),
    projectId: optionalSetting('BLOCKFROST_PROJECT_ID', block.credentials?.projectId),
    url: optionalSetting('BLOCKFROST_URL', block.credentials?.url),
    devnet: booleanSetting('CHAIN_A_DEVNET', block.devnet, !production),
    timeoutMs: numberSetting('CHAIN_A_TIMEOUT_MS', block.timeoutMs, 10000),
    retries: numberSetting('CHAIN_A_RETRIES', block.retries, production ? 1 : 0),
    clientRateLimit: booleanSetting('CHAIN_A_CLIENT_RATE_LIMIT', block.clientRateLimit, production),
    ttlSeconds,
  }
}


/**
 * How long a build locks the outputs it spends against the same owner's other builds (seconds,
 * default 900): long enough to sign, never beyond the build's validity. A signing request extends
 * the locks to its own expiry; a submission to the build's validity.
 */
export function spendLockSeconds(): number {
  const seconds = numberSetting('CHAIN_A_SPEND_LOCK_S', requiresBlock('chain-a').spendLockSeconds, 900)
  if (seconds <= 0) throw new Error(`Setting CHAIN_A_SPEND_LOCK_S must be a positive number of seconds, got '${seconds}'`)
  return seconds
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

export function devnetConfig(): DevnetConfig {
  const block = requiresBlock('chain-a').devnetOptions ?? {}
  return {
    seed: stringSetting('DEVNET_SEED', block.seed, 'chain-access-devnet'),
    blockTimeMs: numberSetting('DEVNET_BLOCK_TIME_MS', block.blockTimeMs, 2000),
    slotLengthMs: numberSetting('DEVNET_SLOT_LENGTH_MS', block.slotLengthMs, 1000),
    epochLength: numberSetting('DEVNET_EPOCH_LENGTH', block.epochLength, 600),
    securityParam: numberSetting('DEVNET_SECURITY_PARAM', block.securityParam, 10),
    activity: booleanSetting('DEVNET_ACTIVITY', block.activity, true),
    wallets: numberSetting('DEVNET_WALLETS', block.wallets, 4),
    latencyMs: numberSetting('DEVNET_LATENCY_MS', block.latencyMs, 0),
    stateDir: devnetStateDir(block.stateDir),
  }
}

/**
 * DEVNET_STATE_DIR / devnetOptions.stateDir, relative to the project; `none` (or false) keeps the
 * chain in memory. By default the test profile keeps it in memory, and otherwise it is kept beside
 * the SQLite database file (`data/devnet-chain-a`), so a database and its chain stay together.
 */
function devnetStateDir(fromCds: string | boolean | null | undefined): string | undefined {
  const configured = optionalSetting('DEVNET_STATE_DIR', fromCds === false ? 'none' : (fromCds as string | null | undefined))
  if (configured !== undefined) return /^(none|false|memory)$/i.test(configured) ? undefined : resolve(cds.root, configured)
  if (profiles().includes('test')) return undefined
  return resolve(dirname(sqliteFile() ?? resolve(cds.root, 'data', 'chain-access.sqlite')), 'devnet-chain-a')
}

function sqliteFile(): string | undefined {
  const db = requiresBlock('db')
  const url: string | undefined = db.credentials?.url ?? db.credentials?.database
  return db.kind === 'sqlite' && url && url !== ':memory:' ? resolve(cds.root, url) : undefined
}
