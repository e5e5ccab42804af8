import { booleanSetting, numberSetting, optionalSetting, requiresBlock, stringSetting, isProduction } from '../../lib/settings.ts'

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
  }
}
