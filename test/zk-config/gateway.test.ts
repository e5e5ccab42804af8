import cds from '@sap/cds'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { zkConfig } from '../../srv/chains/chain-b/config.ts'
import { balanceOf, issueTestKey, ledgerOf, rawRequest } from '../support/gateway.ts'

/** /zk-config through the hosted gateway: free and without a key; what the gateway refuses there, it refuses uncharged. */
process.env.GATEWAY_ENABLED = 'true'
const app: { url: string } = cds.test(__dirname + '/../..') as any

afterAll(() => {
  delete process.env.GATEWAY_ENABLED
})

const WASM = '/zk-config/field_membership/field_membership.wasm'
const wasmOnDisk = () => readFileSync(join(zkConfig().keysDir, 'field_membership', 'field_membership.wasm'))
const etagOf = (bytes: Buffer) => `"${createHash('sha256').update(bytes).digest('hex')}"`

describe('without any key', () => {
  test('the manifest: 200, charged 0', async () => {
    const response = await fetch(app.url + '/zk-config')
    expect((await response.json()).circuits).toHaveLength(4)
    expect(response.status).toBe(200)
    expect(response.headers.get('x-access-units-charged')).toBe('0')
  })

  test('a file: 200, the bytes on disk, charged 0', async () => {
    const response = await fetch(app.url + WASM)
    const bytes = Buffer.from(await response.arrayBuffer())
    expect(bytes.equals(wasmOnDisk())).toBe(true)
    expect(response.status).toBe(200)
    expect(response.headers.get('etag')).toBe(etagOf(wasmOnDisk()))
    expect(response.headers.get('x-access-units-charged')).toBe('0')
  })

  test('HEAD of a file: 200, charged 0', async () => {
    const response = await rawRequest(app.url, 'HEAD', WASM)
    expect(response.body).toBe('')
    expect(response.status).toBe(200)
    expect(response.headers).toMatchObject({ 'content-length': String(wasmOnDisk().length), 'x-access-units-charged': '0' })
  })

  test('If-None-Match with the ETag: 304, charged 0', async () => {
    const response = await rawRequest(app.url, 'GET', WASM, { 'if-none-match': etagOf(wasmOnDisk()) })
    expect(response.body).toBe('')
    expect(response.status).toBe(304)
    expect(response.headers['x-access-units-charged']).toBe('0')
  })
})

test('with a key: answered alike, nothing charged and nothing in its ledger', async () => {
  const key = await issueTestKey({ units: 10 })
  const entries = (await ledgerOf(key.id)).length
  const response = await fetch(app.url + WASM, { headers: { authorization: `Bearer ${key.key}` } })
  expect(Buffer.from(await response.arrayBuffer()).equals(wasmOnDisk())).toBe(true)
  expect(response.status).toBe(200)
  expect(response.headers.get('x-access-units-charged')).toBe('0')
  expect(await balanceOf(key.id)).toBe(10)
  expect(await ledgerOf(key.id)).toHaveLength(entries)
})

describe('refused or unknown, charged 0', () => {
  test.each([
    ['an unknown file', 'GET', '/zk-config/field_membership/field_membership.r1cs', 404, 'ZK_FILE_NOT_FOUND'],
    ['a dot segment', 'GET', '/zk-config/../package.json', 400, 'AMBIGUOUS_PATH'],
    ['an encoded dot segment', 'GET', '/zk-config/%2e%2e/package.json', 400, 'AMBIGUOUS_PATH'],
    ['a write', 'POST', WASM, 405, 'METHOD_NOT_ALLOWED'],
    ['a path that only starts like /zk-config', 'GET', '/zk-configs/field_membership/field_membership.wasm', 403, 'ROUTE_NOT_FORWARDED'],
  ])('%s: %s %s → %i %s', async (_name, method, target, status, code) => {
    const response = await rawRequest(app.url, method, target, method === 'POST' ? { 'content-type': 'application/json' } : {}, method === 'POST' ? '{}' : '')
    expect(JSON.parse(response.body).error.code).toBe(code)
    expect(response.status).toBe(status)
    expect(response.headers['x-access-units-charged']).toBe('0')
  })
})
