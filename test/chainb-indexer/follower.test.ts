import cds from '@sap/cds'
import { Blocks, ContractActions, ReorgLog, SyncState, TransactionSegments, Transactions, UnshieldedUtxos } from '#cds-models/chainb'
import { Follower } from '../../srv/chainb-indexer/follower.ts'
import { FakeChain, PUBLIC_ADDRESSES } from './fake-chain.ts'

// The follower against an in-memory chain: batches, reorgs, leases, an upstream that is down.
process.env.CHAIN_B_CRAWLER_ENABLED = 'false'
cds.test(__dirname + '/../..')

const { SELECT, DELETE } = cds.ql
const TABLES = [UnshieldedUtxos, ContractActions, TransactionSegments, Transactions, Blocks, ReorgLog, SyncState]

let chain: FakeChain
const followers: Follower[] = []
const follower = (settings: Partial<Follower['settings']> = {}, instanceId?: string) => {
  const made = new Follower({ port: chain, finalityDepth: 2, network: 'fake', settings: { batchSize: 4, ...settings }, instanceId })
  followers.push(made)
  return made
}

beforeEach(async () => {
  for (const table of TABLES) await DELETE.from(table as typeof Blocks)
  chain = new FakeChain()
})
afterEach(async () => {
  for (const made of followers.splice(0)) await made.stop()
})

const state = () => SELECT.one.from(SyncState) as Promise<any>
const indexedBlocks = () => SELECT.from(Blocks).columns('hash', 'height', 'parentHash', 'finalized').orderBy('height') as Promise<any[]>

test('indexes from genesis to the tip in batches, transactions and their parts with it', async () => {
  chain.produce(9, height => [{ outputs: 2, shielded: height % 2 === 0, call: height === 5 }])
  expect(await follower().runNow()).toBe('synced')
  expect((await indexedBlocks()).map(block => block.hash)).toEqual(chain.blocks.map(block => block.hash))
  expect(await state()).toMatchObject({ indexedHeight: 9, indexedHash: chain.blocks[9].hash, chainHeight: 9, finalizedHeight: 7, status: 'synced', blocksIndexed: 10, transactionsIndexed: 9 })
  const txs = await SELECT.from(Transactions).orderBy('blockHeight') as any[]
  expect(txs.map(tx => [tx.hash, tx.block_hash, tx.blockHeight])).toEqual(chain.blocks.slice(1).map(block => [block.transactions[0].hash, block.hash, block.height]))
  expect(txs.filter(tx => tx.isShielded).map(tx => tx.blockHeight)).toEqual([2, 4, 6, 8])
  expect(txs[0]).toMatchObject({ transactionType: 'regular', status: 'SUCCESS', paidFees: '1000', identifier: chain.blocks[1].transactions[0].identifiers[0] })
  expect(await SELECT.from(TransactionSegments)).toHaveLength(9)
  expect(await SELECT.from(ContractActions)).toEqual([expect.objectContaining({ transaction_hash: chain.blocks[5].transactions[0].hash, actionType: 'ContractCall', entryPoint: 'anchor', blockHeight: chain.blocks[5].height })])
  // Their owners as the public indexer gives them: Bech32m addresses, kept as given.
  const utxos = await SELECT.from(UnshieldedUtxos).columns('owner') as { owner: string }[]
  expect(utxos).toHaveLength(18)
  expect(new Set(utxos.map(utxo => utxo.owner))).toEqual(new Set(PUBLIC_ADDRESSES.slice(0, 2)))
  expect((await indexedBlocks()).filter(block => block.finalized).map(block => block.height)).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
})

test('an output spent later is marked spent by the spending transaction', async () => {
  const [made] = chain.produce(1)
  const output = made.transactions[0].unshieldedCreatedOutputs[0]
  chain.produce(1, () => [{ spends: [output] }])
  await follower().runNow()
  const spent = await SELECT.one.from(UnshieldedUtxos).where({ intentHash: output.intentHash, outputIndex: 0 }) as any
  expect(spent.spentAtTransaction_hash).toBe(chain.blocks[2].transactions[0].hash)
})

test('a reorg rolls back to the fork, un-spends, logs it, and indexes the new chain', async () => {
  const [made] = chain.produce(1)
  const output = made.transactions[0].unshieldedCreatedOutputs[0]
  chain.produce(5, height => (height === 3 ? [{ spends: [output] }] : [{}]))
  const indexer = follower()
  await indexer.runNow()
  const oldTip = chain.blocks[6].hash
  const replaced = chain.blocks.slice(3).map(block => block.hash)
  chain.reorg(3, 5)
  expect(await indexer.runNow()).toBe('synced')

  expect((await indexedBlocks()).map(block => block.hash)).toEqual(chain.blocks.map(block => block.hash))
  expect(await SELECT.from(Blocks).where({ hash: { in: replaced } })).toEqual([])
  expect(await SELECT.one.from(UnshieldedUtxos).where({ intentHash: output.intentHash, outputIndex: 0 })).toMatchObject({ spentAtTransaction_hash: null })
  expect(await SELECT.from(ReorgLog)).toEqual([expect.objectContaining({ forkHeight: 3, oldTipHash: oldTip, newTipHash: chain.blocks[7].hash, blocksRolledBack: 4, cause: 'reorg' })])
  expect(await state()).toMatchObject({ indexedHeight: 7, reorgs: 1, blocksIndexed: 8, transactionsIndexed: 7 })
  expect(await SELECT.from(Transactions)).toHaveLength(7)
})

test('a reorg to a shorter chain at the same tip height, and one that drops blocks, are followed too', async () => {
  chain.produce(4)
  const indexer = follower()
  await indexer.runNow()
  chain.reorg(4, 1)
  await indexer.runNow()
  expect((await indexedBlocks()).map(block => block.hash)).toEqual(chain.blocks.map(block => block.hash))
  chain.reorg(2, 1)
  await indexer.runNow()
  expect((await indexedBlocks()).map(block => block.hash)).toEqual(chain.blocks.map(block => block.hash))
  expect((await SELECT.from(ReorgLog).orderBy('forkHeight')).map((row: any) => [row.forkHeight, row.blocksRolledBack])).toEqual([[2, 3], [4, 1]])
})

test('a reorg deeper than the limit stops with status error and rolls back nothing', async () => {
  chain.produce(8)
  const indexer = follower({ maxReorgDepth: 3 })
  await indexer.runNow()
  chain.reorg(2, 9)
  expect(await indexer.runNow()).toBe('error')
  expect(await state()).toMatchObject({ status: 'error', consecutiveErrors: 1, indexedHeight: 8 })
  expect((await state()).lastError).toMatch(/^CHAIN_B_REORG_TOO_DEEP/)
  expect(await SELECT.from(ReorgLog)).toEqual([])
})

test('an upstream that is down: status error, errors counted, and the next run catches up', async () => {
  chain.produce(3)
  const indexer = follower()
  chain.down = true
  expect(await indexer.runNow()).toBe('error')
  expect(await indexer.runNow()).toBe('error')
  expect(await state()).toMatchObject({ status: 'error', consecutiveErrors: 2 })
  chain.down = false
  expect(await indexer.runNow()).toBe('synced')
  expect(await state()).toMatchObject({ status: 'synced', consecutiveErrors: 0, lastError: null, indexedHeight: 3 })
})

/** Long enough that a busy machine cannot let the lease expire between the first two runs. */
const LEASE_MS = 5000

test('two followers on one database: one indexes, the other stands by and takes over when the lease expires', async () => {
  chain.produce(5)
  const first = follower({ leaseMs: LEASE_MS }, 'first')
  const second = follower({ leaseMs: LEASE_MS }, 'second')
  expect(await first.runNow()).toBe('synced')
  chain.produce(2)
  expect(await second.runNow()).toBe('standby')
  expect(await state()).toMatchObject({ indexedHeight: 5, leaseOwner: 'first' })
  await new Promise(resolve => setTimeout(resolve, LEASE_MS + 100))
  expect(await second.runNow()).toBe('synced')
  expect(await first.runNow()).toBe('standby')
  expect(await state()).toMatchObject({ indexedHeight: 7, leaseOwner: 'second', blocksIndexed: 8 })
  const heights = (await indexedBlocks()).map(block => block.height)
  expect(heights).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
})

test('two followers running at once write every block once', async () => {
  chain.produce(30)
  const [a, b] = [follower({ leaseMs: 60_000 }, 'a'), follower({ leaseMs: 60_000 }, 'b')]
  const outcomes = await Promise.all([a.runNow(), b.runNow(), a.runNow(), b.runNow()])
  expect(outcomes.filter(outcome => outcome === 'synced').length).toBeGreaterThan(0)
  expect((await indexedBlocks()).map(block => block.height)).toEqual(chain.blocks.map(block => block.height))
  expect(await SELECT.from(Transactions)).toHaveLength(30)
})

test('a stopped follower hands the lease back at once', async () => {
  const first = follower({ leaseMs: 60_000 }, 'first')
  await first.runNow()
  await first.stop()
  expect(await follower({}, 'second').runNow()).toBe('synced')
})
