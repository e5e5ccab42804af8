import { requiresOptions, type Environment } from '../lib/requires-options.ts'
import { secretProblem } from '../lib/production-settings.ts'

/**
 * The settings of /metrics, `cds.requires.metrics`: a documented variable first (ENVIRONMENT),
 * else the option, else the default. Read at each use.
 */

const ENVIRONMENT: Environment = {
  METRICS_TOKEN: 'token',
  METRICS_COLLECT_TIMEOUT_MS: 'collectTimeoutMs',
}

const options = requiresOptions('metrics', ENVIRONMENT, { named: 'variable' })

export interface MetricsConfig {
  /**
   * The bearer token a scrape must send. Unset, /metrics is off (404) in every profile: what it
   * tells (traffic, balances moved, queue depths) is for the operator only.
   */
  token?: string
  /** How long a scrape waits for the values it reads from the database; what is not read by then is left out. */
  collectTimeoutMs: number
}

export function metricsConfig(): MetricsConfig {
  const read = options.reader(options.options())
  return {
    token: read.optional('token'),
    collectTimeoutMs: read.positiveWhole('collectTimeoutMs', 2000),
  }
}

/** The production check (lib/production-settings.ts): a token, when set, is a strong secret (unset, /metrics is off); the time-out is a positive number. */
export function metricsProductionProblems(): string[] {
  const { token } = metricsConfig()
  const problem = token === undefined ? undefined : secretProblem('METRICS_TOKEN', token, 'scrapers of /metrics send it')
  return problem ? [problem] : []
}
