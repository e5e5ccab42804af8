import { requiresOptions, type Environment } from '../lib/requires-options.ts'

/**
 * The indexer's settings, `cds.requires['chain-b'].crawler`: a documented variable first
 * (CRAWLER_ENVIRONMENT), else the option, else the default. Read at each use, so a changed
 * variable counts from the next run.
 */

/** The indexer's documented environment variables (README, Configuration) and the option each one sets. */
const CRAWLER_ENVIRONMENT: Environment = {
  CHAIN_B_CRAWLER_ENABLED: 'crawler.enabled',
  CHAIN_B_CRAWLER_INTERVAL_MS: 'crawler.intervalMs',
  CHAIN_B_CRAWLER_BATCH_SIZE: 'crawler.batchSize',
  CHAIN_B_CRAWLER_LEASE_MS: 'crawler.leaseMs',
  CHAIN_B_CRAWLER_MAX_REORG_DEPTH: 'crawler.maxReorgDepth',
  CHAIN_B_HEALTH_DEGRADED_LAG: 'crawler.degradedLag',
  CHAIN_B_HEALTH_UNHEALTHY_LAG: 'crawler.unhealthyLag',
}

const options = requiresOptions('chain-b', CRAWLER_ENVIRONMENT, { named: 'variable' })
const configured = () => options.reader(options.options())

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
  const read = configured()
  return {
    enabled: read.boolean('crawler.enabled', true),
    intervalMs: read.positiveWhole('crawler.intervalMs', 5000),
    batchSize: read.positiveWhole('crawler.batchSize', 50),
    leaseMs: read.positiveWhole('crawler.leaseMs', 30000),
    maxReorgDepth: read.positiveWhole('crawler.maxReorgDepth', 100),
  }
}

interface HealthThresholds {
  /** Lag (blocks) above which the indexer is degraded (CHAIN_B_HEALTH_DEGRADED_LAG, default 10). */
  degradedLag: number
  /** Lag (blocks) above which it is unhealthy (CHAIN_B_HEALTH_UNHEALTHY_LAG, default 100). */
  unhealthyLag: number
}

export function healthThresholds(): HealthThresholds {
  const read = configured()
  const degradedLag = read.number('crawler.degradedLag', 10)
  const unhealthyLag = read.number('crawler.unhealthyLag', 100)
  if (degradedLag < 0 || unhealthyLag < degradedLag) throw new Error(`Health thresholds must satisfy 0 <= CHAIN_B_HEALTH_DEGRADED_LAG (${degradedLag}) <= CHAIN_B_HEALTH_UNHEALTHY_LAG (${unhealthyLag})`)
  return { degradedLag, unhealthyLag }
}
