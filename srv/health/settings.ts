import { requiresOptions, type Environment } from '../lib/requires-options.ts'

/**
 * The probes' settings, `cds.requires.health`: a documented variable first (ENVIRONMENT), else the
 * option, else the default. Read at each readiness check.
 */

/** The probes' documented environment variables (docs/configuration.md) and the option each one sets. */
const ENVIRONMENT: Environment = {
  HEALTH_CACHE_MS: 'cacheMs',
  HEALTH_DATABASE_TIMEOUT_MS: 'databaseTimeoutMs',
  HEALTH_UPSTREAM_TIMEOUT_MS: 'upstreamTimeoutMs',
  HEALTH_UPSTREAM_INTERVAL_MS: 'upstreamIntervalMs',
  HEALTH_UPSTREAM_REQUIRED: 'upstreamRequired',
  HEALTH_MAX_LAG_BLOCKS: 'maxLagBlocks',
  HEALTH_MAX_QUEUE_AGE_S: 'maxQueueAgeS',
}

const options = requiresOptions('health', ENVIRONMENT, { named: 'variable' })

export interface HealthSettings {
  /** How long one readiness answer is given again to every probe (0: each probe checks anew). */
  cacheMs: number
  /** The database's trivial query, and each read of the followers' and the job queue's rows, must answer within this. */
  databaseTimeoutMs: number
  /** A chain's upstream must answer its tip within this. */
  upstreamTimeoutMs: number
  /** How long an upstream that answered counts as reachable before it is asked again (one that did not is asked at every check). */
  upstreamIntervalMs: number
  /** An enabled chain whose upstream does not answer makes the instance unready (else it is only reported). */
  upstreamRequired: boolean
  /** A follower more blocks than this behind the tip it last saw is reported DEGRADED (the instance stays ready). */
  maxLagBlocks: number
  /** A chain-B job queued longer than this, in seconds, makes the queue DEGRADED (the instance stays ready). */
  maxQueueAgeS: number
}

export function healthSettings(): HealthSettings {
  const read = options.reader(options.options())
  const atLeast = (path: string, fallback: number, least: number) => {
    const value = read.number(path, fallback)
    if (!(value >= least)) throw new Error(`Setting ${options.optionName(path)} must be a number of at least ${least}, got ${value}`)
    return value
  }
  return {
    cacheMs: atLeast('cacheMs', 2000, 0),
    databaseTimeoutMs: atLeast('databaseTimeoutMs', 2000, 1),
    upstreamTimeoutMs: atLeast('upstreamTimeoutMs', 3000, 1),
    upstreamIntervalMs: atLeast('upstreamIntervalMs', 30_000, 0),
    upstreamRequired: read.boolean('upstreamRequired', true),
    maxLagBlocks: atLeast('maxLagBlocks', 100, 0),
    maxQueueAgeS: atLeast('maxQueueAgeS', 300, 0),
  }
}
