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

test('braces inside quoted literals are data; balanced shallow braces pass', () => {
  expect(bracesWithinBounds("$filter=name eq '{{{{{{{{{{{{'")).toBe(true)
  expect(bracesWithinBounds("$filter=name eq 'it''s {'")).toBe(true)
  expect(bracesWithinBounds('{"a":{"b":1}}')).toBe(true)
  expect(bracesWithinBounds('{"a":{"b":1}')).toBe(false)
  expect(bracesWithinBounds('}{')).toBe(false)
})
