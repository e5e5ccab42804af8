import cds from '@sap/cds'
import { randomBytes } from 'node:crypto'
import { growChain, runningDevnet } from '../support/chain-a.ts'
import { rawRequest } from '../support/gateway.ts'
import { has, scrape, scrapeUntil, total, type Sample } from '../support/metrics.ts'
import { routeFamily } from '../../srv/metrics/route-family.ts'

/**
 * /metrics self-hosted (the gateway off): off without a token, refused without the token or with
 * another, and with it the counters of what this instance did, the values read at scrape and the
 * process's own metrics.
 */
const TOKEN = randomBytes(32).toString('hex')
process.env.METRICS_TOKEN = TOKEN
const app: { url: string } = cds.test(__dirname + '/../..') as any
afterAll(() => {
  delete process.env.METRICS_TOKEN
})

const SERVICE = '/odata/v4/chaina-odata'
const alice = { authorization: `Basic ${Buffer.from('alice:').toString('base64')}` }
const read = (path: string) => fetch(app.url + path, { headers: alice })

let devnet: ReturnType<typeof runningDevnet>
let transfers: string[]
beforeAll(() => {
  devnet = runningDevnet()
  transfers = growChain(devnet, ['transfer'], 2).filter(event => event.kind === 'transfer').map(event => event.txHash!)
})

describe('refused', () => {
  test('without a token configured: 404 METRICS_NOT_CONFIGURED, even with a bearer token', async () => {
    delete process.env.METRICS_TOKEN
    try {
      const response = await fetch(app.url + '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })
      expect((await response.json()).error.code).toBe('METRICS_NOT_CONFIGURED')
      expect(response.status).toBe(404)
    } finally {
      process.env.METRICS_TOKEN = TOKEN
    }
  })

  test('without a token: 401 METRICS_TOKEN_REQUIRED with a Bearer challenge', async () => {
    const response = await fetch(app.url + '/metrics')
    expect((await response.json()).error.code).toBe('METRICS_TOKEN_REQUIRED')
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer /)
  })

  test('with another token: 401 INVALID_METRICS_TOKEN', async () => {
    const response = await fetch(app.url + '/metrics', { headers: { authorization: `Bearer ${TOKEN.slice(0, -1)}${TOKEN.endsWith('0') ? '1' : '0'}` } })
    expect((await response.json()).error.code).toBe('INVALID_METRICS_TOKEN')
    expect(response.status).toBe(401)
  })

  test.each([
    ['the scheme alone', 'Bearer', 401, 'METRICS_TOKEN_REQUIRED'],
    ['another scheme', `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}`, 401, 'METRICS_TOKEN_REQUIRED'],
    ['the token without a scheme', TOKEN, 401, 'METRICS_TOKEN_REQUIRED'],
    ['the token and more', `Bearer ${TOKEN} ${TOKEN}`, 401, 'METRICS_TOKEN_REQUIRED'],
    ['the token twice in one', `Bearer ${TOKEN}${TOKEN}`, 401, 'INVALID_METRICS_TOKEN'],
    ['a prefix of the token', `Bearer ${TOKEN.slice(0, 10)}`, 401, 'INVALID_METRICS_TOKEN'],
    ['bytes beyond ASCII', `Bearer \xff\xfe${TOKEN}\x80`, 401, 'INVALID_METRICS_TOKEN'],
    ['a very long value', `Bearer ${'a'.repeat(12_000)}`, 401, 'METRICS_TOKEN_REQUIRED'],
    // The HTTP parser refuses these before any route sees them.
    ['control characters', `Bearer \x01\x02${TOKEN}`, 400, 'MALFORMED_REQUEST'],
  ])('a hostile Authorization header (%s) is refused, never 5xx', async (_name, authorization, status, code) => {
    const response = await rawRequest(app.url, 'GET', '/metrics', { authorization })
    expect(JSON.parse(response.body).error.code).toBe(code)
    expect(response.status).toBe(status)
  })

  test('a write: 405; a path below /metrics: 404', async () => {
    const write = await rawRequest(app.url, 'POST', '/metrics', { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/plain' }, 'x')
    expect(JSON.parse(write.body).error.code).toBe('METHOD_NOT_ALLOWED')
    expect(write.status).toBe(405)
    const below = await rawRequest(app.url, 'GET', '/metrics/x', { authorization: `Bearer ${TOKEN}` })
    expect(JSON.parse(below.body).error.code).toBe('UNKNOWN_RESOURCE')
    expect(below.status).toBe(404)
  })
})

describe('with the token', () => {
  test("Prometheus's text format, the process's own metrics among them; the scheme's case does not matter", async () => {
    const answer = await scrape(app.url, TOKEN)
    expect(answer.contentType).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(answer.status).toBe(200)
    expect(answer.text).toContain('# TYPE cag_http_requests_total counter')
    expect(has(answer.samples, 'cag_process_resident_memory_bytes')).toBe(true)
    expect(answer.text).toContain('# TYPE cag_nodejs_eventloop_lag_seconds gauge')
    const lower = await rawRequest(app.url, 'GET', '/metrics', { authorization: `bearer ${TOKEN}` })
    expect(lower.status).toBe(200)
  })

  test('requests counted by route family, method and status class: the counts rise by the calls made', async () => {
    const family = { family: SERVICE, method: 'GET' }
    const before = (await scrape(app.url, TOKEN)).samples
    for (let i = 0; i < 3; i++) expect((await read(`${SERVICE}/Blocks?$top=1`)).status).toBe(200)
    expect((await read(`${SERVICE}/Transactions('not-a-hash')`)).status).toBe(400)
    const rose = (samples: Sample[], status: string) => total(samples, 'cag_http_requests_total', { ...family, status }) - total(before, 'cag_http_requests_total', { ...family, status })
    const after = await scrapeUntil(app.url, TOKEN, samples => rose(samples, '2xx') >= 3 && rose(samples, '4xx') >= 1)
    expect(rose(after, '2xx')).toBe(3)
    expect(rose(after, '4xx')).toBe(1)
    expect(rose(after, '5xx')).toBe(0)
    const timed = total(after, 'cag_http_request_duration_seconds_count', { family: SERVICE }) - total(before, 'cag_http_request_duration_seconds_count', { family: SERVICE })
    expect(timed).toBe(4)
  })

  test('a cache miss asks the upstream (counted as the devnet counts them), a warm read counts a hit and asks nothing', async () => {
    const hash = transfers[0]
    const lookups = (samples: Sample[], result: string) => total(samples, 'cag_chain_a_index_lookups_total', { kind: 'transaction', result })
    const upstream = (samples: Sample[]) => total(samples, 'cag_upstream_requests_total', { chain: 'chain-a' })
    const before = (await scrape(app.url, TOKEN)).samples
    devnet.resetRequestCounts()
    expect((await read(`${SERVICE}/Transactions('${hash}')`)).status).toBe(200)
    const cold = (await scrape(app.url, TOKEN)).samples
    expect(lookups(cold, 'miss') - lookups(before, 'miss')).toBeGreaterThanOrEqual(1)
    expect(upstream(cold) - upstream(before)).toBeGreaterThanOrEqual(1)
    expect(upstream(cold) - upstream(before)).toBe(devnet.requestCount())
    expect(total(cold, 'cag_upstream_request_duration_seconds_count', { chain: 'chain-a' })).toBeGreaterThanOrEqual(upstream(cold))

    expect((await read(`${SERVICE}/Transactions('${hash}')`)).status).toBe(200)
    const warm = (await scrape(app.url, TOKEN)).samples
    expect(lookups(warm, 'hit') - lookups(cold, 'hit')).toBeGreaterThanOrEqual(1)
    expect(upstream(warm)).toBe(upstream(cold))
  })

  test('an upstream 404 counts as not_found', async () => {
    const before = (await scrape(app.url, TOKEN)).samples
    expect((await read(`${SERVICE}/Transactions('${'ab'.repeat(32)}')`)).status).toBe(404)
    const after = (await scrape(app.url, TOKEN)).samples
    const notFound = (samples: Sample[]) => total(samples, 'cag_upstream_requests_total', { chain: 'chain-a', outcome: 'not_found' })
    expect(notFound(after) - notFound(before)).toBeGreaterThanOrEqual(1)
  })

  test("the values read at scrape: the chain-B follower's lag, the chain-B jobs by status, the database pool", async () => {
    const samples = await scrapeUntil(app.url, TOKEN, found => has(found, 'cag_follower_lag_blocks', { chain: 'chain-b' }))
    expect(total(samples, 'cag_follower_lag_blocks', { chain: 'chain-b' })).toBeGreaterThanOrEqual(0)
    for (const status of ['queued', 'running', 'submitted']) expect(has(samples, 'cag_chain_b_jobs', { status })).toBe(true)
    expect(total(samples, 'cag_db_pool_max_connections')).toBeGreaterThan(0)
    for (const state of ['open', 'available', 'borrowed']) expect(has(samples, 'cag_db_pool_connections', { state })).toBe(true)
    for (const collector of ['follower_lag', 'job_queue', 'db_pool']) expect(total(samples, 'cag_metrics_collector_up', { collector })).toBe(1)
    expect(has(samples, 'cag_prover_claims', { state: 'waiting' })).toBe(true)
  })

  test('the database failing: the scrape still answers, with what is known; the values it could not read are left out and said so', async () => {
    await scrapeUntil(app.url, TOKEN, found => has(found, 'cag_follower_lag_blocks', { chain: 'chain-b' }))
    const failing = jest.spyOn(cds.db, 'run').mockRejectedValue(new Error('Client has encountered a connection error and is not queryable'))
    try {
      const answer = await scrape(app.url, TOKEN)
      expect(answer.status).toBe(200)
      expect(total(answer.samples, 'cag_metrics_collector_up', { collector: 'follower_lag' })).toBe(0)
      expect(total(answer.samples, 'cag_metrics_collector_up', { collector: 'job_queue' })).toBe(0)
      expect(total(answer.samples, 'cag_metrics_collector_up', { collector: 'db_pool' })).toBe(1)
      expect(has(answer.samples, 'cag_follower_lag_blocks')).toBe(false)
      expect(has(answer.samples, 'cag_chain_b_jobs')).toBe(false)
      expect(has(answer.samples, 'cag_http_requests_total', { family: '/metrics' })).toBe(true)
    } finally {
      failing.mockRestore()
    }
    const again = await scrape(app.url, TOKEN)
    expect(total(again.samples, 'cag_metrics_collector_up', { collector: 'job_queue' })).toBe(1)
  })

  test('labels take few values: a made-up path is "other", both chain-B spellings one family', async () => {
    expect(routeFamily(`/${'x'.repeat(40)}/odata`)).toBe('other')
    expect(routeFamily('/odata/v4/no-such-service/Things')).toBe('other')
    expect(routeFamily('/odata/v4/chaina-odata/Blocks?$top=1')).toBe(SERVICE)
    expect(routeFamily('/api/v1/chainb/Attestations')).toBe('/odata/v4/chainb')
    expect(routeFamily('/odata/v4/chainb/$metadata')).toBe('/odata/v4/chainb')
    expect(routeFamily('/zk-config/field_membership/x.wasm')).toBe('/zk-config')
    expect(routeFamily('/metrics')).toBe('/metrics')
    expect(routeFamily('/')).toBe('/')
    await rawRequest(app.url, 'GET', `/${randomBytes(8).toString('hex')}`)
    const samples = (await scrape(app.url, TOKEN)).samples
    const families = new Set(samples.filter(sample => sample.name === 'cag_http_requests_total').map(sample => sample.labels.family))
    expect([...families].every(family => family === 'other' || family.startsWith('/'))).toBe(true)
    expect(samples.some(sample => sample.name === 'cag_http_requests_total' && /[0-9a-f]{16}/.test(sample.labels.family))).toBe(false)
  })
})
