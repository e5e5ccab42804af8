import cds from '@sap/cds'
import { newInstanceId, takeoverNote } from './lease.ts'
import { scheduleJob, type ScheduledJob } from './scheduled-job.ts'
import { FailureStreak } from './failure-streak.ts'
import { StaleFollower, type Position, type SyncStateRow } from './sync-state.ts'

/**
 * A chain follower that reads its upstream into an index, one instance at a time: the holder of the
 * lease on the chain's SyncState row follows; the others stand by and take over when it expires or
 * is handed back. This base runs it (on a schedule, or one run now), takes and hands back the
 * lease and records failures; a chain's follower says how it catches up (catchUp).
 */

/** The lease columns of a state row. */
type LeaseColumns = { leaseOwner?: string | null; leaseExpiresAt?: string | null }

/** What one run did. */
export type RunOutcome = 'standby' | 'paused' | 'synced' | 'error' | 'stopped'

interface LeasedFollowerSettings {
  /** How often a run starts. */
  intervalMs: number
  /** How long a lease lasts without renewal; another instance takes over after that. */
  leaseMs: number
}

interface LeasedFollowerParts<Settings> {
  /** The follower's name in logs and in its schedule, `chain-a follower`. */
  name: string
  log: ReturnType<typeof cds.log>
  state: SyncStateRow<object>
  /** The network the upstream serves, written to a new SyncState row. */
  network: () => string | null
  settings: Settings
  instanceId?: string
}

export abstract class LeasedFollower<Settings extends LeasedFollowerSettings> {
  readonly instanceId: string
  readonly settings: Settings
  protected readonly log: ReturnType<typeof cds.log>
  protected job?: ScheduledJob
  protected stopped = false
  private readonly name: string
  private readonly state: SyncStateRow<object>
  private readonly network: () => string | null
  private lastOutcome: RunOutcome = 'stopped'
  /** Runs asked for without a schedule (tests), one after the other. */
  private unscheduled: Promise<void> = Promise.resolve()
  /** Whether this instance held the lease at its last run (a change is logged). */
  private holdsLease = false
  /** Runs failing one after the other (the upstream gone) are logged once per change of state. */
  private readonly failures: FailureStreak

  constructor(parts: LeasedFollowerParts<Settings>) {
    this.name = parts.name
    this.log = parts.log
    this.state = parts.state
    this.network = parts.network
    this.settings = parts.settings
    this.instanceId = parts.instanceId ?? newInstanceId()
    this.failures = new FailureStreak(`${this.name}: run`, { log: { error: (...args) => this.log.warn(...args), info: (...args) => this.log.info(...args) } })
  }

  /** Runs every intervalMs until stop(). */
  start(): this {
    this.job ??= scheduleJob(this.name, this.settings.intervalMs, () => this.run())
    return this
  }

  /** One run now, after the one in progress; answers what it did. */
  async runNow(): Promise<RunOutcome> {
    if (this.job) await this.job.runNow()
    else await (this.unscheduled = this.unscheduled.then(() => this.run()).then(() => undefined))
    return this.lastOutcome
  }

  /** No further runs; hands the lease back, so another instance takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true
    await this.job?.stop()
    await this.unscheduled
    this.standBy()
    // Best effort: a lease not handed back expires.
    await inTransaction(() => this.state.releaseLease(this.instanceId)).catch(error => this.log.debug(`${this.name}: lease not released`, (error as Error).message))
  }

  /** One run: take or renew the lease, then catch up. */
  async run(): Promise<RunOutcome> {
    this.lastOutcome = await this.runOnce()
    return this.lastOutcome
  }

  /** Reads the upstream into the index while this instance holds the lease. */
  protected abstract catchUp(): Promise<RunOutcome>

  /** This instance does not follow now (no lease, a failed run, stopped): what a run left open ends. */
  protected standBy(): void {}

  private async runOnce(): Promise<RunOutcome> {
    if (this.stopped) return 'stopped'
    await inTransaction(() => this.state.ensure(this.network()))
    const previous = this.holdsLease ? undefined : await inTransaction(() => this.state.read()) as LeaseColumns | undefined
    const holds = await inTransaction(() => this.state.claimLease(this.instanceId, this.settings.leaseMs))
    if (holds && !this.holdsLease) this.log.info(`${this.name} ${this.instanceId} holds the lease (${takeoverNote(previous)}): it indexes`)
    if (!holds && this.holdsLease) this.log.info(`${this.name} ${this.instanceId} lost the lease: it stands by`)
    this.holdsLease = holds
    if (!holds) {
      this.standBy()
      return 'standby'
    }
    try {
      const outcome = await this.catchUp()
      this.failures.succeeded()
      return outcome
    } catch (error) {
      this.standBy()
      if (error instanceof StaleFollower) return 'standby'
      this.failures.failed((error as Error).message, '; it retries')
      await inTransaction(() => this.state.recordError(this.instanceId, error))
      return 'error'
    }
  }
}

/** How a follower finds where the upstream's chain leaves its index. */
interface ForkSearch {
  at: Position
  tipHeight: number
  /** The lowest height the index may hold. */
  floor: number
  maxDepth: number
  /** The error when the fork lies deeper than maxDepth below `at`. */
  tooDeep: () => Error
  /** The hash the index holds at a height (null: none it can compare). */
  localAt: (height: number) => Promise<string | null>
  remoteAt: (height: number) => Promise<string | null | undefined>
}

/**
 * The fork: the lowest height above the highest one where the index and the upstream hold the same
 * block, at most maxDepth below the indexed height and not below the floor. Above `at.height`
 * when nothing was replaced.
 */
export async function forkHeight(search: ForkSearch): Promise<number> {
  const { at, floor, maxDepth } = search
  let height = Math.min(at.height, search.tipHeight)
  for (; height >= floor; height--) {
    if (at.height - height > maxDepth) throw search.tooDeep()
    const probe = height
    const [local, remote] = await Promise.all([search.localAt(probe), search.remoteAt(probe)])
    if (local !== null && local === remote) break
  }
  return height + 1
}

/** The leading blocks that each follow the one before, the first following `at`. */
export function contiguous<Block extends { hash: string }>(blocks: Block[], at: Position, parentOf: (block: Block) => string | null): Block[] {
  const run: Block[] = []
  let parent = at.hash
  for (const block of blocks) {
    if (parent !== null && parentOf(block) !== parent) break
    run.push(block)
    parent = block.hash
  }
  return run
}

/** Each database step in a transaction of its own, as the privileged user; never across a call to the upstream. */
export const inTransaction = <T>(work: () => Promise<T>): Promise<T> => cds.tx({ user: cds.User.privileged }, () => work()) as Promise<T>
