import cds from '@sap/cds'
import { balanceOf, issueTestKey, rawRequest } from '../support/gateway.ts'

/**
 * Analytics through the hosted gateway: served on the key alone (no product grant underneath),
 * every read and function at the `analytics` price (3 units), the internals closed (403, free).
 */

process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_RATE_PER_SECOND = '100000'
process.env.GATEWAY_BURST = '100000'
process.env.CHAIN_B_CRAWLER_ENABLED = 'false'
process.env.CHAIN_A_FOLLOWER_ENABLED = 'false'
const app: { url: string } = cds.test(__dirname + '/../..') as any
afterAll(() => {
  for (const name of ['GATEWAY_ENABLED', 'GATEWAY_RATE_PER_SECOND', 'GATEWAY_BURST', 'CHAIN_B_CRAWLER_ENABLED', 'CHAIN_A_FOLLOWER_ENABLED']) delete process.env[name]
})

let key: { id: string; key: string }
beforeAll(async () => {
  key = await issueTestKey({ units: 100 })
})

const request = (method: string, target: string, body = '') =>
  rawRequest(app.url, method, target, { Authorization: `Bearer ${key.key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body)

test.each([
  "/odata/v4/analytics/compare(metric='tx.count',window='24h')",
  '/odata/v4/analytics/overview()',
  "/odata/v4/analytics/keyFigures(window='1h')",
  '/odata/v4/analytics/MetricBuckets?$top=1',
  '/odata/v4/analytics/SyncStatus',
])('GET %s costs 3 units', async target => {
  const before = await balanceOf(key.id)
  const response = await request('GET', target)
  expect(response.status).toBe(200)
  expect(response.headers['x-access-units-charged']).toBe('3')
  expect(await balanceOf(key.id)).toBe(before - 3)
})

test('a bad argument is a 400 that costs nothing', async () => {
  const before = await balanceOf(key.id)
  const response = await request('GET', "/odata/v4/analytics/compare(metric='tx.nope',window='24h')")
  expect(JSON.parse(response.body).error.code).toBe('UNKNOWN_METRIC')
  expect(response.status).toBe(400)
  expect(response.headers['x-access-units-charged']).toBe('0')
  expect(await balanceOf(key.id)).toBe(before)
})

test.each(['rebuildBuckets', 'pauseFollower', 'resumeFollower'])('%s is closed on the hosted API, free', async operation => {
  const before = await balanceOf(key.id)
  const response = await request('POST', `/odata/v4/analytics/${operation}`, JSON.stringify({ chain: 'chain-b' }))
  expect(JSON.parse(response.body).error.code).toBe('OPERATION_CLOSED')
  expect(response.status).toBe(403)
  expect(await balanceOf(key.id)).toBe(before)
})

test('without a key nothing is answered', async () => {
  const response = await rawRequest(app.url, 'GET', "/odata/v4/analytics/compare(metric='tx.count',window='24h')")
  expect(response.status).toBe(401)
})
