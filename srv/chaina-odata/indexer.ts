import { LIST_PAGE_SIZE, type ChainBlock } from '../chains/chain-a/port.ts'
import type { TtlKind } from '../chains/chain-a/config.ts'
import type { ListWindow } from './list-window.ts'
import { IndexCore, type IndexedChain, type MarkKind } from './indexer-core.ts'
import { BlockIndex } from './indexer-blocks.ts'
import { EpochIndex } from './indexer-epochs.ts'
import { AddressIndex } from './indexer-addresses.ts'
import { StakeIndex } from './indexer-stake.ts'
import { AssetIndex } from './indexer-assets.ts'
import { FollowedIndex, type FollowedBlock } from './indexer-followed.ts'

export type { FollowedBlock }

/** Newest entries the history actions answer (one upstream page). */
export const HISTORY_LIMIT = LIST_PAGE_SIZE

/**
 * Lazy index of chain A, one entity family per file (indexer-blocks, -epochs, -addresses, -stake,
 * -assets, -followed) over the shared marks of indexer-core. Each method makes sure the rows for
 * one key are in the database and fresh (see IndexCore).
 *
 * Collections the upstream lists (pools, DReps, epochs, blocks by height, a block's transactions,
 * an address's transactions, a pool's delegators...) are read page by page, as far as a read's
 * answer window reaches (see ListWindow); each page carries its own mark and TTL.
 */
export class ChainAIndex {
  private readonly core: IndexCore
  private readonly blockIndex: BlockIndex
  private readonly epochIndex: EpochIndex
  private readonly addressIndex: AddressIndex
  private readonly stakeIndex: StakeIndex
  private readonly assetIndex: AssetIndex
  private readonly followedIndex: FollowedIndex

  constructor(chain: IndexedChain, ttlSeconds: Record<TtlKind, number>) {
    this.core = new IndexCore(chain, ttlSeconds)
    this.blockIndex = new BlockIndex(this.core)
    this.epochIndex = new EpochIndex(this.core, this.blockIndex)
    this.addressIndex = new AddressIndex(this.core, this.blockIndex)
    this.stakeIndex = new StakeIndex(this.core, this.addressIndex)
    this.assetIndex = new AssetIndex(this.core)
    this.followedIndex = new FollowedIndex(this.core)
  }

  get network(): string {
    return this.core.network
  }

  purge(): Promise<void> {
    return this.core.purge()
  }

  tip(): Promise<void> {
    return this.core.tip()
  }

  securityParam(): Promise<number> {
    return this.core.securityParam()
  }

  invalidate(kind: MarkKind, ref: string): Promise<void> {
    return this.core.invalidate(kind, ref)
  }

  block(hash: string): Promise<void> {
    return this.blockIndex.block(hash)
  }

  blockAtHeight(height: number): Promise<string | undefined> {
    return this.blockIndex.blockAtHeight(height)
  }

  blocks(window: ListWindow): Promise<void> {
    return this.blockIndex.blocks(window)
  }

  transaction(hash: string): Promise<void> {
    return this.blockIndex.transaction(hash)
  }

  blockTransactions(block: string | number, window: ListWindow): Promise<void> {
    return this.blockIndex.blockTransactions(block, window)
  }

  epoch(epoch: number): Promise<void> {
    return this.epochIndex.epoch(epoch)
  }

  latestEpoch(): Promise<void> {
    return this.epochIndex.latestEpoch()
  }

  epochs(window: ListWindow): Promise<void> {
    return this.epochIndex.epochs(window)
  }

  epochBlocks(epoch: number, window: ListWindow): Promise<void> {
    return this.epochIndex.epochBlocks(epoch, window)
  }

  parameters(epoch?: number): Promise<void> {
    return this.epochIndex.parameters(epoch)
  }

  networkInformation(): Promise<void> {
    return this.epochIndex.networkInformation()
  }

  address(address: string): Promise<void> {
    return this.addressIndex.address(address)
  }

  utxo(txHash: string, outputIndex: number): Promise<string | undefined> {
    return this.addressIndex.utxo(txHash, outputIndex)
  }

  addressTransactions(address: string, window?: ListWindow): Promise<void> {
    return this.addressIndex.addressTransactions(address, window)
  }

  addressTransaction(address: string, txHash: string): Promise<void> {
    return this.addressIndex.addressTransaction(address, txHash)
  }

  forgetTransaction(change: { txHash: string; spent?: string[]; addresses?: string[] }): Promise<void> {
    return this.addressIndex.forgetTransaction(change)
  }

  account(stakeAddress: string): Promise<void> {
    return this.stakeIndex.account(stakeAddress)
  }

  accountAddresses(stakeAddress: string, window: ListWindow): Promise<void> {
    return this.stakeIndex.accountAddresses(stakeAddress, window)
  }

  pool(poolId: string): Promise<void> {
    return this.stakeIndex.pool(poolId)
  }

  pools(window: ListWindow): Promise<void> {
    return this.stakeIndex.pools(window)
  }

  poolDelegators(poolId: string, window: ListWindow): Promise<void> {
    return this.stakeIndex.poolDelegators(poolId, window)
  }

  drep(drepId: string): Promise<void> {
    return this.stakeIndex.drep(drepId)
  }

  dreps(window: ListWindow): Promise<void> {
    return this.stakeIndex.dreps(window)
  }

  drepDelegators(drepId: string, window: ListWindow): Promise<void> {
    return this.stakeIndex.drepDelegators(drepId, window)
  }

  assetHistory(unit: string, window?: ListWindow): Promise<void> {
    return this.assetIndex.assetHistory(unit, window)
  }

  storeFollowed(followed: FollowedBlock[]): Promise<void> {
    return this.followedIndex.storeFollowed(followed)
  }

  storeFollowedTip(tip: ChainBlock): Promise<void> {
    return this.followedIndex.storeFollowedTip(tip)
  }

  confirmFollowed(from: number, to: number): Promise<void> {
    return this.followedIndex.confirmFollowed(from, to)
  }

  forgetFrom(height: number): Promise<void> {
    return this.followedIndex.forgetFrom(height)
  }
}
