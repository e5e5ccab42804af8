import cds from '@sap/cds'
import { Blocks, Transactions, TransactionInputs, TransactionOutputs, TransactionInputAssets, TransactionOutputAssets, TransactionMetadata_ } from '#cds-models/chaina'
import { LIST_PAGE_SIZE, type ChainBlock, type ChainTransaction } from '../chains/chain-a/port.ts'
import * as rows from './rows.ts'
import { MAX_LIST_PAGES, type ListWindow } from './list-window.ts'
import { FLIGHT_HOLD_MS, pagedRuns, span, upsertAll, type IndexCore } from './indexer-core.ts'

const { SELECT, UPSERT } = cds.ql

/** Blocks (by hash and by height) and transactions, with their inputs, outputs, assets and metadata. */
export class BlockIndex {
  private readonly core: IndexCore

  constructor(core: IndexCore) {
    this.core = core
  }

  async block(hash: string): Promise<void> {
    await this.core.ensure('block', hash, () => this.core.port().block(hash), async (block: ChainBlock | null) => {
      if (!block) return false
      await this.core.storeBlocks([block], ['height'])
      return block.confirmations >= (await this.core.genesis()).securityParam
    })
  }

  /** The block at a height; answers its hash, or undefined when the chain is not that high. */
  async blockAtHeight(height: number): Promise<string | undefined> {
    await this.core.ensure('height', String(height), () => this.core.port().block(height), async (block: ChainBlock | null) => {
      if (!block) return false
      await this.core.storeBlocks([block], ['block'])
      return block.confirmations >= (await this.core.genesis()).securityParam
    })
    return (await SELECT.one.from(Blocks).columns('hash').where({ height }))?.hash ?? undefined
  }

  /**
   * The chain's blocks by height: the window's blocks from genesis, or from the tip when it counts
   * from the end. Other windows (a filter, a count, another order) answer what has been indexed:
   * the whole chain is never read.
   */
  async blocks(window: ListWindow): Promise<void> {
    await this.core.tip()
    if (window.kind !== 'ordered') return
    const top = await this.highestHeight()
    const count = Math.min(window.upTo, MAX_LIST_PAGES * LIST_PAGE_SIZE)
    const [from, to] = window.fromEnd ? [Math.max(0, top - count + 1), top] : [0, Math.min(top, count - 1)]
    await this.blockRange(from, to)
  }

  /** A transaction with its inputs, outputs, assets and metadata; the tip is refreshed alongside (finality). */
  async transaction(hash: string): Promise<void> {
    const store = async (tx: ChainTransaction | null) => {
      if (!tx) return false
      const { transaction, inputs, inputAssets, outputs, outputAssets, metadata } = rows.transactionRows(tx)
      await UPSERT.into(Transactions).entries(transaction)
      await upsertAll(TransactionInputs, inputs)
      await upsertAll(TransactionInputAssets, inputAssets)
      await upsertAll(TransactionOutputs, outputs)
      await upsertAll(TransactionOutputAssets, outputAssets)
      await upsertAll(TransactionMetadata_, metadata)
      return (await this.core.tipHeight()) - tx.blockHeight >= (await this.core.genesis()).securityParam
    }
    await this.core.ensure('transaction', hash, () => this.core.port().transaction(hash), store, () => this.core.tip())
  }

  /** The transactions of a block (by hash or height) in block order; the window's are indexed. */
  async blockTransactions(block: string | number, window: ListWindow): Promise<void> {
    const hash = typeof block === 'number' ? await this.blockAtHeight(block) : block
    if (!hash) return
    await this.block(hash)
    const found = await SELECT.one.from(Blocks).columns('height').where({ hash })
    if (!found) return
    await this.core.keyList({
      kind: 'blockTransactions',
      parent: hash,
      load: page => this.core.port().blockTransactions(hash, page),
      index: tx => this.transaction(tx),
      final: async () => (await this.core.tipHeight()) - found.height! >= (await this.core.genesis()).securityParam,
    }, window)
  }

  /** The highest block indexed: the tip, or a block indexed since the tip was. */
  private async highestHeight(): Promise<number> {
    const newest = await SELECT.one.from(Blocks).columns('height').orderBy('height desc')
    return Math.max(this.core.latestTip?.height ?? 0, newest?.height ?? 0)
  }

  /** Blocks from height `from` to `to`, read a page at a time where not indexed and fresh. */
  private async blockRange(from: number, to: number): Promise<void> {
    const missing = await this.core.staleIds('height', span(from, to).map(String))
    for (const [first, last] of pagedRuns(missing.map(Number))) {
      const found = (await this.core.flights.run(`heights:${first}:${last}`, () => this.loadBlocks(first, last), FLIGHT_HOLD_MS)) as ChainBlock[]
      await this.core.storeBlocks(found, ['block', 'height'])
    }
  }

  private async loadBlocks(first: number, last: number): Promise<ChainBlock[]> {
    if (first > 0) return this.core.port().blocksAfter(first - 1, last - first + 1)
    // Some chains number their first block 1.
    const start = (await this.core.port().block(0)) ?? (await this.core.port().block(1))
    if (!start) return []
    const rest = last > start.height ? await this.core.port().blocksAfter(start.height, last - start.height) : []
    return [start, ...rest]
  }
}
