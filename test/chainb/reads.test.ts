import cds from '@sap/cds'
import { Follower } from '../../srv/chainb-indexer/follower.ts'
import { FakeChain } from '../chainb-indexer/fake-chain.ts'
import { CHAINB, emptyIndex } from '../chainb-indexer/support.ts'

// The chain index as ChainBService serves it (srv/chainb/chain-reads.cds), filled by the follower
// from an in-memory chain: every OData query option, navigation and expansion, read-only.
process.env.CHAIN_B_CRAWLER_ENABLED = 'false'
const { GET, POST, PATCH, DELETE: DEL, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'bob', password: '' }
defaults.validateStatus = () => true

let chain: FakeChain
let follower: Follower

beforeAll(async () => {
  await emptyIndex()
  chain = new FakeChain()
  const [first] = chain.produce(1, () => [{ outputs: 2 }])
  chain.produce(5, height => [{ shielded: height === 3, call: height === 4, spends: height === 2 ? [first.transactions[0].unshieldedCreatedOutputs[1]] : [] }, {}])
  follower = new Follower({ port: chain, finalityDepth: 2, network: 'fake' })
  await follower.runNow()
})
afterAll(() => follower.stop())

const read = async (path: string) => {
  const { data, status } = await GET(`${CHAINB}/${path}`)
  expect(data.error).toBeUndefined()
  expect(status).toBe(200)
  return data
}

test('Blocks: $orderby, $top, $skip, $select, $count', async () => {
  const data = await read('Blocks?$orderby=height desc&$top=2&$skip=1&$select=hash,height,txCount,finalized&$count=true')
  expect(data['@odata.count']).toBe(7)
  expect(data.value).toEqual([
    { hash: chain.blocks[5].hash, height: 5, txCount: 2, finalized: false },
    { hash: chain.blocks[4].hash, height: 4, txCount: 2, finalized: true },
  ])
})

test('Blocks: $filter and a block by its hash, with its fields as indexed', async () => {
  const data = await read('Blocks?$filter=height ge 2 and height lt 4&$orderby=height')
  expect(data.value.map((block: any) => block.height)).toEqual([2, 3])
  const block = await read(`Blocks('${chain.blocks[3].hash}')`)
  expect(block).toMatchObject({
    hash: chain.blocks[3].hash, height: 3, parentHash: chain.blocks[2].hash, author: chain.blocks[3].author, protocolVersion: 1,
    timestamp: new Date(chain.blocks[3].timestamp * 1000).toISOString(), txCount: 2,
  })
})

test('$expand=transactions and Blocks(hash)/transactions', async () => {
  const block = chain.blocks[2]
  const expanded = await read(`Blocks('${block.hash}')?$expand=transactions($select=hash,transactionId;$orderby=transactionId)`)
  expect(expanded.transactions).toEqual(block.transactions.map(tx => ({ hash: tx.hash, transactionId: tx.id })))
  const navigated = await read(`Blocks('${block.hash}')/transactions?$orderby=transactionId&$select=hash`)
  expect(navigated.value.map((tx: any) => tx.hash)).toEqual(block.transactions.map(tx => tx.hash))
})

test('Transactions(hash)/segments, contract actions, a transaction\'s block', async () => {
  const tx = chain.blocks[4].transactions[0]
  expect((await read(`Transactions('${tx.hash}')/segments`)).value).toEqual([expect.objectContaining({ segmentId: 0, success: true })])
  const withParts = await read(`Transactions('${tx.hash}')?$expand=contractActions,block($select=height)`)
  expect(withParts).toMatchObject({ status: 'SUCCESS', paidFees: '1000', block: { height: 4 }, contractActions: [{ actionType: 'ContractCall', entryPoint: 'anchor' }] })
  expect((await read('ContractActions?$filter=actionType eq \'ContractCall\'&$count=true'))['@odata.count']).toBe(1)
})

test('shielded transactions by filter; unshielded UTXOs with their spending transaction', async () => {
  const shielded = await read('Transactions?$filter=isShielded eq true&$select=hash,zswapEventCount')
  expect(shielded.value).toEqual([{ hash: chain.blocks[3].transactions[0].hash, zswapEventCount: 2 }])
  const spent = await read('UnshieldedUtxos?$filter=spentAtTransaction_hash ne null&$expand=spentAtTransaction($select=blockHeight)')
  expect(spent.value).toEqual([expect.objectContaining({ outputIndex: 1, value: '2000000', spentAtTransaction: { hash: chain.blocks[2].transactions[0].hash, blockHeight: 2 } })])
})

test.each([
  ['POST', () => POST(`${CHAINB}/Blocks`, { hash: 'ab'.repeat(32), height: 99 })],
  ['PATCH', () => PATCH(`${CHAINB}/Blocks('${chain.blocks[1].hash}')`, { height: 99 })],
  ['DELETE', () => DEL(`${CHAINB}/Blocks('${chain.blocks[1].hash}')`)],
])('the index is read-only: %s answers 405', async (_method, call) => {
  const { status } = await call()
  expect(status).toBe(405)
})
