import cds from '@sap/cds'
import { runningDevnet, growChain, firstOf } from '../support/chain-a.ts'
import { chainAIndex } from '../../srv/chaina-odata/service.ts'
import type { ActivityEvent } from '../../devnet/chain-a/activity.ts'
import { createdOutputs, type Block } from '../../devnet/chain-a/types.ts'

const { GET, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }
defaults.validateStatus = () => true

/*
 * Collections the upstream lists are filled from its list endpoints: each case reads one from an
 * empty cache and compares the answer, in order, with the devnet's ledger.
 */

const SERVICE = '/odata/v4/chaina-odata'

let devnet: ReturnType<typeof runningDevnet>
let events: ActivityEvent[]
/** A block holding several transactions. */
let busyBlock: Block

const ledger = () => devnet.ledger
const wallet = () => devnet.wallets()[0]
const account = () => ledger().accounts.get(wallet().stakeAddress)!
const pool = () => ledger().pools.get(account().pool!)!
const drep = () => ledger().dreps.get(account().drep!)!
const mintedUnit = () => [...ledger().txs.get(firstOf(events, 'mint'))!.mint.keys()][0]
const transferSender = () => ledger().txs.get(firstOf(events, 'transfer'))!.outputs.at(-1)!.address

interface Case {
  name: string
  path: () => string
  /** What identifies an answered row. */
  pick: (row: any) => unknown
  /** The rows the ledger says the answer holds, in the answer's order. */
  expected: () => unknown[]
}

const CASES: Case[] = [
  { name: 'Pools: every registered pool, in registration order', path: () => '/Pools', pick: row => row.poolId, expected: () => [...ledger().pools.values()].map(p => p.id) },
  {
    name: 'Pools: the list figures and the registration details of each',
    path: () => '/Pools?$select=poolId,ticker,vrfKey,rewardAccount,position',
    pick: row => [row.poolId, row.ticker, row.vrfKey, row.rewardAccount, row.position],
    expected: () => [...ledger().pools.values()].map((p, i) => [p.id, p.metadata.ticker, p.vrfKeyHash, p.rewardAccount, i]),
  },
  { name: 'Dreps: every DRep, in registration order', path: () => '/Dreps', pick: row => row.drepId, expected: () => [...ledger().dreps.values()].map(d => d.id) },
  { name: 'Epochs: from 0 to the current one', path: () => '/Epochs', pick: row => row.epoch, expected: () => [...ledger().epochs.keys()] },
  { name: 'Epochs: the current one first', path: () => '/Epochs?$orderby=epoch desc&$top=1', pick: row => [row.epoch, row.blockCount], expected: () => [[ledger().currentEpoch, ledger().latestEpoch.blocks.length]] },
  { name: 'Blocks: from genesis by default', path: () => '/Blocks?$top=3', pick: row => row.hash, expected: () => ledger().blocks.slice(0, 3).map(b => b.hash) },
  { name: 'Blocks: the newest first', path: () => '/Blocks?$orderby=height desc&$top=5', pick: row => row.hash, expected: () => ledger().blocks.slice(-5).reverse().map(b => b.hash) },
  { name: 'Blocks: the newest, paged', path: () => '/Blocks?$orderby=height desc&$skip=3&$top=2', pick: row => row.height, expected: () => [ledger().tip.height - 3, ledger().tip.height - 4] },
  {
    name: 'Blocks of an epoch, newest first',
    path: () => `/Blocks?$filter=epoch eq ${busyBlock.epoch}&$orderby=height desc&$top=3`,
    pick: row => row.hash,
    expected: () => ledger().epochs.get(busyBlock.epoch)!.blocks.slice(-3).reverse(),
  },
  { name: 'Transactions of a block by hash, in block order', path: () => `/Transactions?$filter=blockHash eq '${busyBlock.hash}'`, pick: row => row.hash, expected: () => busyBlock.txs },
  { name: 'Transactions of a block by height, in block order', path: () => `/Transactions?$filter=blockHeight eq ${busyBlock.height}&$select=hash,fee`, pick: row => [row.hash, row.fee], expected: () => busyBlock.txs.map(hash => [hash, String(ledger().txs.get(hash)!.fee)]) },
  {
    name: 'Transactions of a block, the last by $orderby and $top',
    path: () => `/Transactions?$filter=blockHash eq '${busyBlock.hash}'&$orderby=txIndex desc&$top=1`,
    pick: row => row.hash,
    expected: () => busyBlock.txs.slice(-1),
  },
  {
    name: 'AddressTransactions of an address, in chain order',
    path: () => `/AddressTransactions?$filter=address eq '${transferSender()}'`,
    pick: row => row.txHash,
    expected: () => ledger().addresses.get(transferSender())!.txs,
  },
  { name: 'Accounts delegating to a pool', path: () => `/Accounts?$filter=poolId eq '${pool().id}'`, pick: row => row.stakeAddress, expected: () => delegatorsOf(pool().hex).sort() },
  { name: 'Accounts delegating to a DRep', path: () => `/Accounts?$filter=drepId eq '${drep().id}'`, pick: row => row.stakeAddress, expected: () => voteDelegatorsOf(drep().hex).sort() },
  { name: 'Addresses of a stake account', path: () => `/Addresses?$filter=stakeAddress eq '${wallet().stakeAddress}'`, pick: row => row.address, expected: () => [...account().addresses].sort() },
  {
    name: 'AssetHistory of a unit, newest first',
    path: () => `/AssetHistory?$filter=unit eq '${mintedUnit()}'`,
    pick: row => [row.txHash, row.action, row.amount],
    expected: () => [...ledger().assets.get(mintedUnit())!.history].reverse().map(h => [h.txHash, h.action, String(h.amount)]),
  },
]

const delegatorsOf = (hex: string) => [...ledger().liveStake().accounts].filter(([, delegation]) => delegation.pool === hex).map(([stakeAddress]) => stakeAddress)
const voteDelegatorsOf = (hex: string) => [...ledger().accounts.values()].filter(entry => entry.registered && entry.drep === hex).map(entry => entry.stakeAddress)

beforeAll(() => {
  devnet = runningDevnet()
  events = growChain(devnet, ['transfer', 'mint', 'burn'])
  for (let i = 0; i < 4; i++) devnet.activity.round()
  busyBlock = devnet.produceBlock()
  expect(busyBlock.txs.length).toBeGreaterThan(1)
  devnet.produceBlock()
})

beforeEach(async () => {
  await cds.tx(() => chainAIndex().purge())
  devnet.resetRequestCounts()
})

describe('a collection read from an empty cache answers what the chain lists', () => {
  test.each(CASES.map(c => [c.name, c] as const))('%s', async (_, { path, pick, expected }) => {
    const response = await GET(SERVICE + path())
    expect(response.data.error).toBeUndefined()
    expect(response.status).toBe(200)
    expect(expected().length).toBeGreaterThan(0)
    expect(response.data.value.map(pick)).toEqual(expected())
  })
})

describe('a collection read asks the upstream only for what its answer needs', () => {
  test('pools selected by list columns need no pool details', async () => {
    const response = await GET(`${SERVICE}/Pools?$select=poolId,ticker,liveStake&$top=2`)
    expect(response.data.value.map((row: any) => row.ticker)).toEqual([...ledger().pools.values()].slice(0, 2).map(p => p.metadata.ticker))
    expect(devnet.requestCount('/pools/extended')).toBe(1)
    expect(devnet.requestCount('/pools/pool1')).toBe(0)
  })

  test('the first transaction of a block indexes that transaction only', async () => {
    const response = await GET(`${SERVICE}/Transactions?$filter=blockHash eq '${busyBlock.hash}'&$top=1&$select=hash`)
    expect(response.data.value).toEqual([{ hash: busyBlock.txs[0] }])
    expect(devnet.requestCount(`/blocks/${busyBlock.hash}/txs`)).toBe(1)
    expect(busyBlock.txs.slice(1).map(hash => devnet.requestCount(`/txs/${hash}`))).toEqual(busyBlock.txs.slice(1).map(() => 0))
  })

  test('the newest blocks are read as one page before the tip', async () => {
    await GET(`${SERVICE}/Blocks?$orderby=height desc&$top=10`)
    expect(devnet.requestCount('/blocks/latest')).toBe(1)
    expect(devnet.requestCount('/blocks/')).toBe(2)
  })

  test('within their TTL, listed rows are answered from the cache', async () => {
    await GET(`${SERVICE}/Dreps`)
    await GET(`${SERVICE}/Epochs`)
    devnet.resetRequestCounts()
    await GET(`${SERVICE}/Dreps?$orderby=amount desc`)
    await GET(`${SERVICE}/Epochs?$orderby=epoch desc`)
    expect(devnet.requestCount('/governance/dreps')).toBe(0)
    expect(devnet.requestCount('/epochs/')).toBe(0)
  })
})

test('a collection read with nested $expand indexes what each answered row navigates to', async () => {
  const response = await GET(`${SERVICE}/Blocks?$orderby=height desc&$top=3&$select=hash&$expand=transactions($select=hash;$expand=outputs($select=outputIndex,address))`)
  const outputsOf = (hash: string) => createdOutputs(ledger().txs.get(hash)!).map(([index, output]) => `${index}:${output.address}`).sort()
  const answered = response.data.value.map((block: any) => [block.hash, block.transactions.map((tx: any) => [tx.hash, tx.outputs.map((o: any) => `${o.outputIndex}:${o.address}`).sort()])])
  const newest = ledger().blocks.slice(-3).reverse()
  expect(answered).toEqual(newest.map(block => [block.hash, block.txs.map(hash => [hash, outputsOf(hash)])]))
  expect(newest.some(block => block.txs.length > 1)).toBe(true)
})

test('Transactions without a block filter answer what has been indexed', async () => {
  const before = await GET(`${SERVICE}/Transactions?$select=hash`)
  await GET(`${SERVICE}/Blocks('${busyBlock.hash}')/transactions`)
  const after = await GET(`${SERVICE}/Transactions?$select=hash`)
  expect(before.data.value).toEqual([])
  expect(after.data.value.map((row: any) => row.hash).sort()).toEqual([...busyBlock.txs].sort())
})
