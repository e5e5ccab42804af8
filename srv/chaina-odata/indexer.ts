import cds from '@sap/cds'
import {
  Blocks, Epochs, Transactions, TransactionInputs, TransactionOutputs, TransactionInputAssets, TransactionOutputAssets,
  TransactionMetadata_, Addresses, AddressAssets, AddressUTxOs, UTxOAssets, AddressTransactions, Accounts, Pools, Dreps,
  LedgerProtocolParameters, NetworkInformation_, AssetHistory_, IndexMarks, ListEntries,
} from '#cds-models/chaina'
import {
  LIST_PAGE_SIZE, type ChainAPort, type ChainBlock, type ChainEpoch, type ChainGenesis, type ChainTransaction, type ListPage,
} from '../chains/chain-a/port.ts'
import type { TtlKind } from '../chains/chain-a/config.ts'
import type { ChainAService } from '../chains/chain-a/index.ts'
import { settleAll } from '../lib/settle-all.ts'
import { SingleFlight } from '../lib/single-flight.ts'
import * as rows from './rows.ts'
import { MAX_INDEXED_PER_READ, MAX_LIST_PAGES, eachSettled, newestPage, pagesFor, type ListWindow } from './list-window.ts'

const { SELECT, UPSERT, UPDATE, DELETE } = cds.ql

/** Newest entries the history actions answer (one upstream page). */
export const HISTORY_LIMIT = LIST_PAGE_SIZE

/** Upstream lists; each page of one is marked `<parent>|<order>|<page>`. */
type ListKind =
  | 'addressTransactions' | 'assetHistory' | 'blockTransactions' | 'epochBlocks'
  | 'pools' | 'dreps' | 'poolDelegators' | 'drepDelegators' | 'accountAddresses'

/** What an index mark records, and how long each kind stays fresh. */
type MarkKind =
  | 'tip' | 'block' | 'height' | 'epoch' | 'parameters' | 'network' | 'transaction'
  | 'address' | 'account' | 'pool' | 'drep' | ListKind

const TTL_OF: Record<MarkKind, TtlKind> = {
  tip: 'tip',
  block: 'transaction',
  height: 'transaction',
  epoch: 'epoch',
  parameters: 'parameters',
  network: 'network',
  transaction: 'transaction',
  address: 'address',
  account: 'account',
  pool: 'pool',
  drep: 'drep',
  addressTransactions: 'address',
  assetHistory: 'assetHistory',
  blockTransactions: 'transaction',
  epochBlocks: 'epoch',
  pools: 'pool',
  dreps: 'drep',
  poolDelegators: 'account',
  drepDelegators: 'account',
  accountAddresses: 'account',
}

interface Mark {
  fetchedAt: number
  final: boolean
  /** Items of a list page. */
  items?: number
}

/** What `ensure` stores: whether the data can never change again, and for a list page its size. */
type Stored = boolean | { final: boolean; items: number }

/** An upstream list of keys whose items are indexed one by one (see ListEntries). */
interface KeyList {
  kind: ListKind
  parent: string
  load: (page: ListPage) => Promise<string[] | null>
  /** Indexes one listed item. */
  index: (key: string) => Promise<unknown>
  /** Whether the list can no longer change. */
  final?: () => Promise<boolean>
}

/** An upstream list whose items are rows of their own (stored page by page). */
interface RowList<T> {
  kind: ListKind
  parent: string
  load: (page: ListPage) => Promise<T[] | null>
  store: (items: T[] | null, page: ListPage) => Promise<void>
  /** Whether the list can no longer change. */
  final?: () => Promise<boolean>
}

/** Upstream calls that run at once when one read indexes many listed items. */
const PARALLEL_ITEMS = 8

/** A block as the chain-A follower read it: the block and every one of its transactions, in block order. */
export interface FollowedBlock {
  block: ChainBlock
  transactions: ChainTransaction[]
}

/** Every cache table, in an order that deletes children before parents. */
const CACHE_TABLES = [
  TransactionInputAssets, TransactionOutputAssets, TransactionInputs, TransactionOutputs, TransactionMetadata_, Transactions,
  UTxOAssets, AddressUTxOs, AddressAssets, AddressTransactions, Addresses, Accounts, Pools, Dreps, Blocks, Epochs,
  LedgerProtocolParameters, NetworkInformation_, AssetHistory_, ListEntries, IndexMarks,
]

/** Followers that arrive just after a leader's upstream call reuse its answer this long (at most the TTL). */
const FLIGHT_HOLD_MS = 2000
/** Bound on remembered marks; the map is cleared when it grows past it. */
const MEMORY_LIMIT = 50_000

/**
 * Lazy index of chain A. Each `ensure…` makes sure the rows for one key are in the database and
 * fresh: immutable data (deeper than the security parameter) once, mutable data again after its
 * TTL. Concurrent misses for one key make one upstream call; every caller stores the answer in its
 * own transaction (idempotent UPSERTs), so no caller depends on another's commit.
 *
 * Collections the upstream lists (pools, DReps, epochs, blocks by height, a block's transactions,
 * an address's transactions, a pool's delegators...) are read page by page, as far as a read's
 * answer window reaches (see ListWindow); each page carries its own mark and TTL.
 */
export class ChainAIndex {
  /** The chain-a service: its port, and the chain's genesis it holds for every service. */
  private readonly chain: Pick<ChainAService, 'port' | 'networkName' | 'genesis'>
  private readonly ttlSeconds: Record<TtlKind, number>
  private readonly flights = new SingleFlight<unknown>()
  private readonly memory = new Map<string, Mark>()
  /** Marks a request has already seen or written: it need not check them again. */
  private readonly seenBy = new WeakMap<object, Map<string, Mark>>()
  private latestTip?: { height: number; epoch: number }
  private latestEpochNumber?: number
  /** When the follower's blocks were last confirmed (confirmFollowed). */
  private lastConfirmedAt = 0

  constructor(chain: Pick<ChainAService, 'port' | 'networkName' | 'genesis'>, ttlSeconds: Record<TtlKind, number>) {
    this.chain = chain
    this.ttlSeconds = ttlSeconds
  }

  get network(): string {
    return this.chain.networkName
  }

  /** Empties the cache and what is remembered of it (the upstream serves another chain than it was filled from). */
  async purge(): Promise<void> {
    for (const table of CACHE_TABLES) await DELETE.from(table)
    this.memory.clear()
    this.seenInRequest()?.clear()
    this.flights.clear()
    this.latestTip = undefined
    this.latestEpochNumber = undefined
  }

  async tip(): Promise<void> {
    await this.ensure('tip', 'latest', () => this.port().tip(), async (block: ChainBlock) => {
      await this.storeBlocks([block], ['height'])
      this.latestTip = { height: block.height, epoch: block.epoch }
      return false
    })
  }

  async block(hash: string): Promise<void> {
    await this.ensure('block', hash, () => this.port().block(hash), async (block: ChainBlock | null) => {
      if (!block) return false
      await this.storeBlocks([block], ['height'])
      return block.confirmations >= (await this.genesis()).securityParam
    })
  }

  /** The block at a height; answers its hash, or undefined when the chain is not that high. */
  async blockAtHeight(height: number): Promise<string | undefined> {
    await this.ensure('height', String(height), () => this.port().block(height), async (block: ChainBlock | null) => {
      if (!block) return false
      await this.storeBlocks([block], ['block'])
      return block.confirmations >= (await this.genesis()).securityParam
    })
    return (await SELECT.one.from(Blocks).columns('hash').where({ height }))?.hash ?? undefined
  }

  /**
   * The chain's blocks by height: the window's blocks from genesis, or from the tip when it counts
   * from the end. Other windows (a filter, a count, another order) answer what has been indexed:
   * the whole chain is never read.
   */
  async blocks(window: ListWindow): Promise<void> {
    await this.tip()
    if (window.kind !== 'ordered') return
    const top = await this.highestHeight()
    const count = Math.min(window.upTo, MAX_LIST_PAGES * LIST_PAGE_SIZE)
    const [from, to] = window.fromEnd ? [Math.max(0, top - count + 1), top] : [0, Math.min(top, count - 1)]
    await this.blockRange(from, to)
  }

  /** The blocks of an epoch in chain order; the window's are indexed. */
  async epochBlocks(epoch: number, window: ListWindow): Promise<void> {
    await this.epoch(epoch)
    if (!(await SELECT.one.from(Epochs).columns('epoch').where({ epoch }))) return
    await this.keyList({
      kind: 'epochBlocks',
      parent: String(epoch),
      load: page => this.port().epochBlocks(epoch, page),
      index: hash => this.block(hash),
      final: async () => (await this.tipEpoch()) >= epoch + 2,
    }, window)
  }

  async epoch(epoch: number): Promise<void> {
    await this.ensure('epoch', String(epoch), () => this.port().epoch(epoch), async found => {
      if (!found) return false
      await UPSERT.into(Epochs).entries(rows.epochRow(found))
      return (await this.tipEpoch()) >= epoch + 2
    })
  }

  async latestEpoch(): Promise<void> {
    await this.ensure('epoch', 'latest', () => this.port().latestEpoch(), async found => {
      await UPSERT.into(Epochs).entries(rows.epochRow(found))
      this.latestEpochNumber = found.epoch
      return false
    })
  }

  /** Every epoch, from 0 to the current one (numbered without gaps): the window's are indexed. */
  async epochs(window: ListWindow): Promise<void> {
    const current = await this.currentEpoch()
    const count = window.kind === 'whole' ? current + 1 : Math.min(window.upTo, MAX_LIST_PAGES * LIST_PAGE_SIZE)
    const fromEnd = window.kind === 'ordered' ? window.fromEnd : window.kind === 'byKey' && window.descending
    const [from, to] = fromEnd ? [Math.max(0, current - count + 1), current] : [0, Math.min(current, count - 1)]
    const missing = await this.staleIds('epoch', span(from, to).map(String))
    for (const [first, last] of pagedRuns(missing.map(Number))) {
      const found = (await this.flights.run(`epochs:${first}:${last}`, () => this.loadEpochs(first, last), FLIGHT_HOLD_MS)) as ChainEpoch[]
      await upsertAll(Epochs, found.map(rows.epochRow))
      await this.mark('epoch', found.map(epoch => ({ id: String(epoch.epoch), final: current >= epoch.epoch + 2 })))
    }
  }

  /** Protocol parameters of an epoch, or of the current one when `epoch` is omitted. */
  async parameters(epoch?: number): Promise<void> {
    const ref = epoch === undefined ? 'latest' : String(epoch)
    await this.ensure('parameters', ref, () => this.port().protocolParameters(epoch), async found => {
      if (!found) return false
      await UPSERT.into(LedgerProtocolParameters).entries(rows.parametersRow(found))
      return epoch !== undefined && epoch < (await this.tipEpoch())
    })
  }

  async networkInformation(): Promise<void> {
    const load = async () => Promise.all([this.port().network(), this.genesis()])
    await this.ensure('network', this.network, load, async ([supply, genesis]) => {
      await UPSERT.into(NetworkInformation_).entries(rows.networkRow(this.network, supply, genesis))
      return false
    })
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
      return (await this.tipHeight()) - tx.blockHeight >= (await this.genesis()).securityParam
    }
    await this.ensure('transaction', hash, () => this.port().transaction(hash), store, () => this.tip())
  }

  /** The transactions of a block (by hash or height) in block order; the window's are indexed. */
  async blockTransactions(block: string | number, window: ListWindow): Promise<void> {
    const hash = typeof block === 'number' ? await this.blockAtHeight(block) : block
    if (!hash) return
    await this.block(hash)
    const found = await SELECT.one.from(Blocks).columns('height').where({ hash })
    if (!found) return
    await this.keyList({
      kind: 'blockTransactions',
      parent: hash,
      load: page => this.port().blockTransactions(hash, page),
      index: tx => this.transaction(tx),
      final: async () => (await this.tipHeight()) - found.height! >= (await this.genesis()).securityParam,
    }, window)
  }

  /** The address with its balance, the assets it holds and its UTxO set. */
  async address(address: string): Promise<void> {
    const load = () => Promise.all([this.port().address(address), this.port().addressUtxos(address)])
    await this.ensure('address', address, load, async ([summary, utxos]) => {
      const fresh = rows.addressRows(address, summary, utxos)
      await UPSERT.into(Addresses).entries(fresh.address)
      await DELETE.from(AddressAssets).where({ address })
      await DELETE.from(UTxOAssets).where({ address })
      await DELETE.from(AddressUTxOs).where({ address })
      await upsertAll(AddressAssets, fresh.assets)
      await upsertAll(AddressUTxOs, fresh.utxos)
      await upsertAll(UTxOAssets, fresh.utxoAssets)
      return false
    })
  }

  /**
   * A UTxO by reference: its transaction names the address, whose fresh UTxO set tells whether it
   * is still unspent. Answers the address, or undefined when the transaction has no such output.
   */
  async utxo(txHash: string, outputIndex: number): Promise<string | undefined> {
    await this.transaction(txHash)
    const output = await SELECT.one.from(TransactionOutputs).columns('address').where({ txHash, outputIndex })
    if (output?.address) await this.address(output.address)
    return output?.address ?? undefined
  }

  /** The address's transactions in chain order, as far as the window reaches (by default the newest page). */
  async addressTransactions(address: string, window: ListWindow = newestPage): Promise<void> {
    await this.rowList({
      kind: 'addressTransactions',
      parent: address,
      load: page => this.port().addressTransactionPage(address, page),
      store: async history => upsertAll(AddressTransactions, rows.addressTransactionRows(address, history ?? [])),
    }, window)
  }

  /** One transaction of an address, from the transaction itself (which tells whether it pays or spends from the address). */
  async addressTransaction(address: string, txHash: string): Promise<void> {
    await this.transaction(txHash)
    const tx = await SELECT.one.from(Transactions).columns('txIndex', 'blockHeight', 'blockTime').where({ hash: txHash })
    if (!tx) return
    const touches =
      (await SELECT.one.from(TransactionOutputs).columns('txHash').where({ txHash, address })) ??
      (await SELECT.one.from(TransactionInputs).columns('txHash').where({ txHash, address }))
    if (touches) await UPSERT.into(AddressTransactions).entries({ address, txHash, txIndex: tx.txIndex, blockHeight: tx.blockHeight, blockTime: tx.blockTime })
  }

  /** The addresses of a stake account; the window's are indexed. */
  async accountAddresses(stakeAddress: string, window: ListWindow): Promise<void> {
    await this.keyList({
      kind: 'accountAddresses',
      parent: stakeAddress,
      load: page => this.port().accountAddresses(stakeAddress, page),
      index: address => this.address(address),
    }, window)
  }

  async account(stakeAddress: string): Promise<void> {
    await this.mirror('account', Accounts, { stakeAddress }, () => this.port().account(stakeAddress), rows.accountRow)
  }

  async pool(poolId: string): Promise<void> {
    await this.mirror('pool', Pools, { poolId }, () => this.port().pool(poolId), rows.poolRow)
  }

  /**
   * The registered pools in registration order, with the figures the pool list carries; the
   * registration details of a pool are indexed by `pool`.
   */
  async pools(window: ListWindow): Promise<void> {
    await this.rowList({
      kind: 'pools',
      parent: '',
      load: page => this.port().pools(page),
      store: async (pools, page) => this.storeRanked(Pools, 'poolId', page, (pools ?? []).map((pool, i) => rows.poolSummaryRow(pool, rank(page, i)))),
    }, startOnly(window))
  }

  /** The accounts delegating to a pool; the window's are indexed. */
  async poolDelegators(poolId: string, window: ListWindow): Promise<void> {
    await this.keyList({
      kind: 'poolDelegators',
      parent: poolId,
      load: async page => (await this.port().poolDelegators(poolId, page))?.map(delegator => delegator.stakeAddress) ?? null,
      index: stakeAddress => this.account(stakeAddress),
    }, window)
  }

  async drep(drepId: string): Promise<void> {
    await this.mirror('drep', Dreps, { drepId }, () => this.port().drep(drepId), rows.drepRow)
  }

  /** The registered DReps in registration order (the list carries every figure of a DRep). */
  async dreps(window: ListWindow): Promise<void> {
    await this.rowList({
      kind: 'dreps',
      parent: '',
      load: page => this.port().dreps(page),
      store: async (dreps, page) => this.storeRanked(Dreps, 'drepId', page, (dreps ?? []).map((drep, i) => rows.drepRow(drep, rank(page, i)))),
    }, startOnly(window))
  }

  /** The accounts delegating their votes to a DRep; the window's are indexed. */
  async drepDelegators(drepId: string, window: ListWindow): Promise<void> {
    await this.keyList({
      kind: 'drepDelegators',
      parent: drepId,
      load: async page => (await this.port().drepDelegators(drepId, page))?.map(delegator => delegator.stakeAddress) ?? null,
      index: stakeAddress => this.account(stakeAddress),
    }, window)
  }

  /**
   * Mint and burn events of an asset, newest first by `position`, as far as the window reaches (by
   * default the newest page). An asset that was never minted has none.
   */
  async assetHistory(unit: string, window: ListWindow = newestPage): Promise<void> {
    const fromNewest: ListWindow = window.kind === 'ordered' && window.fromEnd ? window : { kind: 'whole' }
    await this.rowList({
      kind: 'assetHistory',
      parent: unit,
      load: page => this.port().assetHistoryPage(unit, page),
      store: async (history, page) => {
        if (!history) return void (await DELETE.from(AssetHistory_).where({ unit }))
        const entries = rows.assetHistoryRows(unit, history, rank(page, 0))
        await DELETE.from(AssetHistory_).where({ unit, position: { in: span(rank(page, 0), rank(page, LIST_PAGE_SIZE - 1)) } })
        await upsertAll(AssetHistory_, entries)
      },
    }, fromNewest, 'desc')
  }

  /**
   * A transaction was submitted or confirmed: forget it (a cached "not found"), the tip, and every
   * address it pays or spends from (spent outputs are looked up in the cache), so the next reads
   * ask the upstream again.
   */
  async forgetTransaction(change: { txHash: string; spent?: string[]; addresses?: string[] }): Promise<void> {
    const addresses = new Set(change.addresses ?? [])
    for (const ref of change.spent ?? []) {
      const [txHash, index] = ref.split('#')
      const utxo = await SELECT.one.from(AddressUTxOs).columns('address').where({ txHash, outputIndex: Number(index) })
      if (utxo?.address) addresses.add(utxo.address)
    }
    await this.invalidate('transaction', change.txHash)
    await this.invalidate('tip', 'latest')
    for (const address of addresses) {
      await this.invalidate('address', address)
      await this.forgetPages('addressTransactions', address, ['asc', 'desc'], 1)
    }
  }

  /** Forgets what is known of a key, so the next read asks the upstream (after a submit, say). */
  async invalidate(kind: MarkKind, ref: string): Promise<void> {
    this.forget(`${kind}:${ref}`)
    await DELETE.from(IndexMarks).where({ kind, id: ref })
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
    await this.storeBlocks(blocks, ['block', 'height'])
    const securityParam = await this.securityParam()
    const stored = followed.flatMap(({ block, transactions }) => transactions.map(tx => ({ hash: tx.hash, rows: rows.transactionRows(tx), final: block.confirmations >= securityParam })))
    await upsertAll(Transactions, stored.map(tx => tx.rows.transaction))
    await upsertAll(TransactionInputs, stored.flatMap(tx => tx.rows.inputs))
    await upsertAll(TransactionInputAssets, stored.flatMap(tx => tx.rows.inputAssets))
    await upsertAll(TransactionOutputs, stored.flatMap(tx => tx.rows.outputs))
    await upsertAll(TransactionOutputAssets, stored.flatMap(tx => tx.rows.outputAssets))
    await upsertAll(TransactionMetadata_, stored.flatMap(tx => tx.rows.metadata))
    await this.mark('transaction', stored.map(tx => ({ id: tx.hash, final: tx.final })))
    await this.storeWholeLists('blockTransactions', followed.map(({ block, transactions }) => ({
      parent: block.hash, keys: transactions.map(tx => tx.hash), final: block.confirmations >= securityParam,
    })))
  }

  /** The tip the follower read (having indexed up to it), stored and marked as a read of the tip stores it. */
  async storeFollowedTip(tip: ChainBlock): Promise<void> {
    await this.storeBlocks([tip], ['height'])
    await this.mark('tip', [{ id: 'latest', final: false }])
    this.latestTip = { height: tip.height, epoch: tip.epoch }
  }

  /**
   * The follower saw the upstream's chain still run through the blocks from height `from` to `to`:
   * their marks (block, height, transaction list, transactions) count as read now, so tip-near reads
   * keep answering from the index while it follows. At most once in a quarter of their TTL.
   */
  async confirmFollowed(from: number, to: number): Promise<void> {
    const ttlMs = this.ttlSeconds[TTL_OF.block] * 1000
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
    const top = Math.max(height, this.latestTip?.height ?? height, ...blocks.map(block => block.height!))
    await this.forgetMarks('height', span(height, top).map(String))
    await this.forgetMarks('block', hashes)
    await this.forgetMarks('transaction', removed)
    for (const hash of hashes) await this.forgetPages('blockTransactions', hash, ['asc', 'desc'], 1)
    for (let start = 0; start < hashes.length; start += STALE_CHECK_CHUNK) {
      await DELETE.from(ListEntries).where({ kind: { in: ['blockTransactions|asc', 'blockTransactions|desc'] }, parent: { in: hashes.slice(start, start + STALE_CHECK_CHUNK) } })
    }
    const epochs = [...new Set(blocks.map(block => String(block.epoch)))]
    await this.forgetMarks('epoch', [...epochs, 'latest'])
    for (const epoch of epochs) await this.forgetPages('epochBlocks', epoch, ['asc', 'desc'], 1)
    await this.forgetMarks('address', [...addresses])
    for (const address of addresses) await this.forgetPages('addressTransactions', address, ['asc', 'desc'], 1)
    for (const unit of units) await this.forgetPages('assetHistory', unit, ['asc', 'desc'], 1)
    await this.forgetMarks('tip', ['latest'])
    this.latestTip = undefined
    this.latestEpochNumber = undefined
  }

  async securityParam(): Promise<number> {
    return (await this.genesis()).securityParam
  }

  private port(): ChainAPort {
    return this.chain.port
  }

  private genesis(): Promise<ChainGenesis> {
    return this.chain.genesis()
  }

  private async tipHeight(): Promise<number> {
    await this.tip()
    if (this.latestTip) return this.latestTip.height
    const newest = await SELECT.one.from(Blocks).columns('height', 'epoch').orderBy('height desc')
    return newest?.height ?? 0
  }

  private async tipEpoch(): Promise<number> {
    await this.tip()
    if (this.latestTip) return this.latestTip.epoch
    const newest = await SELECT.one.from(Blocks).columns('height', 'epoch').orderBy('height desc')
    return newest?.epoch ?? 0
  }

  /** The highest block indexed: the tip, or a block indexed since the tip was. */
  private async highestHeight(): Promise<number> {
    const newest = await SELECT.one.from(Blocks).columns('height').orderBy('height desc')
    return Math.max(this.latestTip?.height ?? 0, newest?.height ?? 0)
  }

  private async currentEpoch(): Promise<number> {
    await this.latestEpoch()
    if (this.latestEpochNumber !== undefined) return this.latestEpochNumber
    const newest = await SELECT.one.from(Epochs).columns('epoch').orderBy('epoch desc')
    return newest?.epoch ?? 0
  }

  /** Blocks from height `from` to `to`, read a page at a time where not indexed and fresh. */
  private async blockRange(from: number, to: number): Promise<void> {
    const missing = await this.staleIds('height', span(from, to).map(String))
    for (const [first, last] of pagedRuns(missing.map(Number))) {
      const found = (await this.flights.run(`heights:${first}:${last}`, () => this.loadBlocks(first, last), FLIGHT_HOLD_MS)) as ChainBlock[]
      await this.storeBlocks(found, ['block', 'height'])
    }
  }

  private async loadBlocks(first: number, last: number): Promise<ChainBlock[]> {
    if (first > 0) return this.port().blocksAfter(first - 1, last - first + 1)
    // Some chains number their first block 1.
    const start = (await this.port().block(0)) ?? (await this.port().block(1))
    if (!start) return []
    const rest = last > start.height ? await this.port().blocksAfter(start.height, last - start.height) : []
    return [start, ...rest]
  }

  private async loadEpochs(first: number, last: number): Promise<ChainEpoch[]> {
    if (first > 0) return this.port().epochsAfter(first - 1, last - first + 1)
    const genesis = await this.port().epoch(0)
    const rest = last > 0 ? await this.port().epochsAfter(0, last) : []
    return genesis ? [genesis, ...rest] : rest
  }

  /** Stores blocks and marks them; a block another took the place of (a rollback) leaves the index. */
  private async storeBlocks(blocks: ChainBlock[], marks: ('block' | 'height')[]): Promise<void> {
    if (!blocks.length) return
    await UPSERT.into(Blocks).entries(blocks.map(rows.blockRow))
    await DELETE.from(Blocks).where({ height: { in: blocks.map(block => block.height) } }).and({ hash: { 'not in': blocks.map(block => block.hash) } })
    const securityParam = await this.securityParam()
    for (const kind of marks) {
      await this.mark(kind, blocks.map(block => ({ id: kind === 'block' ? block.hash : String(block.height), final: block.confirmations >= securityParam })))
    }
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
    await this.mark(kind, pages)
  }

  /** Forgets keys of one kind: their marks and what is remembered of them. */
  private async forgetMarks(kind: MarkKind, ids: string[]): Promise<void> {
    for (const id of ids) this.forget(`${kind}:${id}`)
    for (let start = 0; start < ids.length; start += STALE_CHECK_CHUNK) {
      await DELETE.from(IndexMarks).where({ kind, id: { in: ids.slice(start, start + STALE_CHECK_CHUNK) } })
    }
  }

  /** Rows of a registry list page with their positions; rows that held these positions before lose them. */
  private async storeRanked(entity: typeof Pools | typeof Dreps, key: 'poolId' | 'drepId', page: ListPage, entries: object[]): Promise<void> {
    const positions = span(rank(page, 0), rank(page, LIST_PAGE_SIZE - 1))
    const keys = entries.map(entry => (entry as Record<string, string>)[key])
    await UPDATE.entity(entity).set({ position: null }).where({ position: { in: positions } }).and({ [key]: { 'not in': keys.length ? keys : [''] } })
    await upsertAll(entity, entries)
  }

  /** A list whose items are rows: the pages the window needs (every page, up to the bound, for others). */
  private async rowList<T>(list: RowList<T>, window: ListWindow, wholeOrder: 'asc' | 'desc' = 'asc'): Promise<void> {
    if (window.kind === 'ordered') return this.readPages(list, window.fromEnd ? 'desc' : 'asc', pagesFor(window.upTo))
    await this.readPages(list, wholeOrder, MAX_LIST_PAGES)
  }

  /** A list of keys: its pages as ListEntries, then the items the window holds are indexed. */
  private async keyList(list: KeyList, window: ListWindow): Promise<void> {
    const order = window.kind === 'ordered' && window.fromEnd ? 'desc' : 'asc'
    const name = `${list.kind}|${order}`
    await this.readPages({
      kind: list.kind,
      parent: list.parent,
      load: list.load,
      final: list.final,
      store: async (keys, page) => {
        await DELETE.from(ListEntries).where({ kind: name, parent: list.parent, position: { in: span(rank(page, 0), rank(page, LIST_PAGE_SIZE - 1)) } })
        await upsertAll(ListEntries, (keys ?? []).map((item, i) => ({ kind: name, parent: list.parent, position: rank(page, i), item })))
      },
    }, order, window.kind === 'ordered' ? pagesFor(window.upTo) : MAX_LIST_PAGES)
    const listed = (await SELECT.from(ListEntries).columns('item').where({ kind: name, parent: list.parent }).orderBy('position')).map(entry => entry.item!)
    await eachSettled(windowOf(listed, window).slice(0, MAX_INDEXED_PER_READ), PARALLEL_ITEMS, list.index)
  }

  /** Pages 1.. of a list in one order, until `pages` are read or a short page ends the list. */
  private async readPages<T>(list: RowList<T>, order: 'asc' | 'desc', pages: number): Promise<void> {
    for (let number = 1; number <= pages; number++) {
      const page: ListPage = { page: number, order }
      const mark = await this.ensure(list.kind, pageRef(list.parent, page), () => list.load(page), async (items: T[] | null) => {
        // Later pages were cut from the list as it was then; its first page is the new start.
        if (number === 1) await this.forgetPages(list.kind, list.parent, [order], 2)
        await list.store(items, page)
        return { final: (await list.final?.()) ?? false, items: items?.length ?? 0 }
      })
      if ((mark.items ?? 0) < LIST_PAGE_SIZE) return
    }
  }

  private async forgetPages(kind: ListKind, parent: string, orders: ('asc' | 'desc')[], from: number): Promise<void> {
    const refs = orders.flatMap(order => span(from, MAX_LIST_PAGES).map(page => pageRef(parent, { page, order })))
    for (const ref of refs) this.forget(`${kind}:${ref}`)
    await DELETE.from(IndexMarks).where({ kind, id: { in: refs } })
  }

  private forget(key: string) {
    this.memory.delete(key)
    this.seenInRequest()?.delete(key)
    this.flights.forget(key)
  }

  /** Of the keys, those without a fresh mark of the kind. */
  private async staleIds(kind: Exclude<MarkKind, 'chain'>, ids: string[]): Promise<string[]> {
    const seen = this.seenInRequest()
    const unknown = ids.filter(id => !this.isFresh(kind, seen?.get(`${kind}:${id}`) ?? this.memory.get(`${kind}:${id}`)))
    const fresh = new Set<string>()
    for (let start = 0; start < unknown.length; start += STALE_CHECK_CHUNK) {
      const stored = await SELECT.from(IndexMarks).where({ kind, id: { in: unknown.slice(start, start + STALE_CHECK_CHUNK) } })
      const remembered: [string, Mark][] = []
      for (const entry of stored) {
        const mark = toMark(entry)
        if (!this.isFresh(kind, mark)) continue
        fresh.add(entry.id!)
        seen?.set(`${kind}:${entry.id}`, mark)
        remembered.push([`${kind}:${entry.id}`, mark])
      }
      this.rememberAfterCommit(remembered)
    }
    return unknown.filter(id => !fresh.has(id))
  }

  /** Marks keys indexed now (data stored without `ensure`, a page of a list at a time). */
  private async mark(kind: Exclude<MarkKind, 'chain'>, entries: { id: string; final: boolean; items?: number }[]): Promise<void> {
    if (!entries.length) return
    const fetchedAt = new Date()
    await UPSERT.into(IndexMarks).entries(entries.map(({ id, final, items }) => ({ kind, id, fetchedAt: fetchedAt.toISOString(), final, ...(items === undefined ? {} : { items }) })))
    const seen = this.seenInRequest()
    const remembered = entries.map(({ id, final, items }): [string, Mark] => [`${kind}:${id}`, { fetchedAt: fetchedAt.getTime(), final, items }])
    for (const [key, mark] of remembered) seen?.set(key, mark)
    this.rememberAfterCommit(remembered)
  }

  /**
   * Makes the rows of one key present and fresh. `store` writes the upstream answer and tells
   * whether it can never change again (then it is never fetched again). On a miss, `alongside`
   * runs in parallel with the upstream call (other data the store will need). Answers the mark.
   */
  private async ensure<T>(
    kind: Exclude<MarkKind, 'chain'>, ref: string, load: () => Promise<T>, store: (data: T) => Promise<Stored>,
    alongside?: () => Promise<unknown>,
  ): Promise<Mark> {
    const key = `${kind}:${ref}`
    const seen = this.seenInRequest()
    const remembered = seen?.get(key) ?? this.memory.get(key)
    if (remembered && this.isFresh(kind, remembered)) return remembered
    const stored = await SELECT.one.from(IndexMarks).where({ kind, id: ref })
    const mark = stored && toMark(stored)
    if (mark && this.isFresh(kind, mark)) {
      seen?.set(key, mark)
      this.rememberAfterCommit([[key, mark]])
      return mark
    }
    const holdMs = Math.min(FLIGHT_HOLD_MS, this.ttlSeconds[TTL_OF[kind]] * 1000)
    const [data] = (await settleAll([this.flights.run(key, load, holdMs), alongside?.()])) as [T, unknown]
    const outcome = await store(data)
    const fresh: Mark = typeof outcome === 'boolean' ? { fetchedAt: Date.now(), final: outcome } : { fetchedAt: Date.now(), ...outcome }
    await UPSERT.into(IndexMarks).entries({ kind, id: ref, fetchedAt: new Date(fresh.fetchedAt).toISOString(), final: fresh.final, items: fresh.items ?? null })
    seen?.set(key, fresh)
    this.rememberAfterCommit([[key, fresh]])
    return fresh
  }

  /** The marks the current request has seen; its own writes are visible to it before they commit. */
  private seenInRequest(): Map<string, Mark> | undefined {
    const context = cds.context as object | undefined
    if (!context) return undefined
    let seen = this.seenBy.get(context)
    if (!seen) this.seenBy.set(context, (seen = new Map()))
    return seen
  }

  /** One row per key: present while the upstream knows the key, deleted when it no longer does. */
  private async mirror<T>(kind: 'account' | 'pool' | 'drep', entity: any, key: Record<string, string>, load: () => Promise<T | null>, toRow: (found: T) => object) {
    await this.ensure(kind, Object.values(key)[0], load, async found => {
      if (found) await UPSERT.into(entity).entries(toRow(found))
      else await DELETE.from(entity).where(key)
      return false
    })
  }

  private isFresh(kind: Exclude<MarkKind, 'chain'>, mark: Mark | undefined): boolean {
    if (!mark) return false
    return mark.final || Date.now() - mark.fetchedAt < this.ttlSeconds[TTL_OF[kind]] * 1000
  }

  /** Other requests may skip the database check only once these rows are visible to them. */
  private rememberAfterCommit(entries: [key: string, mark: Mark][]) {
    if (!entries.length) return
    const remember = () => {
      for (const [key, mark] of entries) {
        if (this.memory.size >= MEMORY_LIMIT) this.memory.clear()
        this.memory.set(key, mark)
      }
    }
    const context = cds.context as any
    if (context?.on) context.on('succeeded', remember)
    else remember()
  }
}

/** Marks checked per query when a read needs many keys at once. */
const STALE_CHECK_CHUNK = 500

const toMark = (stored: { fetchedAt?: string | null; final?: boolean | null; items?: number | null }): Mark => ({
  fetchedAt: Date.parse(stored.fetchedAt!),
  final: !!stored.final,
  items: stored.items ?? undefined,
})

const pageRef = (parent: string, { page, order }: ListPage) => `${parent}|${order}|${page}`

/** Position in a list of the `index`-th item of a page. */
const rank = ({ page }: ListPage, index: number) => (page - 1) * LIST_PAGE_SIZE + index

/** The pages a reader of a whole list of `items` reads: up to the first one that is not full. */
const pagesOf = (items: number) => Math.floor(items / LIST_PAGE_SIZE) + 1

/** The integers from `from` to `to`, both included. */
const span = (from: number, to: number) => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i)

/** Registry lists are read from their start only: their positions count from there. */
const startOnly = (window: ListWindow): ListWindow => (window.kind === 'ordered' && !window.fromEnd ? window : { kind: 'whole' })

/** Ascending integers as runs of consecutive values, each at most one upstream page long. */
function pagedRuns(values: number[]): [number, number][] {
  const runs: [number, number][] = []
  for (const value of [...values].sort((a, b) => a - b)) {
    const last = runs[runs.length - 1]
    if (last && value === last[1] + 1 && value - last[0] < LIST_PAGE_SIZE) last[1] = value
    else runs.push([value, value])
  }
  return runs
}

/** The listed keys a window holds, in the window's order. */
function windowOf(keys: string[], window: ListWindow): string[] {
  if (window.kind === 'ordered') return keys.slice(0, window.upTo)
  if (window.kind === 'whole') return keys
  const sorted = [...keys].sort()
  return (window.descending ? sorted.reverse() : sorted).slice(0, window.upTo)
}

async function upsertAll(entity: any, entries: object[]) {
  if (entries.length) await UPSERT.into(entity).entries(entries)
}
