import { requiresOptions, type Environment, type Tree } from '../lib/requires-options.ts'

/**
 * The bucket writer's settings, `cds.requires.analytics.writer`: a documented variable first
 * (WRITER_ENVIRONMENT), else the option, else the default. Read when the writer starts.
 */

/** The writer's documented environment variables (README, Configuration) and the option each one sets. */
const WRITER_ENVIRONMENT: Environment = {
  ANALYTICS_WRITER_ENABLED: 'writer.enabled',
  ANALYTICS_WRITER_INTERVAL_MS: 'writer.intervalMs',
}

const options = requiresOptions('analytics', WRITER_ENVIRONMENT, { named: 'variable' })

interface WriterSettings {
  /** Whether this instance folds buckets at all (ANALYTICS_WRITER_ENABLED, default true; off in the test profile). */
  enabled: boolean
  /** How often it folds (ANALYTICS_WRITER_INTERVAL_MS, default 10000). */
  intervalMs: number
}

/** The writer's settings: from `cds.requires` and the process environment unless given. */
export function writerSettings(requires?: Tree, env?: NodeJS.ProcessEnv): WriterSettings {
  const read = options.reader(options.options(requires, env))
  return {
    enabled: read.boolean('writer.enabled', true),
    intervalMs: read.number('writer.intervalMs', 10_000),
  }
}
