import { booleanSetting, numberSetting, requiresBlock } from '../lib/settings.ts'

/**
 * The indexer's settings: an environment variable first, else `cds.requires['chain-b'].crawler.<name>`,
 * else the default. Read at each use, so a changed variable counts from the next run.
 */

const configured = () => (requiresBlock('chain-b').crawler ?? {}) as Record<string, string | number | boolean | undefined>

export interface IndexerSettings {
  /** Whether this instance runs the follower at all (CHAIN_B_CRAWLER_ENABLED, default true). */
  enabled: boolean
  /** The safety-net catch-up interval; new blocks are read as the subscription announces them. */
  intervalMs: number
  /** Blocks read and written per transaction. */
  batchSize: number
  /** How long a lease lasts without renewal; another instance takes over after that. */
  leaseMs: number
  /** The deepest reorg followed; a deeper one stops the follower with status error. */
  maxReorgDepth: number
}

export function indexerSettings(): IndexerSettings {
  const given = configured()
  return {
    enabled: booleanSetting('CHAIN_B_CRAWLER_ENABLED', given.enabled, true),
    intervalMs: positive('CHAIN_B_CRAWLER_INTERVAL_MS', given.intervalMs, 5000),
    batchSize: positive('CHAIN_B_CRAWLER_BATCH_SIZE', given.batchSize, 50),
    leaseMs: positive('CHAIN_B_CRAWLER_LEASE_MS', given.leaseMs, 30000),
    maxReorgDepth: positive('CHAIN_B_CRAWLER_MAX_REORG_DEPTH', given.maxReorgDepth, 100),
  }
}

export interface HealthThresholds {
  /** Lag (blocks) above which the indexer is degraded (CHAIN_B_HEALTH_DEGRADED_LAG, default 10). */
  degradedLag: number
  /** Lag (blocks) above which it is unhealthy (CHAIN_B_HEALTH_UNHEALTHY_LAG, default 100). */
  unhealthyLag: number
}

export function healthThresholds(): HealthThresholds {
  const given = configured()
  const degradedLag = numberSetting('CHAIN_B_HEALTH_DEGRADED_LAG', given.degradedLag as number, 10)
  const unhealthyLag = numberSetting('CHAIN_B_HEALTH_UNHEALTHY_LAG', given.unhealthyLag as number, 100)
  if (degradedLag < 0 || unhealthyLag < degradedLag) throw new Error(`Health thresholds must satisfy 0 <= CHAIN_B_HEALTH_DEGRADED_LAG (${degradedLag}) <= CHAIN_B_HEALTH_UNHEALTHY_LAG (${unhealthyLag})`)
  return { degradedLag, unhealthyLag }
}

function positive(name: string, fromCds: string | number | boolean | undefined, fallback: number): number {
  const value = numberSetting(name, fromCds as string | number | undefined, fallback)
  if (!(value > 0)) throw new Error(`Setting ${name} must be a positive number, got ${value}`)
  return Math.floor(value)
}
