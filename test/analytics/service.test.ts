import cds from '@sap/cds'
import { foldAll } from '../../srv/analytics/bucket-writer.ts'
import { chainBHistory } from './history.ts'

/**
 * The analytics service over HTTP, self-hosted: the functions with their arguments in the path,
 * the entity sets with query options, 400s that name the valid values, and the operator's
 * internals (admin only). The figures themselves are checked in figures.test.ts.
 */

process.env.CHAIN_B_CRAWLER_ENABLED = 'false'
process.env.CHAIN_A_FOLLOWER_ENABLED = 'false'
const { GET, POST } = cds.test(__dirname + '/../..')
afterAll(() => {
  delete process.env.CHAIN_B_CRAWLER_ENABLED
  delete process.env.CHAIN_A_FOLLOWER_ENABLED
})

const alice = { auth: { username: 'alice', password: '' } }
const bob = { auth: { username: 'bob', password: '' } }
const answerOf = (promise: Promise<any>) => promise.then(response => response, error => error.response)
/**
 * A moment a few minutes ago, to the minute ('YYYY-MM-DDTHH:MM'), but never before today's UTC
 * midnight: the daily figures must find the blocks in today's bucket whenever the test runs.
 */
const minutesAgo = (minutes: number) => {
  const midnight = new Date().setUTCHours(0, 0, 0, 0)
  return new Date(Math.max(Date.now() - minutes * 60_000, midnight)).toISOString().slice(0, 16)
}

beforeAll(async () => {
  // Two blocks of two producers a few minutes ago, with two transactions: the 1h window sees them.
  await chainBHistory([
    { height: 1, when: minutesAgo(5), author: 'P1' },
    { height: 2, when: minutesAgo(4), author: 'P2' },
  ], [
    { label: 's1', height: 1, fee: 7 },
    { label: 's2', height: 2, fee: 9, action: { kind: 'ContractCall', contract: 'C1' } },
  ], { indexedHeight: 2, finalizedHeight: 1 })
  await foldAll()
})

test("compare(metric='tx.count',window='1h') as the spec writes it", async () => {
  const { status, data } = await GET("/odata/v4/analytics/compare(metric='tx.count',window='1h')", alice)
  expect(data).toMatchObject({ metric: 'tx.count', window: '1h', resolution: 'minute' })
  expect(data.chains.find((chain: any) => chain.chain === 'chain-b')).toMatchObject({ available: true, value: 2 })
  expect(data.chains.find((chain: any) => chain.chain === 'chain-a')).toMatchObject({ value: null, note: expect.stringContaining('not indexed yet') })
  expect(status).toBe(200)
})

test.each([
  ['overview()', (data: any) => expect(data.chains.find((chain: any) => chain.chain === 'chain-b')).toMatchObject({ blocks24h: 2, transactions24h: 2, fees24h: 16, producers24h: 2 })],
  ["keyFigures(window='1h')", (data: any) => expect(data.figures.find((figure: any) => figure.chain === 'chain-b' && figure.metric === 'fee.total').value).toBe(16)],
  ["daily(topic='transactions',days=1)", (data: any) => expect(data.rows.find((row: any) => row.chain === 'chain-b' && row.metric === 'tx.count')).toMatchObject({ value: 2, complete: false })],
  ["rankings(ranking='producers',window='1h',top=1)", (data: any) => expect(data.entries).toEqual([expect.objectContaining({ chain: 'chain-b', rank: 1, value: 1, share: 0.5 })])],
  ["concentration(resource='blocks',window='1h')", (data: any) => expect(data.chains.find((chain: any) => chain.chain === 'chain-b')).toMatchObject({ entities: 2, nakamoto: 2, hhi: 5000 })],
  ["distributions(distribution='fees',window='1h',bins=2)", (data: any) => expect(data.chains.find((chain: any) => chain.chain === 'chain-b')).toMatchObject({ count: 2, min: 7, max: 9 })],
  ["anomalies(metric='tx.count',window='1h')", (data: any) => expect(data).toMatchObject({ threshold: 3.5, flagged: [] })],
  ["MetricBuckets?$filter=chain eq 'chain-b' and metric eq 'tx.count' and resolution eq 'hour'&$select=value", (data: any) => expect(data.value.reduce((sum: number, row: any) => sum + Number(row.value), 0)).toBe(2)],
  ["EpochSnapshots?$filter=resource eq 'producers'&$count=true", (data: any) => expect(data['@odata.count']).toBe(2)],
  ['SyncStatus', (data: any) => expect(data.value).toEqual([expect.objectContaining({ chain: 'chain-b', indexedHeight: 2, finalizedHeight: 1 })])],
  ['Reorgs?$count=true', (data: any) => expect(data['@odata.count']).toBe(0)],
])('GET %s', async (path, check) => {
  const { status, data } = await GET(`/odata/v4/analytics/${path}`, alice)
  check(data)
  expect(status).toBe(200)
})

test.each([
  ["compare(metric='tx.counts',window='1h')", 'UNKNOWN_METRIC', 'tx.count, tx.system'],
  ["compare(metric='tx.count',window='2h')", 'INVALID_WINDOW', '1h, 24h, 7d, 30d'],
  ["compare(metric='',window='')", 'UNKNOWN_METRIC', 'chain.blocks'],
  ["keyFigures(window='toString')", 'INVALID_WINDOW', '1h, 24h, 7d, 30d'],
  [`compare(metric='${'x'.repeat(300)}',window='1h')`, 'UNKNOWN_METRIC', 'tx.count'],
  ["daily(topic='weather',days=7)", 'UNKNOWN_TOPIC', 'blocks, transactions, fees, tokens'],
  ["daily(topic='fees',days=0)", 'INVALID_PARAMETER', 'from 1 to 90'],
  ["rankings(ranking='whales',window='24h',top=10)", 'UNKNOWN_RANKING', 'producers, addresses, tokens, contracts'],
  ["rankings(ranking='producers',window='24h',top=1000)", 'INVALID_PARAMETER', 'from 1 to 100'],
  ["concentration(resource='votes',window='24h')", 'UNKNOWN_RESOURCE', 'blocks, stake'],
  ["distributions(distribution='ages',window='24h',bins=10)", 'UNKNOWN_DISTRIBUTION', 'fees, sizes, stake'],
  ["anomalies(metric='sync.lag_blocks',window='24h')", 'METRIC_NOT_SUPPORTED', 'tx.count'],
])('GET %s answers 400 %s naming the valid values', async (path, code, valid) => {
  const { status, data } = await answerOf(GET(`/odata/v4/analytics/${path}`, alice))
  expect(data.error).toMatchObject({ code, message: expect.stringContaining(valid) })
  expect(status).toBe(400)
})

test('the internals are for operators: rebuild the buckets, pause and resume a follower', async () => {
  const refused = await answerOf(POST('/odata/v4/analytics/rebuildBuckets', { chain: 'chain-b' }, bob))
  expect(refused.status).toBe(403)
  await cds.ql.DELETE.from('analytics.MetricBuckets')
  const { data } = await POST('/odata/v4/analytics/rebuildBuckets', { chain: 'chain-b' }, alice)
  expect(data.value).toEqual([{ chain: 'chain-b', hours: expect.any(Number), foldedHeight: 2 }])
  const rebuilt = await GET("/odata/v4/analytics/compare(metric='tx.count',window='24h')", alice)
  expect(rebuilt.status).toBe(200)
  expect((await cds.ql.SELECT.from('analytics.MetricBuckets').where({ chain: 'chain-b', metric: 'tx.count', resolution: 'hour' })).reduce((sum: number, row: any) => sum + Number(row.value), 0)).toBe(2)

  // From a time inside an hour: that hour is folded whole again.
  const fromTime = new Date(Date.now() - (2 * 60 + 17) * 60_000).toISOString()
  expect((await POST('/odata/v4/analytics/rebuildBuckets', { chain: 'chain-b', fromTime }, alice)).data.value).toEqual([expect.objectContaining({ chain: 'chain-b', foldedHeight: 2 })])
  expect((await GET("/odata/v4/analytics/compare(metric='tx.count',window='1h')", alice)).data.chains[1].value).toBe(2)

  expect((await POST('/odata/v4/analytics/pauseFollower', { chain: 'chain-b' }, alice)).data).toMatchObject({ chain: 'chain-b', paused: true })
  expect((await GET("/odata/v4/analytics/SyncStatus?$filter=chain eq 'chain-b'", alice)).data.value[0].paused).toBe(true)
  expect((await POST('/odata/v4/analytics/resumeFollower', { chain: 'chain-b' }, alice)).data).toMatchObject({ paused: false })
  const unknown = await answerOf(POST('/odata/v4/analytics/pauseFollower', { chain: 'chain-c' }, alice))
  expect(unknown.data.error).toMatchObject({ code: 'UNKNOWN_CHAIN', message: 'chain must be one of chain-a, chain-b' })
  const notStarted = await answerOf(POST('/odata/v4/analytics/pauseFollower', { chain: 'chain-a' }, alice))
  expect(notStarted.data.error).toMatchObject({ code: 'NOT_INDEXED' })
  expect(notStarted.status).toBe(400)
})
