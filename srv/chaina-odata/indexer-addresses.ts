import cds from '@sap/cds'
import {
  Addresses, AddressAssets, AddressUTxOs, UTxOAssets, AddressTransactions, Transactions, TransactionInputs, TransactionOutputs,
} from '#cds-models/chaina'
import * as rows from './rows.ts'
import { newestPage, type ListWindow } from './list-window.ts'
import { upsertAll, type IndexCore } from './indexer-core.ts'
import type { BlockIndex } from './indexer-blocks.ts'

const { SELECT, UPSERT, DELETE } = cds.ql

/** Addresses with their balances, assets and UTxO sets, and their transactions. */
export class AddressIndex {
  private readonly core: IndexCore
  private readonly blocks: BlockIndex

  constructor(core: IndexCore, blocks: BlockIndex) {
    this.core = core
    this.blocks = blocks
  }

  /** The address with its balance, the assets it holds and its UTxO set. */
  async address(address: string): Promise<void> {
    const load = () => Promise.all([this.core.port().address(address), this.core.port().addressUtxos(address)])
    await this.core.ensure('address', address, load, async ([summary, utxos]) => {
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
    await this.blocks.transaction(txHash)
    const output = await SELECT.one.from(TransactionOutputs).columns('address').where({ txHash, outputIndex })
    if (output?.address) await this.address(output.address)
    return output?.address ?? undefined
  }

  /** The address's transactions in chain order, as far as the window reaches (by default the newest page). */
  async addressTransactions(address: string, window: ListWindow = newestPage): Promise<void> {
    await this.core.rowList({
      kind: 'addressTransactions',
      parent: address,
      load: page => this.core.port().addressTransactionPage(address, page),
      store: async history => upsertAll(AddressTransactions, rows.addressTransactionRows(address, history ?? [])),
    }, window)
  }

  /** One transaction of an address, from the transaction itself (which tells whether it pays or spends from the address). */
  async addressTransaction(address: string, txHash: string): Promise<void> {
    await this.blocks.transaction(txHash)
    const tx = await SELECT.one.from(Transactions).columns('txIndex', 'blockHeight', 'blockTime').where({ hash: txHash })
    if (!tx) return
    const touches =
      (await SELECT.one.from(TransactionOutputs).columns('txHash').where({ txHash, address })) ??
      (await SELECT.one.from(TransactionInputs).columns('txHash').where({ txHash, address }))
    if (touches) await UPSERT.into(AddressTransactions).entries({ address, txHash, txIndex: tx.txIndex, blockHeight: tx.blockHeight, blockTime: tx.blockTime })
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
    await this.core.invalidate('transaction', change.txHash)
    await this.core.invalidate('tip', 'latest')
    for (const address of addresses) {
      await this.core.invalidate('address', address)
      await this.core.forgetPages('addressTransactions', address, ['asc', 'desc'], 1)
    }
  }
}
