import cds from '@sap/cds'
import ChainAFollowerIndex, { Blocks, Pools, ReorgLog, SyncState, Transactions, TransactionInputs, TransactionOutputs, TransactionOutputAssets } from '#cds-models/ChainAFollowerIndex'
import type { Activity } from './activity.ts'
import { epochProducers, readsThrough, reorgQueries, type ProducerRow, iso, numberOr, time, type ChainSource } from './sources.ts'

const { SELECT } = cds.ql

/**
 * Chain A as its follower indexed it (srv/chaina-odata/follower.ts) into the read cache
 * (db/chain-a.cds): only the heights the follower covers, from where it started to where it stands,
 * so blocks a lazy read cached out of that range do not count. Read through the follower's internal
 * service (srv/chaina-odata/follower-index.cds).
 */

const read = readsThrough(() => cds.connect.to(ChainAFollowerIndex))

interface Range { from: number; to: number }

const within = (range: Range, from: number, to?: number) => ({
  time: to === undefined ? { '>=': iso(from) } : { between: iso(from), and: iso(to - 1) },
  height: { between: range.from, and: range.to },
})

/** The heights the follower covers; undefined before it indexed anything. */
async function followedRange(): Promise<Range | undefined> {
  const sync = await read(SELECT.one.from(SyncState).columns('startHeight', 'indexedHeight').where({ ID: 'chain-a' }))
  return sync?.indexedHeight ? { from: sync.startHeight ?? 0, to: sync.indexedHeight } : undefined
}

export const chainASource: ChainSource = {
  chain: 'chain-a',
  feeUnit: 'lovelace',

  async position() {
    const sync = await read(SELECT.one.from(SyncState).where({ ID: 'chain-a' }))
    if (!sync?.indexedHeight) return undefined
    const tip = await read(SELECT.one.from(Blocks).columns('epoch').where({ hash: sync.indexedHash }))
    return {
      network: sync.network ?? 'devnet', chainHeight: sync.chainHeight ?? null, indexedHeight: sync.indexedHeight,
      finalizedHeight: sync.finalizedHeight ?? null, status: sync.status ?? null, indexedAt: sync.indexedAt ?? null, epoch: tip?.epoch ?? null,
    }
  },

  ...reorgQueries(ReorgLog, read),

  async blockAt(height) {
    const range = await followedRange()
    if (!range || height < range.from || height > range.to) return undefined
    const block = await read(SELECT.one.from(Blocks).columns('time', 'epoch').where({ height }))
    return block?.time ? { time: time(block.time), epoch: block.epoch ?? null } : undefined
  },

  async firstBlockTimeFrom(height) {
    const range = await followedRange()
    if (!range) return undefined
    const block = await read(SELECT.one.from(Blocks).columns('time').where({ height: { between: Math.max(height, range.from), and: range.to } }).orderBy('height'))
    return block?.time ? time(block.time) : undefined
  },

  async activity(from, to): Promise<Activity> {
    const range = await followedRange()
    if (!range) return { blocks: [], transactions: [], actions: [] }
    const blocks = await read(SELECT.from(Blocks).columns('hash', 'height', 'time', 'slotLeader', 'epoch').where(within(range, from, to)))
    if (!blocks.length) return { blocks: [], transactions: [], actions: [] }
    // Subqueries rather than lists of keys: a long span has more blocks than a statement takes parameters.
    const blocksOfSpan = () => SELECT.from(Blocks).columns('hash').where(within(range, from, to))
    const transactionsOfSpan = () => SELECT.from(Transactions).columns('hash').where({ blockHash: { in: blocksOfSpan() } })
    const transactions = await read(SELECT.from(Transactions).columns('hash', 'blockHeight', 'fee', 'validContract', 'redeemerCount', 'assetMintOrBurnCount').where({ blockHash: { in: blocksOfSpan() } }))
    const outputs = await read(SELECT.from(TransactionOutputs).columns('txHash', 'address', 'lovelace').where({ txHash: { in: transactionsOfSpan() } }))
    const inputs = await read(SELECT.from(TransactionInputs).columns('txHash', 'address').where({ txHash: { in: transactionsOfSpan() }, isReference: { '!=': true } }))
    const assets = await read(SELECT.from(TransactionOutputAssets).columns('txHash', 'unit').where({ txHash: { in: transactionsOfSpan() } }))
    const byTx = <T extends { txHash?: string | null }>(rows: T[]) => {
      const grouped = new Map<string, T[]>()
      for (const row of rows) {
        const group = grouped.get(row.txHash!)
        if (group) group.push(row)
        else grouped.set(row.txHash!, [row])
      }
      return grouped
    }
    const outputsOf = byTx(outputs), inputsOf = byTx(inputs), assetsOf = byTx(assets)
    return {
      blocks: blocks.map(block => ({ height: block.height!, time: time(block.time), producer: block.slotLeader ?? null, epoch: block.epoch ?? null })),
      transactions: transactions.map(tx => {
        const paid = (outputsOf.get(tx.hash!) ?? []).map(output => ({ address: output.address!, lovelace: Number(output.lovelace ?? 0) }))
        return {
          blockHeight: tx.blockHeight!,
          system: false,
          failed: tx.validContract === false,
          shielded: false,
          script: Number(tx.redeemerCount ?? 0) > 0,
          fee: numberOr(tx.fee, null),
          outputLovelace: paid.reduce((sum, output) => sum + output.lovelace, 0),
          outputs: paid,
          addresses: [...paid.map(output => output.address), ...(inputsOf.get(tx.hash!) ?? []).map(input => input.address!)].filter(Boolean),
          mintEvents: Number(tx.assetMintOrBurnCount ?? 0),
          assets: (assetsOf.get(tx.hash!) ?? []).map(asset => asset.unit!),
        }
      }),
      actions: [],
    }
  },

  async fees(from, to) {
    return timedTransactionValues('fee', from, to)
  },

  async sizes(from, to) {
    return timedTransactionValues('size', from, to)
  },

  async producersOfEpoch(epoch) {
    const range = await followedRange()
    if (!range) return { producers: [], ended: false, lastBlockAt: null }
    const inRange = { height: { between: range.from, and: range.to } }
    const rows = await read(SELECT.from(Blocks).columns('slotLeader as producer', 'count(1) as blocks', 'max(time) as last').where({ epoch, ...inRange }).groupBy('slotLeader'))
    const later = await read(SELECT.one.from(Blocks).columns('height').where({ epoch: { '>': epoch }, ...inRange }))
    return epochProducers(rows as unknown as ProducerRow[], !!later)
  },

}

/** A transaction column with its block's time, for blocks in [from, to). */
async function timedTransactionValues(column: 'fee' | 'size', from: number, to: number) {
  const range = await followedRange()
  if (!range) return []
  const rows = await read(SELECT.from(Transactions).columns(column, 'blockTime').where({ blockHash: { in: SELECT.from(Blocks).columns('hash').where(within(range, from, to)) } }))
  return rows.map(row => ({ at: time(row.blockTime), value: Number(row[column]) }))
}

/** Chain A's pools with active stake as the index holds them. */
export function poolsWithStake() {
  return read(SELECT.from(Pools).columns('poolId', 'activeStake').where({ activeStake: { '>': 0 } }))
}
