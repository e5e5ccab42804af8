import cds from '@sap/cds'
import type { ChainBBlock, ChainBPort } from '../chains/chain-b/port.ts'
import { ApiError } from '../lib/errors.ts'
import { LeasedFollower, contiguous, forkHeight, inTransaction, type RunOutcome } from '../lib/leased-follower.ts'
import type { Position } from '../lib/sync-state.ts'
import { epochClock, rowsOf, type EpochClock } from './rows.ts'
import { indexerSettings, type IndexerSettings } from './settings.ts'
import { indexedHashAt, positionOf, readSyncState, recordTip, rollBackFrom, syncState, writeBlocks } from './store.ts'

/**
 * The chain-B follower: reads blocks from the port into the chain index, from the indexed height + 1
 * to the tip in batches (one database transaction each), then follows new blocks as the port's
 * `blocks` subscription announces them, with a periodic catch-up as the safety net. A block whose
 * parent is not the indexed block starts a reorg: walk back to the fork, roll back everything at or
 * above it, read again from there. One instance indexes at a time: the holder of the lease on the
 * SyncState row; the others stand by and take over when it expires (lib/leased-follower.ts).
 */

const LOG = cds.log('chainb-indexer')

interface FollowerOptions {
  port: ChainBPort
  finalityDepth: number
  network?: string | null
  settings?: Partial<IndexerSettings>
  instanceId?: string
}

export class Follower extends LeasedFollower<IndexerSettings> {
  private readonly port: ChainBPort
  private readonly finalityDepth: number
  private unsubscribe?: () => void
  /** A run has been asked for by the subscription and has not started yet. */
  private woken = false

  constructor(options: FollowerOptions) {
    super({
      name: 'chain-b follower', log: LOG, state: syncState, network: () => options.network ?? null,
      settings: { ...indexerSettings(), ...options.settings }, instanceId: options.instanceId,
    })
    this.port = options.port
    this.finalityDepth = options.finalityDepth
  }

  /** One run: take or renew the lease, read the tip, catch up, follow (the subscription wakes it when a block arrives). */
  override async run(): Promise<RunOutcome> {
    this.woken = false
    return super.run()
  }

  /** No lease, a failed run, or stopped: the subscription ends. */
  protected override standBy() {
    this.stopFollowing()
  }

  protected async catchUp(): Promise<RunOutcome> {
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
      const run = contiguous(blocks, at, block => block.parentHash)
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
    const { maxReorgDepth } = this.settings
    const fork = await forkHeight({
      at, tipHeight: tip.height, floor: 0, maxDepth: maxReorgDepth,
      tooDeep: () => new ApiError(502, 'CHAIN_B_REORG_TOO_DEEP', `the upstream replaced more than ${maxReorgDepth} indexed blocks below height ${at.height}; reindex from a height by hand`),
      localAt: height => inTransaction(() => indexedHashAt(height)),
      remoteAt: async height => (await this.port.block({ height }))?.hash,
    })
    if (fork > at.height) return at
    const rollback = await inTransaction(() => rollBackFrom(fork, 'reorg', { newTipHash: tip.hash }, { owner: this.instanceId, at }))
    LOG.info(`chain-b reorg: ${rollback.blocksRolledBack} blocks from height ${fork} rolled back; reading the new chain from there`)
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
