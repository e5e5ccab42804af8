import cds from '@sap/cds'
import type { ChainAService } from '../chains/chain-a/index.ts'
import { LIST_PAGE_SIZE, type ChainBlock, type ChainTransaction } from '../chains/chain-a/port.ts'
import { ApiError } from '../lib/errors.ts'
import { LeasedFollower, contiguous, forkHeight, inTransaction, type RunOutcome } from '../lib/leased-follower.ts'
import type { Position } from '../lib/sync-state.ts'
import { followerSettings, type FollowerSettings } from './follower-settings.ts'
import { indexedPoints, positionOf, readSyncState, recordTip, rollBackFrom, startAt, syncState, wholeBlockAt, writeBlocks } from './follower-store.ts'
import type { ChainAIndex, FollowedBlock } from './indexer.ts'
import { eachSettled } from './list-window.ts'

/**
 * The chain-A follower: reads every block from its start height to the tip into the read index
 * (Blocks, Transactions with their inputs, outputs, assets and metadata), in batches of one
 * database transaction each, then follows the tip every intervalMs; when nothing changed a run is
 * one tip call. The rows are written and marked as lazy reads write them, so tip-near reads answer
 * from the index. A block whose previous block is not the indexed one starts a reorg: walk back to
 * the fork, roll back everything at or above it, read again from there. One instance indexes at a
 * time: the holder of the lease on the SyncState row; the others stand by and take over when it
 * expires or is handed back (lib/leased-follower.ts).
 */

const LOG = cds.log('chaina-follower')

/** Upstream calls that run at once while a batch's transactions are read. */
const PARALLEL_CALLS = 8
/** The newest indexed blocks offered to an upstream's own index to resume from (a fork may have replaced the newest). */
const RESUME_POINTS = 10

interface ChainAFollowerOptions {
  /** The chain-a service: its port, its network and the chain's genesis (security parameter). */
  chain: Pick<ChainAService, 'port' | 'genesis' | 'networkName'>
  /** The read index the rows go into (the service's shared one). */
  index: ChainAIndex
  settings?: Partial<FollowerSettings>
  instanceId?: string
}

export class ChainAFollower extends LeasedFollower<FollowerSettings> {
  private readonly chain: ChainAFollowerOptions['chain']
  private readonly index: ChainAIndex
  /** The epoch whose pools this instance indexed last. */
  private poolsEpoch?: number
  /** Whether the upstream's own chain index was told where the read index stands. */
  private upstreamResumed = false

  constructor(options: ChainAFollowerOptions) {
    super({
      name: 'chain-a follower', log: LOG, state: syncState, network: () => options.chain.networkName,
      settings: { ...followerSettings(), ...options.settings }, instanceId: options.instanceId,
    })
    this.chain = options.chain
    this.index = options.index
  }

  protected async catchUp(): Promise<RunOutcome> {
    const state = await inTransaction(readSyncState)
    // The row went (the upstream serves another chain): the next run starts afresh.
    if (!state) return 'standby'
    const port = this.chain.port
    await this.resumeUpstreamIndex(state)
    let tip = await port.tip()
    if (state.paused) {
      await this.record(tip, 'paused')
      return 'paused'
    }
    const resumed = typeof state.startHeight === 'number'
    const startHeight = resumed ? state.startHeight! : await this.freshStart(tip)
    let at = resumed ? positionOf(state) : await inTransaction(() => startAt(this.instanceId, startHeight))
    if (tip.hash !== at.hash) await this.record(tip, 'syncing')
    // Rounds that found the upstream inconsistent (its tip not matching its blocks) without progress.
    let unsettled = 0
    for (;;) {
      if (this.stopped) return 'stopped'
      if (unsettled > 3) throw new ApiError(502, 'CHAIN_A_UPSTREAM_INCONSISTENT', `the upstream's tip (${tip.height}, ${tip.hash}) does not match its blocks; retrying later`)
      const replaced = at.hash !== null && (tip.height < at.height || (tip.height === at.height && tip.hash !== at.hash))
      if (!replaced && at.height >= tip.height) break
      const blocks = replaced ? [] : await this.readBlocks(at, Math.min(this.settings.batchSize, tip.height - at.height))
      if (replaced || (blocks.length && at.hash !== null && blocks[0].previousBlock !== at.hash)) {
        const after = await this.followReorg(at, tip, startHeight)
        if (after.height === at.height) unsettled++
        at = after
        tip = await port.tip()
        continue
      }
      const run = await this.withTransactions(contiguous(blocks, at, block => block.previousBlock))
      if (run.length) at = await inTransaction(() => writeBlocks(this.index, this.instanceId, at, run, this.settings.leaseMs))
      // A block missing, not following its parent, or whose transactions moved: the upstream changed while we read; look again.
      if (run.length < blocks.length || blocks.length === 0) {
        if (!run.length) unsettled++
        tip = await port.tip()
      }
    }
    await this.recordSynced(tip, at, startHeight)
    await this.indexPoolsOnce(tip.epoch)
    return 'synced'
  }

  /**
   * An upstream whose chain index this process keeps in memory (the ogmios kind) starts it again
   * from where the read index stands, once per instance, so the blocks after it are there to read.
   */
  private async resumeUpstreamIndex(state: NonNullable<Awaited<ReturnType<typeof readSyncState>>>) {
    const port = this.chain.port
    if (this.upstreamResumed || !port.followFrom || typeof state.startHeight !== 'number') return
    const at = positionOf(state)
    if (at.hash !== null) await port.followFrom(await inTransaction(() => indexedPoints(at.height, RESUME_POINTS)))
    this.upstreamResumed = true
  }

  /** Once per epoch, the registered pools with their active stake (analytics' stake snapshot reads them). */
  private async indexPoolsOnce(epoch: number) {
    if (this.poolsEpoch === epoch) return
    await inTransaction(() => this.index.pools({ kind: 'whole' }))
    this.poolsEpoch = epoch
  }

  /** Where a fresh index starts (CHAIN_A_FOLLOWER_START), given the tip. */
  private async freshStart(tip: ChainBlock): Promise<number> {
    const height = await this.startHeightFor(tip)
    LOG.info(`chain-a follower: a fresh index starts at height ${height} (tip ${tip.height})`)
    return height
  }

  private async startHeightFor(tip: ChainBlock): Promise<number> {
    const { start } = this.settings
    // Some chains number their first block 1.
    if (start.kind === 'genesis') return (await this.chain.port.block(0)) ? 0 : 1
    if (start.kind === 'height') return Math.min(start.height, tip.height)
    return this.firstBlockSince(tip.time - start.seconds, tip.height)
  }

  /** The lowest height whose block is no older than `since` (unix seconds): a binary search over the block times. */
  private async firstBlockSince(since: number, tipHeight: number): Promise<number> {
    let [low, high] = [0, tipHeight]
    while (low < high) {
      const middle = Math.floor((low + high) / 2)
      const block = await this.chain.port.block(middle)
      if (block && block.time >= since) high = middle
      else low = middle + 1
    }
    return low
  }

  /** Up to `count` blocks after the position, as far as the upstream has them. */
  private async readBlocks(at: Position, count: number): Promise<ChainBlock[]> {
    const blocks: ChainBlock[] = []
    // Below the start height the position has no hash: the first block is read by its height.
    if (at.hash === null) {
      const first = await this.chain.port.block(at.height + 1)
      if (!first) return []
      blocks.push(first)
    }
    while (blocks.length < count) {
      const after = blocks.length ? blocks[blocks.length - 1].height : at.height
      const wanted = Math.min(LIST_PAGE_SIZE, count - blocks.length)
      const page = await this.chain.port.blocksAfter(after, wanted)
      blocks.push(...page)
      if (page.length < wanted) break
    }
    return blocks
  }

  /** The blocks with all their transactions, up to the first the upstream no longer holds as it listed it. */
  private async withTransactions(blocks: ChainBlock[]): Promise<FollowedBlock[]> {
    const listed = new Map<string, string[] | null>()
    await eachSettled(blocks.filter(block => block.txCount > 0), PARALLEL_CALLS, async block => listed.set(block.hash, await this.transactionHashes(block)))
    const found = new Map<string, ChainTransaction | null>()
    await eachSettled(blocks.flatMap(block => listed.get(block.hash) ?? []), PARALLEL_CALLS, async hash => found.set(hash, await this.chain.port.transaction(hash)))
    const run: FollowedBlock[] = []
    for (const block of blocks) {
      const hashes = block.txCount > 0 ? listed.get(block.hash) : []
      const transactions = (hashes ?? []).map(hash => found.get(hash))
      if (!hashes || hashes.length !== block.txCount || transactions.some(tx => !tx || tx.blockHash !== block.hash)) break
      run.push({ block, transactions: transactions as ChainTransaction[] })
    }
    return run
  }

  /** A block's transaction hashes in block order; null when the upstream no longer knows the block. */
  private async transactionHashes(block: ChainBlock): Promise<string[] | null> {
    const hashes: string[] = []
    for (let page = 1; hashes.length < block.txCount; page++) {
      const found = await this.chain.port.blockTransactions(block.hash, { page, order: 'asc' })
      if (!found) return null
      hashes.push(...found)
      if (found.length < LIST_PAGE_SIZE) break
    }
    return hashes
  }

  /**
   * The fork: the highest height where the index holds the upstream's block whole, at most
   * maxReorgDepth below the indexed height and not below the start. Everything above it is rolled
   * back and logged.
   */
  private async followReorg(at: Position, tip: ChainBlock, startHeight: number): Promise<Position> {
    const { maxReorgDepth } = this.settings
    const fork = await forkHeight({
      at, tipHeight: tip.height, floor: startHeight, maxDepth: maxReorgDepth,
      tooDeep: () => new ApiError(502, 'CHAIN_A_REORG_TOO_DEEP', `the upstream replaced more than ${maxReorgDepth} indexed blocks below height ${at.height}; reindex by hand`),
      localAt: height => (height === at.height ? Promise.resolve(at.hash) : inTransaction(() => wholeBlockAt(height))),
      remoteAt: async height => (await this.chain.port.block(height))?.hash,
    })
    if (fork > at.height) return at
    const rollback = await inTransaction(() => rollBackFrom(this.index, fork, tip.hash, this.instanceId, at))
    LOG.info(`chain-a reorg: ${rollback.blocksRolledBack} blocks from height ${fork} rolled back; reading the new chain from there`)
    return rollback.position
  }

  private async finalizedHeight(tip: ChainBlock): Promise<number> {
    return Math.max(-1, tip.height - (await this.chain.genesis()).securityParam)
  }

  private async record(tip: ChainBlock, status: 'syncing' | 'paused') {
    const finalizedHeight = await this.finalizedHeight(tip)
    await inTransaction(() => recordTip(this.instanceId, tip, finalizedHeight, status))
  }

  /**
   * At the tip: the status, and in the read index the tip and the newest indexed blocks' marks as
   * read now (the upstream's chain still runs through them).
   */
  private async recordSynced(tip: ChainBlock, at: Position, startHeight: number) {
    const finalizedHeight = await this.finalizedHeight(tip)
    await inTransaction(async () => {
      if (!(await recordTip(this.instanceId, tip, finalizedHeight, 'synced'))) return
      await this.index.storeFollowedTip(tip)
      await this.index.confirmFollowed(Math.max(startHeight, at.height - LIST_PAGE_SIZE + 1), at.height)
    })
  }
}
