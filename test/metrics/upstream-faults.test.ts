import cds from '@sap/cds'
import { randomBytes } from 'node:crypto'
import { growChain, runningDevnet } from '../support/chain-a.ts'
import { balanceOf, issueTestKey, ledgerOf } from '../support/gateway.ts'
import { scrape, scrapeUntil, total, type Sample } from '../support/metrics.ts'

/**
 * What the metrics say when the upstream fails on the hosted gateway: a call not answered in time
 * is refunded as `timeout`, a slow upstream call is timed, an upstream that is gone counts as
 * `unreachable`.
 */
const TOKEN = randomBytes(32).toString('hex')
process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_TIMEOUT_MS = '1000'
process.env.METRICS_TOKEN = TOKEN
const app: { url: string } = cds.test(__dirname + '/../..') as any
afterAll(() => {
  for (const name of ['GATEWAY_ENABLED', 'GATEWAY_TIMEOUT_MS', 'METRICS_TOKEN']) delete process.env[name]
})

const SERVICE = '/odata/v4/chaina-odata'
let devnet: ReturnType<typeof runningDevnet>
let transfers: string[]
beforeAll(() => {
  devnet = runningDevnet()
  transfers = growChain(devnet, ['transfer'], 2).filter(event => event.kind === 'transfer').map(event => event.txHash!)
})

const keyed = (key: string) => ({ headers: { authorization: `Bearer ${key}` } })

test('a call not answered within the timeout: 504, its units counted refunded as timeout, the slow upstream call timed', async () => {
  const { id, key } = await issueTestKey({ units: 10 })
  const before = (await scrape(app.url, TOKEN)).samples
  const slowCalls = (samples: Sample[]) => total(samples, 'cag_upstream_request_duration_seconds_count', { chain: 'chain-a' }) - total(samples, 'cag_upstream_request_duration_seconds_bucket', { chain: 'chain-a', le: '1' })
  devnet.setLatency(2500)
  try {
    const response = await fetch(`${app.url}${SERVICE}/Transactions('${transfers[0]}')`, keyed(key))
    expect((await response.json()).error.code).toBe('UPSTREAM_TIMEOUT')
    expect(response.status).toBe(504)
  } finally {
    devnet.setLatency(0)
  }
  const refunded = (samples: Sample[]) => total(samples, 'cag_units_refunded_total', { reason: 'timeout' }) - total(before, 'cag_units_refunded_total', { reason: 'timeout' })
  const after = await scrapeUntil(app.url, TOKEN, samples => refunded(samples) > 0 && slowCalls(samples) > slowCalls(before))
  for (let i = 0; i < 100 && (await balanceOf(id)) !== 10; i++) await new Promise(resolve => setTimeout(resolve, 50))
  expect(await balanceOf(id)).toBe(10)
  const refunds = (await ledgerOf(id)).filter(entry => entry.kind === 'refund' && entry.outcome === 'timeout')
  expect(refunds).toHaveLength(1)
  expect(refunded(after)).toBe(refunds[0].units)
  expect(total(after, 'cag_units_charged_total') - total(before, 'cag_units_charged_total')).toBe(0)
})

test('an upstream that is gone: its calls count as unreachable, the request as 5xx', async () => {
  const { key } = await issueTestKey({ units: 10 })
  const before = (await scrape(app.url, TOKEN)).samples
  await devnet.stop()
  const response = await fetch(`${app.url}${SERVICE}/Transactions('${transfers[1]}')`, keyed(key))
  expect((await response.json()).error.code).toBe('UPSTREAM_UNAVAILABLE')
  const rose = (samples: Sample[], name: string, labels: Record<string, string>) => total(samples, name, labels) - total(before, name, labels)
  const after = await scrapeUntil(app.url, TOKEN, samples => rose(samples, 'cag_http_requests_total', { family: SERVICE, status: '5xx' }) >= 1)
  expect(rose(after, 'cag_upstream_requests_total', { chain: 'chain-a', outcome: 'unreachable' })).toBeGreaterThanOrEqual(1)
  expect(rose(after, 'cag_http_requests_total', { family: SERVICE, status: '5xx' })).toBe(1)
})
