import cds from '@sap/cds'
import { markStopping } from '../../srv/lib/lifecycle.ts'
import { balanceOf, issueTestKey, ledgerOf, rawRequest } from '../support/gateway.ts'

/**
 * The probes behind the hosted gateway: free and without a key, uncharged, with every check up on
 * the devnets; a database that does not answer makes /ready 503 NOT_READY naming it; a stopping
 * process is not ready at once. One answer serves the probes for HEALTH_CACHE_MS.
 */
process.env.GATEWAY_ENABLED = 'true'
process.env.HEALTH_CACHE_MS = '0'
process.env.HEALTH_DATABASE_TIMEOUT_MS = '500'
const app: { url: string } = cds.test(__dirname + '/../..') as any

afterAll(() => {
  for (const name of ['GATEWAY_ENABLED', 'HEALTH_CACHE_MS', 'HEALTH_DATABASE_TIMEOUT_MS']) delete process.env[name]
})

const probe = async (path: string, init: RequestInit = {}) => {
  const response = await fetch(app.url + path, init)
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers }
}

describe('without any key', () => {
  test('/health: 200 UP with the uptime, charged 0, never cached', async () => {
    const { status, body, headers } = await probe('/health')
    expect(body).toMatchObject({ status: 'UP', uptimeSeconds: expect.any(Number), startedAt: expect.any(String) })
    expect(status).toBe(200)
    expect(headers.get('x-access-units-charged')).toBe('0')
    expect(headers.get('cache-control')).toBe('no-store')
  })

  test('/ready: 200 READY, every check up on the devnets, charged 0', async () => {
    const { status, body, headers } = await probe('/ready')
    expect(body).toMatchObject({
      status: 'READY',
      checks: {
        database: { status: 'UP' },
        chainA: { status: 'UP', upstream: { status: 'UP', lastSuccessAt: expect.any(String) }, follower: { runsHere: false } },
        chainB: { status: 'UP', upstream: { status: 'UP' } },
        jobQueue: { status: 'UP', queued: expect.any(Number), running: expect.any(Number), submitted: expect.any(Number) },
        provers: { status: 'UP', busy: 0, waiting: 0, size: expect.any(Number) },
      },
    })
    expect(body.error).toBeUndefined()
    expect(status).toBe(200)
    expect(headers.get('x-access-units-charged')).toBe('0')
  })

  test('HEAD /ready: 200 without a body, charged 0', async () => {
    const response = await rawRequest(app.url, 'HEAD', '/ready')
    expect(response.body).toBe('')
    expect(response.status).toBe(200)
    expect(response.headers['x-access-units-charged']).toBe('0')
  })
})

test('with a key: answered alike, nothing charged and nothing in its ledger', async () => {
  const key = await issueTestKey({ units: 10 })
  const entries = (await ledgerOf(key.id)).length
  for (const path of ['/health', '/ready']) {
    const { status, headers } = await probe(path, { headers: { authorization: `Bearer ${key.key}` } })
    expect(status).toBe(200)
    expect(headers.get('x-access-units-charged')).toBe('0')
  }
  expect(await balanceOf(key.id)).toBe(10)
  expect(await ledgerOf(key.id)).toHaveLength(entries)
})

describe('hostile requests are refused with a code or their query ignored, never a 5xx', () => {
  test.each([
    ['an OData option', '/ready?$filter=contains(x,%27%27)'], ['a malformed escape', '/ready?a=%ZZ'], ['a 4000-character query', '/ready?' + 'x'.repeat(4000)],
    ['open braces', '/health?{{{'], ['a NUL character', '/ready?%00'], ['an encoded slash', '/ready/..%2fme'], ['a path under it', '/health/details'], ['a matrix parameter', '/ready;x'],
  ])('%s', async (_, target) => {
    const response = await rawRequest(app.url, 'GET', target)
    expect(response.status).toBeLessThan(500)
    if (response.status >= 400) expect(JSON.parse(response.body).error.code).toMatch(/^[A-Z_]+$/)
    expect(response.headers['x-access-units-charged']).toBe('0')
  })

  test('POST /ready: 405', async () => {
    const { status, body } = await probe('/ready', { method: 'POST' })
    expect(body.error.code).toBe('METHOD_NOT_ALLOWED')
    expect(status).toBe(405)
  })
})

describe('when the database does not answer', () => {
  afterEach(() => jest.restoreAllMocks())

  test('its query fails: /ready 503 NOT_READY naming the database, /health stays 200', async () => {
    const run = cds.db.run.bind(cds.db)
    jest.spyOn(cds.db, 'run').mockImplementation(((query: unknown, ...rest: unknown[]) =>
      query === 'SELECT 1 AS up' ? Promise.reject(Object.assign(new Error('connection refused by postgres://user:secret@db'), { code: 'ECONNREFUSED' })) : run(query as any, ...(rest as []))) as any)
    const { status, body, headers } = await probe('/ready')
    expect(body).toMatchObject({ status: 'NOT_READY', checks: { database: { status: 'DOWN', reason: 'failed: ECONNREFUSED' } }, error: { code: 'NOT_READY' } })
    expect(body.error.message).toMatch(/database/)
    expect(JSON.stringify(body)).not.toMatch(/secret|postgres:/)
    expect(status).toBe(503)
    expect(headers.get('x-access-units-charged')).toBe('0')
    expect((await probe('/health')).status).toBe(200)
  })

  test('its query hangs: /ready 503 once the time-out has passed', async () => {
    const run = cds.db.run.bind(cds.db)
    jest.spyOn(cds.db, 'run').mockImplementation(((query: unknown, ...rest: unknown[]) => (query === 'SELECT 1 AS up' ? new Promise(() => {}) : run(query as any, ...(rest as [])))) as any)
    const { status, body } = await probe('/ready')
    expect(body).toMatchObject({ status: 'NOT_READY', checks: { database: { status: 'DOWN', reason: 'no answer within 500 ms' } }, error: { code: 'NOT_READY' } })
    expect(status).toBe(503)
  })

  test('back again: /ready 200', async () => {
    const { status, body } = await probe('/ready')
    expect(body.status).toBe('READY')
    expect(status).toBe(200)
  })
})

test('a follower far behind the tip: its chain DEGRADED with the lag, the instance still READY', async () => {
  const { INSERT, DELETE } = cds.ql
  await INSERT.into('chaina.SyncState').entries({ ID: 'chain-a', network: 'devnet', chainHeight: 1000, indexedHeight: 10, status: 'syncing', paused: false })
  try {
    const { status, body } = await probe('/ready')
    expect(body).toMatchObject({
      status: 'READY',
      checks: { chainA: { status: 'DEGRADED', reason: expect.stringMatching(/990 blocks behind/), follower: { status: 'DEGRADED', lagBlocks: 990, state: 'syncing', runsHere: false } } },
    })
    expect(status).toBe(200)
  } finally {
    await DELETE.from('chaina.SyncState').where({ ID: 'chain-a' })
  }
})

test('one answer serves every probe for HEALTH_CACHE_MS: the database is asked once', async () => {
  process.env.HEALTH_CACHE_MS = '600000'
  try {
    await probe('/ready')
    const run = jest.spyOn(cds.db, 'run')
    const answers = await Promise.all(Array.from({ length: 20 }, () => probe('/ready')))
    expect(answers.map(answer => answer.status)).toEqual(Array(20).fill(200))
    expect(run.mock.calls.filter(([query]) => query === 'SELECT 1 AS up')).toHaveLength(0)
  } finally {
    process.env.HEALTH_CACHE_MS = '0'
    jest.restoreAllMocks()
  }
})

test('a stopping process: /ready 503 NOT_READY at once, naming the stop; /health stays 200', async () => {
  markStopping()
  const { status, body, headers } = await probe('/ready')
  expect(body).toMatchObject({ status: 'NOT_READY', checks: { process: { status: 'DOWN' } }, error: { code: 'NOT_READY', message: expect.stringMatching(/stopping/) } })
  expect(status).toBe(503)
  expect(headers.get('x-access-units-charged')).toBe('0')
  expect((await probe('/health')).status).toBe(200)
})
