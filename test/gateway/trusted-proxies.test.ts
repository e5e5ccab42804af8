import cds from '@sap/cds'
import { sendFrom } from '../support/gateway.ts'

/**
 * Limits behind a router: calls come from the router's address, each with the client's address in
 * X-Forwarded-For. With the router trusted, every per-client limit counts the forwarded client:
 * one client's bad keys block that client only, never the others behind the same router; an
 * untrusted peer's header is ignored, and hostile headers never answer 5xx or lift a limit.
 */

const ROUTER = '127.0.0.2'
const ELSEWHERE = '127.0.0.3'
process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_AUTH_FAILURES = '20'
process.env.GATEWAY_TRUSTED_PROXIES = `${ROUTER}, 127.0.0.4/32`
const app: { url: string } = cds.test(__dirname + '/../..') as any

afterAll(() => {
  for (const name of ['GATEWAY_ENABLED', 'GATEWAY_AUTH_FAILURES', 'GATEWAY_TRUSTED_PROXIES', 'GATEWAY_CLIENT_ADDRESS_HEADER']) delete process.env[name]
})

/** A call of GET /me with a bogus key, from `from` with these headers: its status and error code. */
async function bogus(from: string, headers: Record<string, string> = {}) {
  const answer = await sendFrom(app.url, 'GET', '/me', { from, token: 'cag_bogus', headers })
  return `${answer.status} ${answer.body?.error?.code}`
}

const INVALID = '401 KEY_INVALID'
const LIMITED = '429 TOO_MANY_FAILED_ATTEMPTS'

async function failTwenty(from: string, headers: () => Record<string, string>) {
  const answers = []
  for (let i = 0; i < 20; i++) answers.push(await bogus(from, headers()))
  expect(answers).toEqual(Array(20).fill(INVALID))
}

test('20 bogus keys from one client behind the router block that client, not another client behind the same router', async () => {
  let port = 40000
  // The router writes the client's address, a port of its own each time, after whatever the client sent.
  await failTwenty(ROUTER, () => ({ 'x-forwarded-for': `203.0.113.${port++ % 250}, 198.51.100.7:${port}` }))
  expect(await bogus(ROUTER, { 'x-forwarded-for': '198.51.100.7' })).toBe(LIMITED)
  expect(await bogus(ROUTER, { 'x-forwarded-for': '1.2.3.4, 198.51.100.7' })).toBe(LIMITED)
  // Through a second trusted hop, the same client is the same client.
  expect(await bogus(ROUTER, { 'x-forwarded-for': '198.51.100.7, 127.0.0.4' })).toBe(LIMITED)
  expect(await bogus(ROUTER, { 'x-forwarded-for': '198.51.100.8' })).toBe(INVALID)
  expect(await bogus(ROUTER, {})).toBe(INVALID)
})

test('an untrusted peer\'s X-Forwarded-For is ignored: its own address counts, whatever it claims', async () => {
  let n = 0
  await failTwenty(ELSEWHERE, () => ({ 'x-forwarded-for': `198.51.100.${100 + n++}` }))
  expect(await bogus(ELSEWHERE, { 'x-forwarded-for': '198.51.100.200' })).toBe(LIMITED)
  expect(await bogus(ELSEWHERE)).toBe(LIMITED)
  expect(await bogus(ROUTER, { 'x-forwarded-for': '198.51.100.200' })).toBe(INVALID)
})

test('a forwarded IPv6 address counts by its /64', async () => {
  let n = 1
  await failTwenty(ROUTER, () => ({ 'x-forwarded-for': `2001:db8:1:2::${(n++).toString(16)}` }))
  expect(await bogus(ROUTER, { 'x-forwarded-for': '2001:db8:1:2:ffff:ffff:ffff:ffff' })).toBe(LIMITED)
  expect(await bogus(ROUTER, { 'x-forwarded-for': '2001:db8:1:3::1' })).toBe(INVALID)
})

test('the Forwarded header, when it is the one configured', async () => {
  process.env.GATEWAY_CLIENT_ADDRESS_HEADER = 'forwarded'
  try {
    let n = 1
    await failTwenty(ROUTER, () => ({ forwarded: `for="[2001:db8:9:9::${(n++).toString(16)}]:443";proto=https` }))
    expect(await bogus(ROUTER, { forwarded: 'for="[2001:db8:9:9::abcd]"' })).toBe(LIMITED)
    expect(await bogus(ROUTER, { forwarded: 'for=198.51.100.77' })).toBe(INVALID)
    // Not the configured header: the router's own address counts, which has not failed.
    expect(await bogus(ROUTER, { 'x-forwarded-for': '2001:db8:9:9::1' })).toBe(INVALID)
  } finally {
    delete process.env.GATEWAY_CLIENT_ADDRESS_HEADER
  }
})

test('hostile forwarded headers never answer 5xx and never name a client of the sender\'s choosing', async () => {
  const hostile = [
    'not an address', ',,,,', '[::1', '999.1.1.1', '"1.2.3.4"', `${'1.1.1.1,'.repeat(1500)}`, 'for=1.2.3.4', '\u00ff\u00fe',
  ]
  for (const value of hostile) expect(await bogus(ROUTER, { 'x-forwarded-for': value })).toMatch(/^(401 KEY_INVALID|429 TOO_MANY_FAILED_ATTEMPTS)$/)
  // From an untrusted peer the header is not read at all: one address, one limit, however it varies.
  const answers = []
  for (let i = 0; i < 22; i++) answers.push(await bogus('127.0.0.5', { 'x-forwarded-for': `${'9.'.repeat(i)}garbage-${i}` }))
  expect(answers.slice(0, 20)).toEqual(Array(20).fill(INVALID))
  expect(answers.slice(20)).toEqual([LIMITED, LIMITED])
})
