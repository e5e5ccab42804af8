import cds from '@sap/cds'
import { runningDevnet } from '../support/chain-a.ts'
import { balanceOf, issueTestKey, ledgerOf, rawRequest } from '../support/gateway.ts'

process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_RATE_PER_SECOND = '100000'
process.env.GATEWAY_BURST = '100000'
const app: { url: string } = cds.test(__dirname + '/../..') as any

let key: { id: string; key: string }
beforeAll(async () => {
  runningDevnet()
  key = await issueTestKey({ units: 100 })
})
afterAll(() => {
  delete process.env.GATEWAY_ENABLED
  delete process.env.GATEWAY_RATE_PER_SECOND
  delete process.env.GATEWAY_BURST
})

const S = '/odata/v4/chaina-odata'

/** Every known bypass class, sent byte for byte with a valid key: each must be 400 or 403 and cost nothing. */
const cases: [string, string, string, Record<string, string>?, string?][] = [
  ['dot segment', 'GET', `${S}/../../admin`],
  ['dot segment to a free route', 'GET', `/me/../odata/v4/chaina-odata/Blocks`],
  ['encoded dot segment', 'GET', `${S}/%2e%2e/%2e%2e/admin`],
  ['double-encoded dot segment', 'GET', `${S}/%252e%252e/admin`],
  ['overlong UTF-8 dot', 'GET', `${S}/%c0%ae%c0%ae/admin`],
  ['fullwidth dots', 'GET', `${S}/%EF%BC%8E%EF%BC%8E/admin`],
  ['encoded slash', 'GET', `/odata/v4%2fchaina-odata/Blocks`],
  ['encoded backslash', 'GET', `${S}%5c..%5cadmin`],
  ['backslash', 'GET', `/odata\\v4\\chaina-odata\\Blocks`],
  ['duplicate slashes', 'GET', `/odata//v4/chaina-odata/Blocks`],
  ['upper-case prefix', 'GET', `/ODATA/v4/chaina-odata/Blocks`],
  ['upper-case service', 'GET', `/odata/v4/CHAINA-ODATA/Blocks`],
  ['lower-case entity set', 'GET', `${S}/blocks`],
  ['trailing dot', 'GET', `${S}./Blocks`],
  ['trailing space', 'GET', `${S}/Blocks%20`],
  ['NUL', 'GET', `${S}/Blocks%00`],
  ['matrix parameter', 'GET', `${S};v=1/Blocks`],
  ['dot-dot-semicolon', 'GET', `${S}/..;/admin`],
  ['encoded question mark', 'GET', `${S}/Blocks%3f$top=1`],
  ['encoded hash', 'GET', `${S}/Blocks%23`],
  ['absolute-form target', 'GET', `http://localhost/odata/v4/chaina-odata/Blocks`],
  ['method override header', 'GET', `${S}/Blocks`, { 'X-HTTP-Method-Override': 'DELETE' }],
  ['URL rewrite header', 'GET', `${S}/Blocks`, { 'X-Original-URL': '/api/v1/admin' }],
  ['rewrite header', 'GET', `${S}/Blocks`, { 'X-Rewrite-URL': '/api/v1/admin' }],
  ['admin route', 'GET', `/api/v1/admin`],
  ['unknown route', 'GET', `/odata/v4/chaina-admin/Keys`],
  ['write to an entity set', 'DELETE', `${S}/Blocks('${'ab'.repeat(32)}')`],
  ['patch an entity', 'PATCH', `${S}/Transactions('${'ab'.repeat(32)}')`, { 'Content-Type': 'application/json' }, '{"fee":"1"}'],
  ['$batch with a multipart body naming a closed route', 'POST', `${S}/$batch`, { 'Content-Type': 'multipart/mixed; boundary=b' },
    '--b\r\nContent-Type: application/http\r\n\r\nGET /api/v1/admin HTTP/1.1\r\n\r\n--b--\r\n'],
  ['$batch with a JSON body naming a closed route', 'POST', `${S}/$batch`, { 'Content-Type': 'application/json' },
    JSON.stringify({ requests: [{ id: '1', method: 'GET', url: '/odata/v4/chaina-sign/SignWithHsm' }] })],
]

describe('path bypass classes through the gateway: 400 or 403, nothing charged, nothing handled', () => {
  test.each(cases)('%s', async (_name, method, target, headers = {}, body = '') => {
    const before = await balanceOf(key.id)
    const entries = (await ledgerOf(key.id)).length
    const response = await rawRequest(app.url, method, target, { Authorization: `Bearer ${key.key}`, ...headers }, body)
    expect(JSON.parse(response.body).error.code).toMatch(/^[A-Z_]+$/)
    expect([400, 403]).toContain(response.status)
    expect(response.headers['x-access-units-charged']).toBe('0')
    expect(await balanceOf(key.id)).toBe(before)
    expect((await ledgerOf(key.id)).length).toBe(entries)
  })

  test('the same call, well-formed, is forwarded and charged (the cases above are refused for their form only)', async () => {
    const response = await rawRequest(app.url, 'GET', `${S}/Blocks?$top=1`, { Authorization: `Bearer ${key.key}` })
    expect(JSON.parse(response.body).value).toHaveLength(1)
    expect(response.status).toBe(200)
    expect(response.headers['x-access-units-charged']).toBe('1')
  })
})
