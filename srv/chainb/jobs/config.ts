import { newInstanceId } from '../../lib/lease.ts'
import { requiresOptions, type Environment } from '../../lib/requires-options.ts'

/**
 * The job runner's settings: `cds.requires['chain-b'].jobs.<name>`, each overridden by its
 * documented variable (JOBS_ENVIRONMENT). Read at each use.
 */

/** The job runner's documented environment variables (README, Configuration) and the option each one sets. */
const JOBS_ENVIRONMENT: Environment = {
  CHAIN_B_JOBS_RUNNER: 'jobs.enabled',
  CHAIN_B_JOBS_CONCURRENCY: 'jobs.concurrency',
  CHAIN_B_JOBS_POLL_MS: 'jobs.pollMs',
  CHAIN_B_JOBS_LEASE_MS: 'jobs.leaseMs',
  CHAIN_B_JOBS_MAX_ATTEMPTS: 'jobs.maxAttempts',
  CHAIN_B_JOBS_RETRY_MS: 'jobs.retryMs',
  CHAIN_B_JOBS_RESUBMIT_AFTER_BLOCKS: 'jobs.resubmitAfterBlocks',
  CHAIN_B_JOBS_UNAVAILABLE_TIMEOUT_MS: 'jobs.unavailableTimeoutMs',
  CHAIN_B_JOBS_MAX_QUEUED_PER_OWNER: 'jobs.maxQueuedPerOwner',
  CHAIN_B_JOBS_WITNESS_HOLD_MS: 'jobs.witnessHoldMs',
}

const options = requiresOptions('chain-b', JOBS_ENVIRONMENT, { named: 'variable' })
export interface JobSettings {
  /** Whether this instance runs jobs at all (CHAIN_B_JOBS_RUNNER); every instance accepts them. */
  enabled: boolean
  /** Jobs this instance submits at once (CHAIN_B_JOBS_CONCURRENCY). */
  concurrency: number
  /** How often the runner looks for work and watches its submitted jobs (CHAIN_B_JOBS_POLL_MS). */
  pollMs: number
  /** How long a claim holds without being renewed; a crashed instance's jobs are taken over after it (CHAIN_B_JOBS_LEASE_MS). */
  leaseMs: number
  /** Claims of one job before it fails ATTEMPTS_EXHAUSTED (CHAIN_B_JOBS_MAX_ATTEMPTS). */
  maxAttempts: number
  /** First wait after the upstream did not answer; doubles up to 30 s (CHAIN_B_JOBS_RETRY_MS). */
  retryMs: number
  /**
   * Blocks a submitted job's transaction may stay missing from the chain (dropped by a reorg, lost by
   * a node) before it is submitted again with its nonce (CHAIN_B_JOBS_RESUBMIT_AFTER_BLOCKS).
   */
  resubmitAfterBlocks: number
  /** A job whose upstream stays away longer than this after it was queued fails CHAIN_B_UNAVAILABLE (CHAIN_B_JOBS_UNAVAILABLE_TIMEOUT_MS). */
  unavailableTimeoutMs: number
  /** Jobs one owner may have open (queued, running or submitted); a write beyond it is refused (CHAIN_B_JOBS_MAX_QUEUED_PER_OWNER). */
  maxQueuedPerOwner: number
  /**
   * How long a proving job's witness counts as held by the process that accepted it without that
   * process saying so again (its runner renews the hold on its ticks); past it, any runner fails the
   * job WITNESS_LOST (refunded), since only that process could prove it (CHAIN_B_JOBS_WITNESS_HOLD_MS).
   */
  witnessHoldMs: number
}

export function jobSettings(): JobSettings {
  const read = options.reader(options.options())
  return {
    enabled: read.boolean('jobs.enabled', true),
    concurrency: Math.max(1, read.number('jobs.concurrency', 4)),
    pollMs: Math.max(10, read.number('jobs.pollMs', 250)),
    leaseMs: Math.max(1000, read.number('jobs.leaseMs', 30_000)),
    maxAttempts: Math.max(1, read.number('jobs.maxAttempts', 5)),
    retryMs: Math.max(10, read.number('jobs.retryMs', 1000)),
    resubmitAfterBlocks: Math.max(1, read.number('jobs.resubmitAfterBlocks', 3)),
    unavailableTimeoutMs: read.number('jobs.unavailableTimeoutMs', 15 * 60_000),
    maxQueuedPerOwner: Math.max(1, Math.floor(read.number('jobs.maxQueuedPerOwner', 20))),
    witnessHoldMs: Math.max(1000, read.number('jobs.witnessHoldMs', 60_000)),
  }
}

/** This process's name on the job claims it takes (a restarted process is another owner), as long as Jobs.leaseOwner holds. */
export const INSTANCE_ID = newInstanceId().slice(0, 100)
