import { requiresOptions, type Environment } from '../lib/requires-options.ts'

/**
 * The chain-A follower's settings, `cds.requires['chain-a'].follower`: a documented variable first
 * (FOLLOWER_ENVIRONMENT), else the option, else the default. Read when a follower is made.
 */

/** The follower's documented environment variables (README, Configuration) and the option each one sets. */
const FOLLOWER_ENVIRONMENT: Environment = {
  CHAIN_A_FOLLOWER_ENABLED: 'follower.enabled',
  CHAIN_A_FOLLOWER_INTERVAL_MS: 'follower.intervalMs',
  CHAIN_A_FOLLOWER_BATCH_SIZE: 'follower.batchSize',
  CHAIN_A_FOLLOWER_LEASE_MS: 'follower.leaseMs',
  CHAIN_A_FOLLOWER_MAX_REORG_DEPTH: 'follower.maxReorgDepth',
  CHAIN_A_FOLLOWER_START: 'follower.start',
}

const options = requiresOptions('chain-a', FOLLOWER_ENVIRONMENT, { named: 'variable' })

/** Where a fresh index starts: the genesis block, a height, or the first block at most a duration older than the tip. */
export type FollowerStart =
  | { kind: 'genesis' }
  | { kind: 'height'; height: number }
  | { kind: 'duration'; seconds: number }

export interface FollowerSettings {
  /** Whether this instance runs the follower at all (CHAIN_A_FOLLOWER_ENABLED, default true). */
  enabled: boolean
  /** How often the tip is read; when nothing changed a run is that one upstream call. */
  intervalMs: number
  /** Blocks read and written per transaction. */
  batchSize: number
  /** How long a lease lasts without renewal; another instance takes over after that. */
  leaseMs: number
  /** The deepest reorg followed; a deeper one stops the follower with status error. */
  maxReorgDepth: number
  /** Where a fresh index starts (CHAIN_A_FOLLOWER_START); an index that exists resumes where it stands. */
  start: FollowerStart
}

export function followerSettings(): FollowerSettings {
  const read = options.reader(options.options())
  return {
    enabled: read.boolean('follower.enabled', true),
    intervalMs: read.positiveWhole('follower.intervalMs', 1000),
    batchSize: read.positiveWhole('follower.batchSize', 50),
    leaseMs: read.positiveWhole('follower.leaseMs', 30000),
    maxReorgDepth: read.positiveWhole('follower.maxReorgDepth', 100),
    start: parseStart(read.string('follower.start', '2d')),
  }
}

const SECONDS_PER_UNIT: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 }

/** `genesis`, a block height (`1200000`), or a duration back from the tip (`2d`, `6h`, `30m`, `90s`). */
export function parseStart(text: string): FollowerStart {
  const value = text.trim().toLowerCase()
  if (value === 'genesis') return { kind: 'genesis' }
  if (/^\d+$/.test(value) && Number.isSafeInteger(Number(value))) return { kind: 'height', height: Number(value) }
  const duration = /^(\d+(?:\.\d+)?)\s*([smhd])$/.exec(value)
  if (duration) return { kind: 'duration', seconds: Math.round(Number(duration[1]) * SECONDS_PER_UNIT[duration[2]]) }
  throw new Error(`Setting CHAIN_A_FOLLOWER_START must be 'genesis', a block height or a duration back from the tip such as 2d, 6h, 30m or 90s, got '${text}'`)
}
