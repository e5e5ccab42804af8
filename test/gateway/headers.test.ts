import cds from '@sap/cds'
import { runningDevnet } from '../support/chain-a.ts'
import { balanceOf, bearer, issueTestKey } from '../support/gateway.ts'
import { revokeGrant } from '../../srv/gateway/accounts.ts'
import * as ledger from '../../srv/gateway/ledger.ts'

/**
 * The units headers: every answer of the hosted gateway says what it charged
 * (`x-access-units-charged`, 0 unless a metered call succeeded), and every answer to a known key
 * says what the key has left (`x-access-units-left`). An answer that knows no key (a refused
 * path, a missing or invalid key, a free route) says only that it charged nothing.
 */
process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_RATE_PER_SECOND = '100000'
process.env.GATEWAY_BURST = '100000'
const { GET, POST, DELETE, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true

const S = '/odata/v4/chaina-odata'

beforeAll(() => runningDevnet())
afterAll(() => {
  for (const name of ['GATEWAY_ENABLED', 'GATEWAY_RATE_PER_SECOND', 'GATEWAY_BURST']) delete process.env[name]
})

const call = (method: string, path: string, options: object) =>
  method === 'POST' ? POST(path, {}, options) : method === 'DELETE' ? DELETE(path, options) : GET(path, options)

const units = (response: { headers: Record<string, unknown> }) => [response.headers['x-access-units-charged'], response.headers['x-access-units-left']]

describe('answers that know no key say only that they charged nothing', () => {
  test.each([
    ['an ambiguous path (400)', 'GET', `${S}/..%2fBlocks`, {}, 400],
    ['a route not forwarded (403)', 'GET', '/nowhere', {}, 403],
    ['$batch (403)', 'POST', `${S}/$batch`, {}, 403],
    ['a method a gateway route does not answer (405)', 'DELETE', '/me', {}, 405],
    ['a missing key (401)', 'GET', `${S}/Blocks`, {}, 401],
    ['a made-up key (401)', 'GET', `${S}/Blocks`, bearer('cag_nope'), 401],
    ['/health', 'GET', '/health', {}, 200],
    ['/prices', 'GET', '/prices', {}, 200],
    ['$metadata', 'GET', `${S}/$metadata`, {}, 200],
  ])('%s', async (_name, method, path, options, status) => {
    const response = await call(method, path, options)
    expect(response.status).toBe(status)
    expect(units(response)).toEqual(['0', undefined])
  })
})

describe('answers to a known key say what it has left', () => {
  test('a metered call: its price and the balance after it', async () => {
    const { id, key } = await issueTestKey({ units: 40 })
    const response = await GET(`${S}/Blocks?$top=1`, bearer(key))
    expect(response.status).toBe(200)
    expect(units(response)).toEqual(['1', '39'])
    expect(await balanceOf(id)).toBe(39)
  })

  test.each([
    ['/me', 'GET'],
    ['/me/ledger', 'GET'],
    ['/me/rotate', 'POST'],
    ['/me/revoke', 'POST'],
  ])('%s: nothing charged, the balance left', async (path, method) => {
    const { key } = await issueTestKey({ units: 40 })
    const response = await call(method, path, bearer(key))
    expect(response.status).toBe(200)
    expect(units(response)).toEqual(['0', '40'])
  })

  test('a key without a grant for the product (403): nothing charged, the balance left', async () => {
    const { id, key } = await issueTestKey({ units: 40 })
    const { ProductGrants } = cds.entities('gateway')
    const grant = await cds.tx(() => SELECT.one.from(ProductGrants).columns('ID').where({ apiKey_ID: id, product: 'chain-a' }))
    await revokeGrant(grant.ID)
    const response = await GET(`${S}/Blocks?$top=1`, bearer(key))
    expect(response.data.error.code).toBe('PRODUCT_NOT_GRANTED')
    expect(units(response)).toEqual(['0', '40'])
  })

  test('a key whose units are short (402): nothing charged, the balance left', async () => {
    const { key } = await issueTestKey({ units: 0 })
    const response = await GET(`${S}/Blocks?$top=1`, bearer(key))
    expect(response.data.error.code).toBe('UNITS_EXHAUSTED')
    expect(units(response)).toEqual(['0', '0'])
  })
})

test('a failure inside the gateway answers 500 and still says it charged nothing; nothing is reserved', async () => {
  const { id, key } = await issueTestKey({ units: 40 })
  const reserve = jest.spyOn(ledger, 'reserve').mockRejectedValueOnce(new Error('the database went away'))
  try {
    const response = await GET(`${S}/Blocks?$top=1`, bearer(key))
    expect(response.data.error.code).toBe('INTERNAL_ERROR')
    expect(response.status).toBe(500)
    expect(units(response)).toEqual(['0', undefined])
  } finally {
    reserve.mockRestore()
  }
  expect(await balanceOf(id)).toBe(40)
})
