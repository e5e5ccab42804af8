import cds from '@sap/cds'
import { bracesWithinBounds, MAX_BRACE_DEPTH } from '../../srv/lib/http-safety.ts'
import { rawRequest } from '../support/gateway.ts'

/** What is refused before anything parses a request, with the hosted gateway on. */
process.env.GATEWAY_ENABLED = 'true'
const app: { url: string } = cds.test(__dirname + '/../..') as any
afterAll(() => {
  delete process.env.GATEWAY_ENABLED
})

const S = '/odata/v4/chaina-odata'

test.each([
  ['unclosed braces in $filter (the OData parser takes twice as long for each)', `${S}/Blocks?$filter=hash%20eq%20${'%7B'.repeat(40)}`, 'INVALID_URL'],
  ['unclosed braces inside $expand', `${S}/Blocks?$expand=transactions($filter=hash%20eq%20${'%7B'.repeat(40)})`, 'INVALID_URL'],
  ['braces nested too deep', `${S}/Blocks?$filter=hash%20eq%20${'%7B'.repeat(MAX_BRACE_DEPTH + 1)}${'%7D'.repeat(MAX_BRACE_DEPTH + 1)}`, 'INVALID_URL'],
  ['a NUL in the query', `${S}/Blocks?$filter=hash%20eq%20'a%00b'`, 'INVALID_CHARACTER'],
])('%s: 400 at once, nothing charged', async (_name, target, code) => {
  const response = await rawRequest(app.url, 'GET', target, { Authorization: 'Bearer cag_none' })
  expect(JSON.parse(response.body).error.code).toBe(code)
  expect(response.status).toBe(400)
  expect(response.headers['x-access-units-charged']).toBe('0')
  expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
})

test('a request the HTTP parser refuses is answered as JSON with a code, uncharged', async () => {
  const response = await rawRequest(app.url, 'GET', S, { 'x-big': 'a'.repeat(20_000) })
  expect(JSON.parse(response.body).error.code).toBe('HEADERS_TOO_LARGE')
  expect(response.status).toBe(431)
  expect(response.headers['x-access-units-charged']).toBe('0')
})

/** Braces a quote hid from the count, with more of them than the parser gets through in a day. */
const HIDDEN_OPEN_BRACES = 40

test.each([
  ['a lone quote in $search before them (the parser reads it as a search term)', `$search='&$filter=toupper(address) eq ${'{"a":'.repeat(HIDDEN_OPEN_BRACES)}`],
  ["a quote inside a JSON string before them (the parser's JSON rule knows no quotes)", `$filter=address eq {"k":"'"} and address eq ${'{'.repeat(HIDDEN_OPEN_BRACES)}'}`],
])('unclosed braces after %s are counted', (_name, query) => {
  expect(bracesWithinBounds(query)).toBe(false)
})

test('balanced shallow braces pass, in literals too; every brace counts', () => {
  expect(bracesWithinBounds(`$filter=requestJson eq '{"a":{"b":1}}'`)).toBe(true)
  expect(bracesWithinBounds('{"a":{"b":1}}')).toBe(true)
  expect(bracesWithinBounds("$filter=name eq 'it''s {'")).toBe(false)
  expect(bracesWithinBounds('{"a":{"b":1}')).toBe(false)
  expect(bracesWithinBounds('}{')).toBe(false)
})

test('a lone quote in $search does not let unclosed braces in $filter through: 400 at once', async () => {
  const braces = encodeURIComponent('{"a":'.repeat(MAX_BRACE_DEPTH + 4))
  const target = `/odata/v4/chaina-transaction/BuildInputs?$search=%27&$filter=toupper(address)%20eq%20${braces}`
  const response = await rawRequest(app.url, 'GET', target, { Authorization: 'Bearer cag_none' })
  expect(response.status).toBe(400)
  expect(JSON.parse(response.body).error).toMatchObject({ code: 'INVALID_URL', message: expect.stringContaining('curly braces') })
  expect(response.headers['x-access-units-charged']).toBe('0')
})
