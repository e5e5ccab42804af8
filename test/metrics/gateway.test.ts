import cds from '@sap/cds'
import { randomBytes } from 'node:crypto'
import { balanceOf, freshClientAddress, issueTestKey, ledgerOf, rawRequest, sendFrom, settled } from '../support/gateway.ts'
import { scrape, scrapeUntil, total, type Sample } from '../support/metrics.ts'

/**
 * /metrics on the hosted gateway: a free own route that asks for the metrics token, never for an
 * API key; its refusals charge nothing and count against no key and no client; the counters of
 * the metered calls agree with the ledger.
 */
const TOKEN = randomBytes(32).toString('hex')
process.env.GATEWAY_ENABLED = 'true'
process.env.METRICS_TOKEN = TOKEN
const app: { url: string } = cds.test(__dirname + '/../..') as any
afterAll(() => {
  delete process.env.GATEWAY_ENABLED
  delete process.env.METRICS_TOKEN
})

const SERVICE = '/odata/v4/chaina-odata'
const keyed = (key: string) => ({ headers: { authorization: `Bearer ${key}` } })

describe('refused, charged 0', () => {
  test('without a token: 401 METRICS_TOKEN_REQUIRED, not the gateway\'s key refusal', async () => {
    const response = await fetch(app.url + '/metrics')
    expect((await response.json()).error.code).toBe('METRICS_TOKEN_REQUIRED')
    expect(response.status).toBe(401)
    expect(response.headers.get('x-access-units-charged')).toBe('0')
  })

  test('an API key as the token: 401 INVALID_METRICS_TOKEN; the key keeps its units and its ledger', async () => {
    const key = await issueTestKey({ units: 10 })
    const entries = (await ledgerOf(key.id)).length
    const response = await fetch(app.url + '/metrics', keyed(key.key))
    expect((await response.json()).error.code).toBe('INVALID_METRICS_TOKEN')
    expect(response.status).toBe(401)
    expect(response.headers.get('x-access-units-charged')).toBe('0')
    expect(await balanceOf(key.id)).toBe(10)
    expect(await ledgerOf(key.id)).toHaveLength(entries)
  })

  test('wrong tokens are no failed key attempts: after more of them than the failure limit allows, the client is not limited', async () => {
    const from = freshClientAddress()
    for (let i = 0; i < 25; i++) {
      const refused = await sendFrom(app.url, 'GET', '/metrics', { from, token: `wrong-${i}` })
      expect(refused.body.error.code).toBe('INVALID_METRICS_TOKEN')
    }
    const bogusKey = await sendFrom(app.url, 'GET', `${SERVICE}/Blocks?$top=1`, { from, token: 'cag_bogus' })
    expect(bogusKey.body.error.code).not.toBe('TOO_MANY_FAILED_ATTEMPTS')
    expect(bogusKey.status).toBe(401)
    const key = await issueTestKey({ units: 10 })
    const call = await sendFrom(app.url, 'GET', `${SERVICE}/Blocks?$top=1`, { from, token: key.key })
    expect(call.status).toBe(200)
  })

  test('a write: the gateway answers 405; no token configured: 404 METRICS_NOT_CONFIGURED', async () => {
    const write = await rawRequest(app.url, 'POST', '/metrics', { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, '{}')
    expect(JSON.parse(write.body).error.code).toBe('METHOD_NOT_ALLOWED')
    expect(write.status).toBe(405)
    delete process.env.METRICS_TOKEN
    try {
      const off = await fetch(app.url + '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })
      expect((await off.json()).error.code).toBe('METRICS_NOT_CONFIGURED')
      expect(off.status).toBe(404)
      expect(off.headers.get('x-access-units-charged')).toBe('0')
    } finally {
      process.env.METRICS_TOKEN = TOKEN
    }
  })
})

describe('with the token', () => {
  test('answered without an API key, charged 0', async () => {
    const response = await fetch(app.url + '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })
    expect(await response.text()).toContain('cag_http_requests_total')
    expect(response.status).toBe(200)
    expect(response.headers.get('x-access-units-charged')).toBe('0')
  })

  test('metered calls: the request counters rise by the calls made; units charged and refunded as the ledger says', async () => {
    const { id, key } = await issueTestKey({ units: 100 })
    const before = (await scrape(app.url, TOKEN)).samples
    const reads = ['Blocks?$top=1', 'Epochs?$top=1', 'Blocks?$top=2']
    for (const path of reads) expect((await fetch(`${app.url}${SERVICE}/${path}`, keyed(key))).status).toBe(200)
    const rejected = await fetch(`${app.url}${SERVICE}/Transactions('${'ab'.repeat(32)}')`, keyed(key))
    expect(rejected.status).toBe(404)
    await settled(id)

    const rose = (samples: Sample[], name: string, labels: Record<string, string>) => total(samples, name, labels) - total(before, name, labels)
    const requests = (samples: Sample[], status: string) => rose(samples, 'cag_http_requests_total', { family: SERVICE, method: 'GET', status })
    const after = await scrapeUntil(app.url, TOKEN, samples => requests(samples, '2xx') >= reads.length && requests(samples, '4xx') >= 1)
    expect(requests(after, '2xx')).toBe(reads.length)
    expect(requests(after, '4xx')).toBe(1)

    const ledger = await ledgerOf(id)
    const committed = ledger.filter(entry => entry.kind === 'charge' && entry.state === 'committed').reduce((sum, entry) => sum - entry.units, 0)
    const refunded = ledger.filter(entry => entry.kind === 'refund').reduce((sum, entry) => sum + entry.units, 0)
    expect(committed).toBeGreaterThan(0)
    expect(refunded).toBeGreaterThan(0)
    expect(rose(after, 'cag_units_charged_total', {})).toBe(committed)
    expect(rose(after, 'cag_units_refunded_total', { reason: 'error' })).toBe(refunded)
    expect(await balanceOf(id)).toBe(100 - committed)
  })

  test('no label carries a key id or a key', async () => {
    const { id, key } = await issueTestKey({ units: 10 })
    await fetch(`${app.url}${SERVICE}/Blocks?$top=1`, keyed(key))
    const { text } = await scrape(app.url, TOKEN)
    expect(text).not.toContain(id)
    expect(text).not.toContain(key)
  })
})
