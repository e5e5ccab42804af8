import { newInstanceId } from '../../lib/lease.ts'
import { booleanSetting, numberSetting, requiresBlock } from '../../lib/settings.ts'

/**
 * The job runner's settings: `cds.requires['chain-b'].jobs.<name>`, each overridden by its
 * environment variable (the README's configuration table lists them).
 */
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
  const configured = (requiresBlock('chain-b').jobs ?? {}) as Record<string, string | number | boolean | undefined>
  return {
    enabled: booleanSetting('CHAIN_B_JOBS_RUNNER', configured.enabled, true),
    concurrency: Math.max(1, numberSetting('CHAIN_B_JOBS_CONCURRENCY', configured.concurrency as number, 4)),
    pollMs: Math.max(10, numberSetting('CHAIN_B_JOBS_POLL_MS', configured.pollMs as number, 250)),
    leaseMs: Math.max(1000, numberSetting('CHAIN_B_JOBS_LEASE_MS', configured.leaseMs as number, 30_000)),
    maxAttempts: Math.max(1, numberSetting('CHAIN_B_JOBS_MAX_ATTEMPTS', configured.maxAttempts as number, 5)),
    retryMs: Math.max(10, numberSetting('CHAIN_B_JOBS_RETRY_MS', configured.retryMs as number, 1000)),
    resubmitAfterBlocks: Math.max(1, numberSetting('CHAIN_B_JOBS_RESUBMIT_AFTER_BLOCKS', configured.resubmitAfterBlocks as number, 3)),
    unavailableTimeoutMs: numberSetting('CHAIN_B_JOBS_UNAVAILABLE_TIMEOUT_MS', configured.unavailableTimeoutMs as number, 15 * 60_000),
    maxQueuedPerOwner: Math.max(1, Math.floor(numberSetting('CHAIN_B_JOBS_MAX_QUEUED_PER_OWNER', configured.maxQueuedPerOwner as number, 20))),
    witnessHoldMs: Math.max(1000, numberSetting('CHAIN_B_JOBS_WITNESS_HOLD_MS', configured.witnessHoldMs as number, 60_000)),
  }
}

/** This process's name on the job claims it takes (a restarted process is another owner), as long as Jobs.leaseOwner holds. */
export const INSTANCE_ID = newInstanceId().slice(0, 100)
