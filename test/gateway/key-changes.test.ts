import cds from '@sap/cds'
import { runningDevnet } from '../support/chain-a.ts'
import { balanceOf, bearer, issueTestKey } from '../support/gateway.ts'
import { revokeGrant, revokeKey, rotateKey } from '../../srv/gateway/accounts.ts'

/**
 * A key changed from outside this gateway instance (the operator's command line, another
 * instance) is refused at once here, although this instance has just cached it: the cache never
 * decides alone.
 */
process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_RATE_PER_SECOND = '100000'
process.env.GATEWAY_BURST = '100000'
const { GET, POST, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true

const BLOCKS = '/odata/v4/chaina-odata/Blocks?$top=1'

beforeAll(() => runningDevnet())
afterAll(() => {
  for (const name of ['GATEWAY_ENABLED', 'GATEWAY_RATE_PER_SECOND', 'GATEWAY_BURST']) delete process.env[name]
})

/** A key this instance has just seen, so it is in the key cache. */
async function cachedKey() {
  const issued = await issueTestKey({ units: 100 })
  expect((await GET(BLOCKS, bearer(issued.key))).status).toBe(200)
  return issued
}

test('rotated elsewhere: the old secret is refused at once on every route, and cannot rotate the key again', async () => {
  const { id, key } = await cachedKey()
  const rotated = (await rotateKey(id))!
  const [read, me, rotate, revoke] = await Promise.all([
    GET(BLOCKS, bearer(key)), GET('/me', bearer(key)), POST('/me/rotate', {}, bearer(key)), POST('/me/revoke', {}, bearer(key)),
  ])
  expect([read, me, rotate, revoke].map(response => [response.status, response.data.error?.code])).toEqual(Array(4).fill([401, 'KEY_INVALID']))
  expect(read.headers['x-access-units-charged']).toBe('0')
  expect((await GET(BLOCKS, bearer(rotated.key))).status).toBe(200)
  expect(await balanceOf(id)).toBe(98)
})

test('revoked elsewhere: refused at once', async () => {
  const { id, key } = await cachedKey()
  expect(await revokeKey(id)).toBe(true)
  const [read, me] = await Promise.all([GET(BLOCKS, bearer(key)), GET('/me/ledger', bearer(key))])
  expect([read.status, me.status]).toEqual([401, 401])
})

test('a grant revoked elsewhere stops the key reaching that product at once', async () => {
  const { id, key } = await cachedKey()
  const { ProductGrants } = cds.entities('gateway')
  const grant = await cds.tx(() => SELECT.one.from(ProductGrants).columns('ID').where({ apiKey_ID: id, product: 'chain-a' }))
  await revokeGrant(grant.ID)
  const response = await GET(BLOCKS, bearer(key))
  expect(response.data.error.code).toBe('PRODUCT_NOT_GRANTED')
  expect(response.status).toBe(403)
  expect(await balanceOf(id)).toBe(99)
})

test('a key whose rotation from its own route raced another rotation is refused, not rotated twice', async () => {
  const { key } = await cachedKey()
  const answers: { status: number; data: any }[] = await Promise.all([POST('/me/rotate', {}, bearer(key)), POST('/me/rotate', {}, bearer(key))])
  const statuses = answers.map(answer => answer.status).sort()
  expect(statuses).toEqual([200, 401])
  const winner = answers.find(answer => answer.status === 200)!.data.key
  expect((await GET(BLOCKS, bearer(winner))).status).toBe(200)
})
