import cds from '@sap/cds'
import {
  Blocks, Epochs, Transactions, TransactionInputs, TransactionOutputs, TransactionInputAssets, TransactionOutputAssets,
  TransactionMetadata_, Addresses, AddressAssets, AddressUTxOs, UTxOAssets, AddressTransactions, Accounts, Pools, Dreps,
  LedgerProtocolParameters, NetworkInformation_, AssetHistory_, IndexMarks,
} from '#cds-models/chaina'
import type { ChainAPort, ChainBlock, ChainGenesis, ChainTransaction } from '../chains/chain-a/port.ts'
import type { TtlKind } from '../chains/chain-a/config.ts'
import { settleAll } from '../lib/settle-all.ts'
import { SingleFlight } from '../lib/single-flight.ts'
import * as rows from './rows.ts'

const { SELECT, UPSERT, DELETE } = cds.ql

/** Newest entries kept per address history and asset history (one upstream page). */
export const HISTORY_LIMIT = 100

/** What an index mark records, and how long each kind stays fresh. */
type MarkKind =
  | 'chain' | 'tip' | 'block' | 'epoch' | 'parameters' | 'network' | 'transaction'
  | 'address' | 'addressTransactions' | 'account' | 'pool' | 'drep' | 'assetHistory'

const TTL_OF: Record<Exclude<MarkKind, 'chain'>, TtlKind> = {
  tip: 'tip',
  block: 'transaction',
  epoch: 'epoch',
  parameters: 'parameters',
  network: 'network',
  transaction: 'transaction',
  address: 'address',
  addressTransactions: 'address',
  account: 'account',
  pool: 'pool',
  drep: 'drep',
  assetHistory: 'assetHistory',
}

interface Mark {
  fetchedAt: number
  final: boolean
}

/** Every cache table, in an order that deletes children before parents. */
const CACHE_TABLES = [
  TransactionInputAssets, TransactionOutputAssets, TransactionInputs, TransactionOutputs, TransactionMetadata_, Transactions,
  UTxOAssets, AddressUTxOs, AddressAssets, AddressTransactions, Addresses, Accounts, Pools, Dreps, Blocks, Epochs,
  LedgerProtocolParameters, NetworkInformation_, AssetHistory_, IndexMarks,
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
 */
export class ChainAIndex {
  private readonly port: () => ChainAPort
  private readonly ttlSeconds: Record<TtlKind, number>
  private readonly flights = new SingleFlight<unknown>()
  private readonly memory = new Map<string, Mark>()
  private genesisOnce?: Promise<ChainGenesis>
  private latestTip?: { height: number; epoch: number }

  constructor(port: () => ChainAPort, ttlSeconds: Record<TtlKind, number>) {
    this.port = port
    this.ttlSeconds = ttlSeconds
  }

  get network(): string {
    return this.port().networkName
  }

  /** Purges the cache when the upstream is a different chain than the one it was filled from. */
  async verifyChainIdentity(): Promise<void> {
    const genesis = await this.genesis()
    const identity = `${this.network}:${genesis.networkMagic}:${genesis.systemStart}`
    const known = await SELECT.one.from(IndexMarks).where({ kind: 'chain' })
    if (known?.id === identity) return
    for (const table of CACHE_TABLES) await DELETE.from(table)
    this.memory.clear()
    this.flights.clear()
    await UPSERT.into(IndexMarks).entries({ kind: 'chain', id: identity, fetchedAt: new Date().toISOString(), final: true })
  }

  async tip(): Promise<void> {
    await this.ensure('tip', 'latest', () => this.port().tip(), async (block: ChainBlock) => {
      await UPSERT.into(Blocks).entries(rows.blockRow(block))
      this.latestTip = { height: block.height, epoch: block.epoch }
      return false
    })
  }

  async block(hash: string): Promise<void> {
    await this.ensure('block', hash, () => this.port().block(hash), async (block: ChainBlock | null) => {
      if (!block) return false
      await UPSERT.into(Blocks).entries(rows.blockRow(block))
      return block.confirmations >= (await this.genesis()).securityParam
    })
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
      return false
    })
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

  /** The block a transaction is in (indexed when a read navigates or expands to it). */
  async blockOf(hash: string): Promise<void> {
    const tx = await SELECT.one.from(Transactions).columns('blockHash').where({ hash })
    if (tx?.blockHash) await this.block(tx.blockHash)
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

  /** The newest HISTORY_LIMIT transactions of the address (older ones stay as indexed). */
  async addressTransactions(address: string): Promise<void> {
    const load = () => this.port().addressTransactions(address, HISTORY_LIMIT)
    await this.ensure('addressTransactions', address, load, async history => {
      await upsertAll(AddressTransactions, rows.addressTransactionRows(address, history))
      return false
    })
  }

  async account(stakeAddress: string): Promise<void> {
    await this.mirror('account', Accounts, { stakeAddress }, () => this.port().account(stakeAddress), rows.accountRow)
  }

  async pool(poolId: string): Promise<void> {
    await this.mirror('pool', Pools, { poolId }, () => this.port().pool(poolId), rows.poolRow)
  }

  async drep(drepId: string): Promise<void> {
    await this.mirror('drep', Dreps, { drepId }, () => this.port().drep(drepId), rows.drepRow)
  }

  /** Whether the asset exists; its newest HISTORY_LIMIT mint and burn events are indexed. */
  async assetHistory(unit: string): Promise<void> {
    await this.ensure('assetHistory', unit, () => this.port().assetHistory(unit, HISTORY_LIMIT), async history => {
      await DELETE.from(AssetHistory_).where({ unit })
      if (history) await upsertAll(AssetHistory_, rows.assetHistoryRows(unit, history))
      return false
    })
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
      await this.invalidate('addressTransactions', address)
    }
  }

  /** Forgets what is known of a key, so the next read asks the upstream (after a submit, say). */
  async invalidate(kind: MarkKind, ref: string): Promise<void> {
    this.memory.delete(`${kind}:${ref}`)
    this.flights.forget(`${kind}:${ref}`)
    await DELETE.from(IndexMarks).where({ kind, id: ref })
  }

  async securityParam(): Promise<number> {
    return (await this.genesis()).securityParam
  }

  private genesis(): Promise<ChainGenesis> {
    if (!this.genesisOnce) {
      this.genesisOnce = this.port().genesis()
      this.genesisOnce.catch(() => (this.genesisOnce = undefined))
    }
    return this.genesisOnce
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

  /**
   * Makes the rows of one key present and fresh. `store` writes the upstream answer and tells
   * whether it can never change again (then it is never fetched again). On a miss, `alongside`
   * runs in parallel with the upstream call (other data the store will need).
   */
  private async ensure<T>(
    kind: Exclude<MarkKind, 'chain'>, ref: string, load: () => Promise<T>, store: (data: T) => Promise<boolean>,
    alongside?: () => Promise<unknown>,
  ) {
    const key = `${kind}:${ref}`
    if (this.isFresh(kind, this.memory.get(key))) return
    const stored = await SELECT.one.from(IndexMarks).where({ kind, id: ref })
    const mark = stored && { fetchedAt: Date.parse(stored.fetchedAt!), final: !!stored.final }
    if (mark && this.isFresh(kind, mark)) return this.rememberAfterCommit(key, mark)
    const holdMs = Math.min(FLIGHT_HOLD_MS, this.ttlSeconds[TTL_OF[kind]] * 1000)
    const [data] = (await settleAll([this.flights.run(key, load, holdMs), alongside?.()])) as [T, unknown]
    const final = await store(data)
    const fetchedAt = new Date()
    await UPSERT.into(IndexMarks).entries({ kind, id: ref, fetchedAt: fetchedAt.toISOString(), final })
    this.rememberAfterCommit(key, { fetchedAt: fetchedAt.getTime(), final })
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
  private rememberAfterCommit(key: string, mark: Mark) {
    const remember = () => {
      if (this.memory.size >= MEMORY_LIMIT) this.memory.clear()
      this.memory.set(key, mark)
    }
    const context = cds.context as any
    if (context?.on) context.on('succeeded', remember)
    else remember()
  }
}

async function upsertAll(entity: any, entries: object[]) {
  if (entries.length) await UPSERT.into(entity).entries(entries)
}
