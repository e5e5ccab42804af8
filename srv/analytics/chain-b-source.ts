import cds from '@sap/cds'
import ChainBIndex, { Blocks, ContractActions, ReorgLog, SyncState, Transactions, UnshieldedUtxos } from '#cds-models/ChainBIndex'
import type { Activity, TransactionItem } from './activity.ts'
import { epochProducers, readsThrough, reorgQueries, type ProducerRow, iso, numberOr, time, type ChainSource } from './sources.ts'

const { SELECT } = cds.ql

/** Chain B as its follower indexed it (srv/chainb-indexer, db/chain-b.cds), read through the indexer's internal service (chain-index.cds). */

const read = readsThrough(() => cds.connect.to(ChainBIndex))

interface TransactionRow { hash: string; blockHeight: number; transactionType: string; status: string | null; paidFees: string | null; isShielded: boolean | null }

const within = (from: number, to?: number) => ({ timestamp: to === undefined ? { '>=': iso(from) } : { between: iso(from), and: iso(to - 1) } })

export const chainBSource: ChainSource = {
  chain: 'chain-b',
  feeUnit: 'DUST (smallest unit)',

  async position() {
    const sync = await read(SELECT.one.from(SyncState).where({ ID: 'chain-b' }))
    if (!sync?.indexedHeight) return undefined
    const tip = await read(SELECT.one.from(Blocks).columns('epoch').where({ height: sync.indexedHeight }))
    return {
      network: sync.network ?? 'devnet', chainHeight: sync.chainHeight ?? null, indexedHeight: sync.indexedHeight,
      finalizedHeight: sync.finalizedHeight ?? null, status: sync.status ?? null, indexedAt: sync.indexedAt ?? null, epoch: tip?.epoch ?? null,
    }
  },

  ...reorgQueries(ReorgLog, read),

  async blockAt(height) {
    const block = await read(SELECT.one.from(Blocks).columns('timestamp', 'epoch').where({ height }))
    return block?.timestamp ? { time: time(block.timestamp), epoch: block.epoch ?? null } : undefined
  },

  async firstBlockTimeFrom(height) {
    const block = await read(SELECT.one.from(Blocks).columns('timestamp').where({ height: { '>=': height } }).orderBy('height'))
    return block?.timestamp ? time(block.timestamp) : undefined
  },

  async activity(from, to): Promise<Activity> {
    const blocks = await read(SELECT.from(Blocks).columns('height', 'timestamp', 'author', 'epoch').where(within(from, to)))
    if (!blocks.length) return { blocks: [], transactions: [], actions: [] }
    const range = heightRange(blocks.map(block => block.height!))
    const transactions = await read(SELECT.from(Transactions).columns('hash', 'blockHeight', 'transactionType', 'status', 'paidFees', 'isShielded').where({ blockHeight: range })) as TransactionRow[]
    const actions = await read(SELECT.from(ContractActions).columns('blockHeight', 'transaction_hash', 'address', 'actionType').where({ blockHeight: range }))
    const owners = await unshieldedOwners(range)
    const scripted = new Set(actions.map(action => action.transaction_hash))
    return {
      blocks: blocks.map(block => ({ height: block.height!, time: time(block.timestamp), producer: block.author ?? null, epoch: block.epoch ?? null })),
      transactions: transactions.map((tx): TransactionItem => ({
        blockHeight: tx.blockHeight,
        system: tx.transactionType === 'system',
        failed: tx.status === 'FAILURE' || tx.status === 'PARTIAL_SUCCESS',
        shielded: !!tx.isShielded,
        script: scripted.has(tx.hash),
        fee: numberOr(tx.paidFees, null),
        addresses: owners.get(tx.hash) ?? [],
      })),
      actions: actions.map(action => ({
        blockHeight: action.blockHeight!, contract: action.address!,
        kind: action.actionType === 'ContractCall' ? 'call' : action.actionType === 'ContractDeploy' ? 'deploy' : 'update',
      })),
    }
  },

  async fees(from, to) {
    const blocks = await read(SELECT.from(Blocks).columns('height', 'timestamp').where(within(from, to)))
    if (!blocks.length) return []
    const timeOf = new Map(blocks.map(block => [block.height, time(block.timestamp)]))
    const rows = await read(SELECT.from(Transactions).columns('paidFees', 'blockHeight')
      .where({ transactionType: 'regular', paidFees: { '!=': null }, blockHeight: heightRange(blocks.map(block => block.height!)) }))
    return rows.filter(row => timeOf.has(row.blockHeight!)).map(row => ({ at: timeOf.get(row.blockHeight!)!, value: Number(row.paidFees) }))
  },

  async sizes() {
    return null
  },

  async producersOfEpoch(epoch) {
    const rows = await read(SELECT.from(Blocks).columns('author as producer', 'count(1) as blocks', 'max(timestamp) as last').where({ epoch }).groupBy('author'))
    const later = await read(SELECT.one.from(Blocks).columns('height').where({ epoch: { '>': epoch } }))
    return epochProducers(rows as unknown as ProducerRow[], !!later)
  },

}

/** The lowest to the highest of some heights, as a condition (a loop: a spread of many would overflow the stack). */
function heightRange(heights: number[]) {
  let low = Infinity, high = -Infinity
  for (const height of heights) {
    if (height < low) low = height
    if (height > high) high = height
  }
  return { between: low, and: high }
}

/** The owners of the unshielded outputs each transaction of blocks in a height range created or spent. */
async function unshieldedOwners(range: { between: number; and: number }): Promise<Map<string, string[]>> {
  const owners = new Map<string, string[]>()
  const transactionsOfRange = () => SELECT.from(Transactions).columns('hash').where({ blockHeight: range })
  const rows = await read(SELECT.from(UnshieldedUtxos).columns('owner', 'createdAtTransaction_hash', 'spentAtTransaction_hash')
    .where('createdAtTransaction_hash in', transactionsOfRange(), 'or spentAtTransaction_hash in', transactionsOfRange()))
  const add = (hash: string | null | undefined, owner: string | null | undefined) => {
    if (!hash || !owner) return
    const list = owners.get(hash)
    if (list) list.push(owner)
    else owners.set(hash, [owner])
  }
  for (const row of rows) {
    add(row.createdAtTransaction_hash, row.owner)
    add(row.spentAtTransaction_hash, row.owner)
  }
  return owners
}
