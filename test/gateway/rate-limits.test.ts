import cds from '@sap/cds'
import { runningDevnet } from '../support/chain-a.ts'
import { bearer, issueTestKey } from '../support/gateway.ts'
import { FailureWindow, KeyRateLimit } from '../../srv/gateway/rate-limits.ts'

process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_RATE_PER_SECOND = '1'
process.env.GATEWAY_BURST = '3'
process.env.GATEWAY_AUTH_FAILURES = '5'
const { GET, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true

beforeAll(() => runningDevnet())
afterAll(() => {
  for (const name of ['GATEWAY_ENABLED', 'GATEWAY_RATE_PER_SECOND', 'GATEWAY_BURST', 'GATEWAY_AUTH_FAILURES']) delete process.env[name]
})

test('a key past its burst answers 429 with Retry-After, uncharged', async () => {
  const { key } = await issueTestKey({ units: 100 })
  const statuses: number[] = []
  let limited: any
  for (let i = 0; i < 5; i++) {
    const response = await GET('/odata/v4/chaina-odata/Blocks?$top=1', bearer(key))
    statuses.push(response.status)
    if (response.status === 429) limited = response
  }
  expect(statuses).toEqual([200, 200, 200, 429, 429])
  expect(limited.data.error.code).toBe('RATE_LIMITED')
  expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1)
  expect(limited.headers['x-access-units-charged']).toBe('0')
  expect(limited.headers['x-access-units-left']).toBe('97')
  await new Promise(resolve => setTimeout(resolve, Number(limited.headers['retry-after']) * 1000))
  expect((await GET('/me', bearer(key))).data.unitsLeft).toBe(97)
})

test('the gateway\'s own routes take from the same bucket, uncharged', async () => {
  const { key } = await issueTestKey({ units: 100 })
  const statuses: number[] = []
  let limited: any
  for (let i = 0; i < 5; i++) {
    const response = await GET('/me/ledger', bearer(key))
    statuses.push(response.status)
    if (response.status === 429) limited = response
  }
  expect(statuses).toEqual([200, 200, 200, 429, 429])
  expect([limited.headers['x-access-units-charged'], limited.headers['x-access-units-left']]).toEqual(['0', '100'])
})

test('an address that failed too often is refused only its failing attempts: every valid key from it still passes', async () => {
  const known = await issueTestKey({ units: 100 })
  const unseen = await issueTestKey({ units: 100 })
  expect((await GET('/odata/v4/chaina-odata/Blocks?$top=1', bearer(known.key))).status).toBe(200)
  const statuses: number[] = []
  let limited: any
  for (let i = 0; i < 7; i++) {
    const response = await GET('/odata/v4/chaina-odata/Blocks', bearer('cag_nope'))
    statuses.push(response.status)
    if (response.status === 429) limited = response
  }
  expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429])
  expect(limited.data.error.code).toBe('TOO_MANY_FAILED_ATTEMPTS')
  expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
  expect([limited.headers['x-access-units-charged'], limited.headers['x-access-units-left']]).toEqual(['0', undefined])
  expect((await GET('/me', bearer('cag_nope'))).status).toBe(429)
  expect((await GET('/odata/v4/chaina-odata/Blocks?$top=1', bearer(unseen.key))).status).toBe(200)
  expect((await GET('/odata/v4/chaina-odata/Blocks?$top=1', bearer(known.key))).status).toBe(200)
  expect((await GET('/me', bearer(unseen.key))).status).toBe(200)
})

describe('the limiters themselves', () => {
  test('a token bucket refills at its rate', () => {
    const limit = new KeyRateLimit()
    expect(limit.take('k', 2, 2, 0)).toEqual({ ok: true })
    expect(limit.take('k', 2, 2, 0)).toEqual({ ok: true })
    expect(limit.take('k', 2, 2, 0)).toEqual({ ok: false, retryAfterS: 1 })
    expect(limit.take('k', 2, 2, 500)).toEqual({ ok: true })
  })

  test('full, a token bucket map forgets the least recently seen keys, never all of them', () => {
    const limit = new KeyRateLimit(3)
    for (const key of ['a', 'b', 'c', 'd']) expect(limit.take(key, 1, 1, 0)).toEqual({ ok: true })
    expect(['b', 'c', 'd'].map(key => limit.take(key, 1, 1, 0).ok)).toEqual([false, false, false])
  })

  test('each of N instances takes its share of a bucket: rate/N and burst/N, at least one call', () => {
    const limit = new KeyRateLimit()
    expect([0, 0, 0, 0].map(now => limit.take('k', 2, 6, now, 2).ok)).toEqual([true, true, true, false])
    expect(limit.take('k', 2, 6, 1000, 2)).toEqual({ ok: true })
    expect([0, 0].map(now => limit.take('small', 1, 1, now, 4).ok)).toEqual([true, false])
  })

  test('a failure window counts in the database: past its limit it answers the seconds to wait, and opens again when it ends', async () => {
    const window = new FailureWindow('test-a', 2, 10)
    expect([await window.fail('a', 0), await window.fail('a', 1)]).toEqual([undefined, undefined])
    expect(await window.fail('a', 2)).toBe(10)
    expect(await window.fail('b', 2)).toBeUndefined()
    expect(await window.fail('a', 10_001)).toBeUndefined()
  })

  test('windows of one scope in several instances count together; other scopes apart', async () => {
    const [one, two, other] = [new FailureWindow('test-b', 3, 60), new FailureWindow('test-b', 3, 60), new FailureWindow('test-c', 3, 60)]
    const now = Date.now()
    expect([await one.fail('x', now), await two.fail('x', now), await one.fail('x', now), await other.fail('x', now)]).toEqual([undefined, undefined, undefined, undefined])
    expect(await two.fail('x', now)).toBe(60)
    expect(await one.fail('x', now)).toBe(60)
    expect(await other.fail('x', now)).toBeUndefined()
  })

  test('concurrent failures each count once', async () => {
    const windows = Array.from({ length: 4 }, () => new FailureWindow('test-d', 10, 60))
    const now = Date.now()
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => windows[i % 4].fail('y', now)))
    expect(answers.filter(answer => answer === undefined)).toHaveLength(10)
  })
})
