import cds from '@sap/cds'
import {
  Blocks, Transactions, TransactionInputs, TransactionOutputs, TransactionInputAssets, TransactionOutputAssets, TransactionMetadata_,
  AddressUTxOs, UTxOAssets, AddressTransactions, AssetHistory_, IndexMarks, ListEntries,
} from '#cds-models/chaina'
import { LIST_PAGE_SIZE, type ChainBlock, type ChainTransaction } from '../chains/chain-a/port.ts'
import * as rows from './rows.ts'
import {
  STALE_CHECK_CHUNK, TTL_OF, pageRef, pagesOf, rank, span, upsertAll, type IndexCore, type ListKind, type MarkKind,
} from './indexer-core.ts'

const { SELECT, UPDATE, DELETE } = cds.ql

/** A block as the chain-A follower read it: the block and every one of its transactions, in block order. */
export interface FollowedBlock {
  block: ChainBlock
  transactions: ChainTransaction[]
}

/** What the chain-A follower writes into the index, and what a rollback takes out of it. */
export class FollowedIndex {
  private readonly core: IndexCore
  /** When the follower's blocks were last confirmed (confirmFollowed). */
  private lastConfirmedAt = 0

  constructor(core: IndexCore) {
    this.core = core
  }

  /**
   * Stores blocks the follower read with all their transactions, as lazy reads store them, and marks
   * each (block, height, the block's transaction list in both orders, each transaction), so that
   * reads answer from them. Rows a replaced block left at these heights go.
   */
  async storeFollowed(followed: FollowedBlock[]): Promise<void> {
    if (!followed.length) return
    const blocks = followed.map(entry => entry.block)
    await this.deleteTransactions({ blockHeight: { in: blocks.map(block => block.height) }, blockHash: { 'not in': blocks.map(block => block.hash) } })
    await this.core.storeBlocks(blocks, ['block', 'height'])
    const securityParam = await this.core.securityParam()
    const stored = followed.flatMap(({ block, transactions }) => transactions.map(tx => ({ hash: tx.hash, rows: rows.transactionRows(tx), final: block.confirmations >= securityParam })))
    await upsertAll(Transactions, stored.map(tx => tx.rows.transaction))
    await upsertAll(TransactionInputs, stored.flatMap(tx => tx.rows.inputs))
    await upsertAll(TransactionInputAssets, stored.flatMap(tx => tx.rows.inputAssets))
    await upsertAll(TransactionOutputs, stored.flatMap(tx => tx.rows.outputs))
    await upsertAll(TransactionOutputAssets, stored.flatMap(tx => tx.rows.outputAssets))
    await upsertAll(TransactionMetadata_, stored.flatMap(tx => tx.rows.metadata))
    await this.core.mark('transaction', stored.map(tx => ({ id: tx.hash, final: tx.final })))
    await this.storeWholeLists('blockTransactions', followed.map(({ block, transactions }) => ({
      parent: block.hash, keys: transactions.map(tx => tx.hash), final: block.confirmations >= securityParam,
    })))
  }

  /** The tip the follower read (having indexed up to it), stored and marked as a read of the tip stores it. */
  async storeFollowedTip(tip: ChainBlock): Promise<void> {
    await this.core.storeBlocks([tip], ['height'])
    await this.core.mark('tip', [{ id: 'latest', final: false }])
    this.core.latestTip = { height: tip.height, epoch: tip.epoch }
  }

  /**
   * The follower saw the upstream's chain still run through the blocks from height `from` to `to`:
   * their marks (block, height, transaction list, transactions) count as read now, so tip-near reads
   * keep answering from the index while it follows. At most once in a quarter of their TTL.
   */
  async confirmFollowed(from: number, to: number): Promise<void> {
    const ttlMs = this.core.ttlSeconds[TTL_OF.block] * 1000
    if (to < from || Date.now() - this.lastConfirmedAt < ttlMs / 4) return
    const fetchedAt = new Date().toISOString()
    const inRange = (column: string) => ({ [column]: { '>=': from } })
    const blocks = await SELECT.from(Blocks).columns('hash', 'txCount').where(inRange('height')).and({ height: { '<=': to } })
    const pageRefs = blocks.flatMap(block => (['asc', 'desc'] as const).flatMap(order => span(1, pagesOf(block.txCount ?? 0)).map(page => pageRef(block.hash!, { page, order }))))
    const refresh = async (kind: MarkKind, ids: string[]) => {
      for (let start = 0; start < ids.length; start += STALE_CHECK_CHUNK) {
        await UPDATE.entity(IndexMarks).set({ fetchedAt }).where({ kind, final: false, id: { in: ids.slice(start, start + STALE_CHECK_CHUNK) } })
      }
    }
    await refresh('height', span(from, to).map(String))
    await refresh('block', blocks.map(block => block.hash!))
    await refresh('blockTransactions', pageRefs)
    const transactions = SELECT.from(Transactions).columns('hash').where(inRange('blockHeight')).and({ blockHeight: { '<=': to } })
    await UPDATE.entity(IndexMarks).set({ fetchedAt }).where({ kind: 'transaction', final: false, id: { in: transactions } })
    this.lastConfirmedAt = Date.now()
  }

  /**
   * A rollback from `height` (a reorg): the blocks at or above it leave the index with their
   * transactions (inputs, outputs, assets, metadata, and the address, UTxO and asset history rows
   * they made), and so do the marks and lists that name them. The addresses those transactions
   * touched, the assets they minted or burned, the epochs of the blocks and the tip are read again
   * at their next use. Other instances forget what they remember of them within the TTLs.
   */
  async forgetFrom(height: number): Promise<void> {
    const blocks = await SELECT.from(Blocks).columns('hash', 'height', 'epoch').where({ height: { '>=': height } })
    const removed = (await SELECT.from(Transactions).columns('hash').where({ blockHeight: { '>=': height } })).map(tx => tx.hash!)
    const addresses = new Set<string>()
    const units = new Set<string>()
    for (let start = 0; start < removed.length; start += STALE_CHECK_CHUNK) {
      const txHash = { in: removed.slice(start, start + STALE_CHECK_CHUNK) }
      for (const entity of [TransactionInputs, TransactionOutputs]) {
        for (const row of await SELECT.from(entity).columns('address').where({ txHash })) if (row.address) addresses.add(row.address)
      }
      for (const row of await SELECT.from(AssetHistory_).columns('unit').where({ txHash })) units.add(row.unit!)
      for (const entity of [UTxOAssets, AddressUTxOs, AddressTransactions, AssetHistory_]) await DELETE.from(entity).where({ txHash })
    }
    await this.deleteTransactions({ blockHeight: { '>=': height } })
    await DELETE.from(Blocks).where({ height: { '>=': height } })
    const hashes = blocks.map(block => block.hash!)
    const top = Math.max(height, this.core.latestTip?.height ?? height, ...blocks.map(block => block.height!))
    await this.core.forgetMarks('height', span(height, top).map(String))
    await this.core.forgetMarks('block', hashes)
    await this.core.forgetMarks('transaction', removed)
    for (const hash of hashes) await this.core.forgetPages('blockTransactions', hash, ['asc', 'desc'], 1)
    for (let start = 0; start < hashes.length; start += STALE_CHECK_CHUNK) {
      await DELETE.from(ListEntries).where({ kind: { in: ['blockTransactions|asc', 'blockTransactions|desc'] }, parent: { in: hashes.slice(start, start + STALE_CHECK_CHUNK) } })
    }
    const epochs = [...new Set(blocks.map(block => String(block.epoch)))]
    await this.core.forgetMarks('epoch', [...epochs, 'latest'])
    for (const epoch of epochs) await this.core.forgetPages('epochBlocks', epoch, ['asc', 'desc'], 1)
    await this.core.forgetMarks('address', [...addresses])
    for (const address of addresses) await this.core.forgetPages('addressTransactions', address, ['asc', 'desc'], 1)
    for (const unit of units) await this.core.forgetPages('assetHistory', unit, ['asc', 'desc'], 1)
    await this.core.forgetMarks('tip', ['latest'])
    this.core.latestTip = undefined
    this.core.latestEpochNumber = undefined
  }

  /** Transactions matching `where`, with their inputs, outputs, assets and metadata. */
  private async deleteTransactions(where: Record<string, unknown>): Promise<void> {
    const hashes = SELECT.from(Transactions).columns('hash').where(where)
    for (const child of [TransactionInputAssets, TransactionOutputAssets, TransactionInputs, TransactionOutputs, TransactionMetadata_]) {
      await DELETE.from(child).where({ txHash: { in: hashes } })
    }
    await DELETE.from(Transactions).where(where)
  }

  /** Whole upstream lists of keys, stored and marked page by page in both orders, as reading every page would. */
  private async storeWholeLists(kind: ListKind, lists: { parent: string; keys: string[]; final: boolean }[]): Promise<void> {
    const orders = ['asc', 'desc'] as const
    await DELETE.from(ListEntries).where({ kind: { in: orders.map(order => `${kind}|${order}`) }, parent: { in: lists.map(list => list.parent) } })
    const entries = []
    const pages = []
    for (const { parent, keys, final } of lists) {
      for (const order of orders) {
        const ordered = order === 'asc' ? keys : [...keys].reverse()
        entries.push(...ordered.map((item, position) => ({ kind: `${kind}|${order}`, parent, position, item })))
        for (const page of span(1, pagesOf(keys.length))) {
          pages.push({ id: pageRef(parent, { page, order }), final, items: ordered.slice(rank({ page, order }, 0), rank({ page, order }, LIST_PAGE_SIZE)).length })
        }
      }
    }
    await upsertAll(ListEntries, entries)
    await this.core.mark(kind, pages)
  }
}
