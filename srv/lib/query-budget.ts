import { requiresOptions, type Environment, type Tree } from './requires-options.ts'

/**
 * What one request may cost, the request pipeline's options `cds.requires['request-pipeline']`: a
 * documented variable first (BUDGET_ENVIRONMENT), else the option, else the default. Read at each
 * use, so a changed setting applies to the next request.
 */

/** The documented environment variables (README, Configuration) and the option each one sets. */
const BUDGET_ENVIRONMENT: Environment = {
  QUERY_ROW_BUDGET: 'rowBudget',
  QUERY_EXPAND_DEPTH: 'expandDepth',
  QUERY_TIMEOUT_MS: 'timeoutMs',
  QUERY_MAX_ANSWER_BYTES: 'maxAnswerBytes',
}

const options = requiresOptions('request-pipeline', BUDGET_ENVIRONMENT, { named: 'variable' })

export interface QueryBudget {
  /** The most rows one read may return, all `$expand` levels counted (QUERY_ROW_BUDGET, default 25000). */
  rowBudget: number
  /** The most `$expand` levels one read may nest (QUERY_EXPAND_DEPTH, default 3). */
  expandDepth: number
  /** How long a request's work may take when nothing sets a shorter deadline (QUERY_TIMEOUT_MS, default 30000). */
  timeoutMs: number
  /** The largest answer sent, in bytes (QUERY_MAX_ANSWER_BYTES, default 16 MiB). */
  maxAnswerBytes: number
}

/** The budget in force: `cds.requires` and the process environment unless given. */
export function queryBudget(requires?: Tree, env?: NodeJS.ProcessEnv): QueryBudget {
  const read = options.reader(options.options(requires, env))
  return {
    rowBudget: read.number('rowBudget', 25_000),
    expandDepth: read.number('expandDepth', 3),
    timeoutMs: read.number('timeoutMs', 30_000),
    maxAnswerBytes: read.number('maxAnswerBytes', 16 * 1024 * 1024),
  }
}
