import cds from '@sap/cds'
import { Follower } from '../../srv/chainb-indexer/follower.ts'
import { FakeChain } from './fake-chain.ts'
import { INDEXER, emptyIndex } from './support.ts'

// The indexer service over an index a follower fills from an in-memory chain: status, health by
// configured lag, reorg history, counters, crawler control (admin only), bad input.
process.env.CHAIN_B_CRAWLER_ENABLED = 'false'
const { GET, POST, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }
defaults.validateStatus = () => true
const asBob = { auth: { username: 'bob', password: '' } }

let chain: FakeChain
let follower: Follower

beforeEach(async () => {
  await emptyIndex()
  chain = new FakeChain()
  follower = new Follower({ port: chain, finalityDepth: 2, network: 'fake', settings: { batchSize: 10 } })
})
afterEach(async () => {
  await follower.stop()
  delete process.env.CHAIN_B_HEALTH_DEGRADED_LAG
  delete process.env.CHAIN_B_HEALTH_UNHEALTHY_LAG
})

const health = async () => (await GET(`${INDEXER}/getHealth()`, asBob)).data

test('getSyncStatus answers tip, indexed and finalized heights, and the lag in blocks and seconds', async () => {
  chain.produce(6)
  await follower.runNow()
  chain.produce(3)
  await POST(`${INDEXER}/pauseCrawler`, {})
  await follower.runNow()
  const { data, status } = await GET(`${INDEXER}/getSyncStatus()`, asBob)
  expect(data).toMatchObject({ network: 'fake', chainHeight: 9, indexedHeight: 6, indexedHash: chain.blocks[6].hash, finalizedHeight: 7, lagBlocks: 3, lagSeconds: 18, status: 'paused', consecutiveErrors: 0 })
  expect(status).toBe(200)
})

test('health: healthy, degraded and unhealthy by the configured lag thresholds', async () => {
  process.env.CHAIN_B_HEALTH_DEGRADED_LAG = '2'
  process.env.CHAIN_B_HEALTH_UNHEALTHY_LAG = '5'
  expect(await health()).toMatchObject({ status: 'unknown', lag: null })
  chain.produce(4)
  await follower.runNow()
  expect(await health()).toMatchObject({ status: 'healthy', lag: 0, chainHeight: 4, indexedHeight: 4, degradedLag: 2, unhealthyLag: 5, syncStatus: 'synced' })
  await POST(`${INDEXER}/pauseCrawler`, {})
  chain.produce(3)
  await follower.runNow()
  expect(await health()).toMatchObject({ status: 'degraded', lag: 3, syncStatus: 'paused' })
  chain.produce(3)
  await follower.runNow()
  expect(await health()).toMatchObject({ status: 'unhealthy', lag: 6 })
  expect((await POST(`${INDEXER}/resumeCrawler`, {})).data).toMatchObject({ status: 'resumed', running: true })
  await follower.runNow()
  expect(await health()).toMatchObject({ status: 'healthy', lag: 0, indexedHeight: 10 })
})

test('the default thresholds: degraded above 10 blocks, unhealthy above 100', async () => {
  chain.produce(2)
  await follower.runNow()
  await POST(`${INDEXER}/pauseCrawler`, {})
  chain.produce(10)
  await follower.runNow()
  expect(await health()).toMatchObject({ status: 'healthy', lag: 10, degradedLag: 10, unhealthyLag: 100 })
  chain.produce(1)
  await follower.runNow()
  expect(await health()).toMatchObject({ status: 'degraded', lag: 11 })
  chain.produce(90)
  await follower.runNow()
  expect(await health()).toMatchObject({ status: 'unhealthy', lag: 101 })
})

test('reorg history, latest first, with its limit; the entity sets for every user', async () => {
  chain.produce(6)
  await follower.runNow()
  chain.reorg(5, 2)
  await follower.runNow()
  chain.reorg(3, 4)
  await follower.runNow()
  const history = (await GET(`${INDEXER}/getReorgHistory(limit=10)`, asBob)).data.value
  expect(history.map((row: any) => [row.forkHeight, row.blocksRolledBack, row.cause])).toEqual([[3, 4, 'reorg'], [5, 2, 'reorg']])
  expect((await GET(`${INDEXER}/getReorgHistory(limit=1)`, asBob)).data.value).toHaveLength(1)
  expect((await GET(`${INDEXER}/getReorgHistory(limit=0)`, asBob)).data.value).toHaveLength(1)
  expect((await GET(`${INDEXER}/ReorgLog?$count=true&$orderby=forkHeight`, asBob)).data).toMatchObject({ '@odata.count': 2, value: [{ forkHeight: 3 }, { forkHeight: 5 }] })
  const sync = (await GET(`${INDEXER}/SyncState`, asBob)).data.value
  expect(sync).toEqual([expect.objectContaining({ ID: 'chain-b', indexedHeight: 6, reorgs: 2 })])
  expect(sync[0]).not.toHaveProperty('leaseOwner')
})

test('counters: blocks, transactions, shielded transactions, contract calls, reorgs', async () => {
  chain.produce(5, height => [{ shielded: height > 3 }, { call: height === 2 }])
  await follower.runNow()
  chain.reorg(5, 1, () => [{}])
  await follower.runNow()
  expect((await GET(`${INDEXER}/getCounters()`, asBob)).data).toMatchObject({ blocks: 6, transactions: 9, shieldedTransactions: 1, contractCalls: 1, reorgs: 1 })
})

test('reindexFromHeight rolls back from the height, logs it as a reindex, and the follower reads the blocks again', async () => {
  chain.produce(8)
  await follower.runNow()
  const { data } = await POST(`${INDEXER}/reindexFromHeight`, { height: 5 })
  expect(data).toMatchObject({ status: 'completed', requestedHeight: 5, effectiveStartHeight: 5, blocksRolledBack: 4, transactionsRolledBack: 4, crawlerResumed: true })
  expect((await GET(`${INDEXER}/getSyncStatus()`)).data).toMatchObject({ indexedHeight: 4 })
  expect((await GET(`${INDEXER}/getReorgHistory(limit=5)`)).data.value).toEqual([expect.objectContaining({ forkHeight: 5, cause: 'reindex', blocksRolledBack: 4 })])
  await follower.runNow()
  expect((await GET(`${INDEXER}/getCounters()`)).data).toMatchObject({ blocks: 9, transactions: 8, reorgs: 0 })
  expect((await POST(`${INDEXER}/reindexFromHeight`, { height: 50 })).data).toMatchObject({ status: 'unchanged', effectiveStartHeight: 9, blocksRolledBack: 0 })
})

test.each([
  ['a negative height', { height: -1 }],
  ['no height', {}],
])('reindexFromHeight with %s answers 400 INVALID_HEIGHT', async (_name, body) => {
  const { data, status } = await POST(`${INDEXER}/reindexFromHeight`, body)
  expect(data.error).toMatchObject({ code: 'INVALID_HEIGHT' })
  expect(status).toBe(400)
})

test.each([
  ['pauseCrawler', {}],
  ['resumeCrawler', {}],
  ['reindexFromHeight', { height: 0 }],
])('%s needs the admin role: 403 for another user, nothing changed', async (action, body) => {
  chain.produce(2)
  await follower.runNow()
  const { status } = await POST(`${INDEXER}/${action}`, body, asBob)
  expect(status).toBe(403)
  expect((await GET(`${INDEXER}/getSyncStatus()`)).data).toMatchObject({ indexedHeight: 2, status: 'synced' })
})

test('pause stops indexing on every instance until resume', async () => {
  chain.produce(2)
  await follower.runNow()
  expect((await POST(`${INDEXER}/pauseCrawler`, {})).data).toMatchObject({ status: 'paused', running: false })
  chain.produce(2)
  expect(await follower.runNow()).toBe('paused')
  expect((await GET(`${INDEXER}/getSyncStatus()`)).data).toMatchObject({ indexedHeight: 2, chainHeight: 4, status: 'paused' })
  await POST(`${INDEXER}/resumeCrawler`, {})
  expect(await follower.runNow()).toBe('synced')
  expect((await GET(`${INDEXER}/getSyncStatus()`)).data).toMatchObject({ indexedHeight: 4, status: 'synced' })
})

test('liveness answers alive; the service answers under /api/v1/indexer too', async () => {
  expect((await GET(`${INDEXER}/getLiveness()`, asBob)).data).toMatchObject({ status: 'alive', instanceId: null })
  chain.produce(1)
  await follower.runNow()
  const [canonical, alias] = await Promise.all([GET(`${INDEXER}/getSyncStatus()`, asBob), GET('/api/v1/indexer/getSyncStatus()', asBob)])
  expect(alias.data).toEqual(canonical.data)
})

test('anonymous callers are refused', async () => {
  const { status } = await GET(`${INDEXER}/getHealth()`, { auth: undefined })
  expect(status).toBe(401)
})
