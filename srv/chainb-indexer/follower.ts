import cds from '@sap/cds'
import type { ChainBBlock, ChainBPort } from '../chains/chain-b/port.ts'
import { ApiError } from '../lib/errors.ts'
import { scheduleJob, type ScheduledJob } from '../lib/scheduled-job.ts'
import { epochClock, rowsOf, type EpochClock } from './rows.ts'
import { newInstanceId } from '../lib/lease.ts'
import { indexerSettings, type IndexerSettings } from './settings.ts'
import {
  StaleFollower, claimLease, ensureSyncState, indexedHashAt, positionOf, readSyncState, recordError, recordTip, releaseLease,
  rollBackFrom, writeBlocks, type Position,
} from './store.ts'

/**
 * The chain-B follower: reads blocks from the port into the chain index, from the indexed height + 1
 * to the tip in batches (one database transaction each), then follows new blocks as the port's
 * `blocks` subscription announces them, with a periodic catch-up as the safety net. A block whose
 * parent is not the indexed block starts a reorg: walk back to the fork, roll back everything at or
 * above it, read again from there. One instance indexes at a time: the holder of the lease on the
 * SyncState row; the others stand by and take over when it expires.
 */

const LOG = cds.log('chainb-indexer')

/** What one run did. */
export type RunOutcome = 'standby' | 'paused' | 'synced' | 'error' | 'stopped'

export interface FollowerOptions {
  port: ChainBPort
  finalityDepth: number
  network?: string | null
  settings?: Partial<IndexerSettings>
  instanceId?: string
}

export class Follower {
  readonly instanceId: string
  readonly settings: IndexerSettings
  private readonly port: ChainBPort
  private readonly finalityDepth: number
  private readonly network: string | null
  private job?: ScheduledJob
  private unsubscribe?: () => void
  /** A run has been asked for by the subscription and has not started yet. */
  private woken = false
  private stopped = false
  private lastOutcome: RunOutcome = 'stopped'
  /** Runs asked for without a schedule (tests), one after the other. */
  private unscheduled: Promise<void> = Promise.resolve()

  constructor(options: FollowerOptions) {
    this.port = options.port
    this.finalityDepth = options.finalityDepth
    this.network = options.network ?? null
    this.settings = { ...indexerSettings(), ...options.settings }
    this.instanceId = options.instanceId ?? newInstanceId()
  }

  /** Runs every intervalMs (and when a block arrives) until stop(). */
  start(): this {
    this.job ??= scheduleJob('chain-b follower', this.settings.intervalMs, () => this.run())
    return this
  }

  /** One run now, after the one in progress; answers what it did. */
  async runNow(): Promise<RunOutcome> {
    if (this.job) await this.job.runNow()
    else await (this.unscheduled = this.unscheduled.then(() => this.run()).then(() => undefined))
    return this.lastOutcome
  }

  /** No further runs; ends the subscription and hands the lease back, so another instance takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true
    await this.job?.stop()
    this.stopFollowing()
    // Best effort: a lease not handed back expires.
    await inTransaction(() => releaseLease(this.instanceId)).catch(error => LOG.debug('chain-b follower: lease not released', (error as Error).message))
  }

  /** One run: take or renew the lease, read the tip, catch up, follow. */
  async run(): Promise<RunOutcome> {
    this.lastOutcome = await this.runOnce()
    return this.lastOutcome
  }

  private async runOnce(): Promise<RunOutcome> {
    this.woken = false
    if (this.stopped) return 'stopped'
    await inTransaction(() => ensureSyncState(this.network))
    if (!(await inTransaction(() => claimLease(this.instanceId, this.settings.leaseMs)))) {
      this.stopFollowing()
      return 'standby'
    }
    try {
      return await this.catchUp()
    } catch (error) {
      this.stopFollowing()
      if (error instanceof StaleFollower) return 'standby'
      LOG.warn('chain-b follower: run failed; it retries', (error as Error).message)
      await inTransaction(() => recordError(this.instanceId, error))
      return 'error'
    }
  }

  private async catchUp(): Promise<RunOutcome> {
    const state = await inTransaction(readSyncState)
    let tip = await this.port.tip()
    if (state?.paused) {
      await this.record(tip, 'paused')
      this.stopFollowing()
      return 'paused'
    }
    let at = positionOf(state!)
    await this.record(tip, at.height >= tip.height ? 'synced' : 'syncing')
    // Rounds that found the upstream inconsistent (its tip not matching its blocks) without progress.
    let unsettled = 0
    /** Read once a run has blocks to write. */
    let epochOf: EpochClock | undefined
    for (;;) {
      if (this.stopped) return 'stopped'
      if (unsettled > 3) throw new ApiError(502, 'CHAIN_B_UPSTREAM_INCONSISTENT', `the upstream's tip (${tip.height}, ${tip.hash}) does not match its blocks; retrying later`)
      if (tip.height < at.height || (tip.height === at.height && tip.hash !== at.hash)) {
        const after = await this.followReorg(at, tip)
        if (after.height === at.height) unsettled++
        at = after
        tip = await this.port.tip()
        continue
      }
      if (at.height >= tip.height) break
      const blocks = await this.readBlocks(at.height + 1, Math.min(at.height + this.settings.batchSize, tip.height))
      if (blocks.length && at.hash !== null && blocks[0].parentHash !== at.hash) {
        at = await this.followReorg(at, tip)
        continue
      }
      const run = contiguous(blocks, at)
      if (run.length) {
        const clock = (epochOf ??= epochClock(await this.port.currentEpoch().catch(() => null)))
        at = await inTransaction(() => writeBlocks(this.instanceId, at, run.map(block => rowsOf(block, clock)), this.settings.leaseMs))
      }
      // A block missing or not following its parent: the upstream changed while we read; look again.
      if (run.length < blocks.length || blocks.length === 0) {
        if (!run.length) unsettled++
        tip = await this.port.tip()
      }
    }
    await this.record(tip, 'synced')
    this.follow(tip.height)
    return 'synced'
  }

  /** The blocks at heights from..to, as far as the upstream has them. */
  private async readBlocks(from: number, to: number): Promise<ChainBBlock[]> {
    const heights = Array.from({ length: to - from + 1 }, (_, i) => from + i)
    const blocks = await Promise.all(heights.map(height => this.port.block({ height })))
    const missing = blocks.findIndex(block => !block)
    return (missing < 0 ? blocks : blocks.slice(0, missing)) as ChainBBlock[]
  }

  /**
   * The fork: the highest height where the index and the upstream hold the same block, at most
   * maxReorgDepth below the indexed height. Everything above it is rolled back and logged.
   */
  private async followReorg(at: Position, tip: ChainBBlock): Promise<Position> {
    let height = Math.min(at.height, tip.height)
    for (; height >= 0; height--) {
      if (at.height - height > this.settings.maxReorgDepth) {
        throw new ApiError(502, 'CHAIN_B_REORG_TOO_DEEP', `the upstream replaced more than ${this.settings.maxReorgDepth} indexed blocks below height ${at.height}; reindex from a height by hand`)
      }
      const [local, remote] = await Promise.all([inTransaction(() => indexedHashAt(height)), this.port.block({ height })])
      if (local !== null && local === remote?.hash) break
    }
    const forkHeight = height + 1
    if (forkHeight > at.height) return at
    const rollback = await inTransaction(() => rollBackFrom(forkHeight, 'reorg', { newTipHash: tip.hash }, { owner: this.instanceId, at }))
    LOG.info(`chain-b reorg: ${rollback.blocksRolledBack} blocks from height ${forkHeight} rolled back; reading the new chain from there`)
    return rollback.position
  }

  private record(tip: ChainBBlock, status: 'syncing' | 'synced' | 'paused') {
    const finalizedHeight = Math.max(-1, tip.height - this.finalityDepth)
    return inTransaction(() => recordTip(this.instanceId, tip, finalizedHeight, status))
  }

  /** New blocks wake the follower; a broken stream is resubscribed by the next run. */
  private follow(tipHeight: number) {
    if (this.unsubscribe || !this.job || this.stopped) return
    this.unsubscribe = this.port.subscribeBlocks(tipHeight + 1, () => this.wake(), error => {
      LOG.warn('chain-b follower: the blocks subscription broke; the next run resubscribes', error.message)
      this.unsubscribe = undefined
    })
  }

  private stopFollowing() {
    const end = this.unsubscribe
    this.unsubscribe = undefined
    end?.()
  }

  private wake() {
    if (this.woken || !this.job || this.stopped) return
    this.woken = true
    this.job.runNow().catch(error => LOG.warn('chain-b follower: run failed', (error as Error).message))
  }
}

/** The leading blocks that each follow the one before, the first following `at`. */
function contiguous(blocks: ChainBBlock[], at: Position): ChainBBlock[] {
  const run: ChainBBlock[] = []
  let parent = at.hash
  for (const block of blocks) {
    if (parent !== null && block.parentHash !== parent) break
    run.push(block)
    parent = block.hash
  }
  return run
}

/** Each database step in a transaction of its own, as the privileged user; never across a call to the upstream. */
const inTransaction = <T>(work: () => Promise<T>): Promise<T> => cds.tx({ user: cds.User.privileged }, () => work()) as Promise<T>
