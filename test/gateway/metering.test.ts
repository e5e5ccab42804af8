import cds from '@sap/cds'
import { runningDevnet } from '../support/chain-a.ts'
import { balanceOf, bearer, issueTestKey, ledgerOf, ledgerSum, settled } from '../support/gateway.ts'
import { revokeKey } from '../../srv/gateway/accounts.ts'
import * as ledger from '../../srv/gateway/ledger.ts'

process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_RATE_PER_SECOND = '100000'
process.env.GATEWAY_BURST = '100000'
const { GET, POST, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true

const S = '/odata/v4/chaina-odata'
let devnet: ReturnType<typeof runningDevnet>
beforeAll(() => {
  devnet = runningDevnet()
})
afterAll(() => {
  delete process.env.GATEWAY_ENABLED
  delete process.env.GATEWAY_RATE_PER_SECOND
  delete process.env.GATEWAY_BURST
})

describe('a metered call', () => {
  test('is charged its price and says so in headers; the ledger records the committed charge', async () => {
    const { id, key } = await issueTestKey({ units: 50 })
    const response = await GET(`${S}/Blocks?$top=1`, bearer(key))
    expect(response.data.value).toHaveLength(1)
    expect(response.headers['x-access-units-charged']).toBe('1')
    expect(response.headers['x-access-units-left']).toBe('49')
    await settled(id)
    const charge = (await ledgerOf(id)).find(entry => entry.kind === 'charge')
    expect(charge).toMatchObject({ units: -1, state: 'committed', routeClass: 'entity-read', route: `GET ${S}/Blocks`, outcome: '200', requestId: response.headers['x-request-id'] })
    expect(await balanceOf(id)).toBe(49)
  })

  test('an action costs read-action', async () => {
    const { key } = await issueTestKey({ units: 50 })
    const wallet = devnet.wallets()[0]
    const response = await POST(`${S}/GetAddressByBech32`, { address: wallet.address }, bearer(key))
    expect(response.data.address).toBe(wallet.address)
    expect(response.headers['x-access-units-charged']).toBe('2')
  })

  test('rejected by the service (4xx): refunded, units unchanged, ledger shows the charge and its refund', async () => {
    const { id, key } = await issueTestKey({ units: 50 })
    const response = await GET(`${S}/Transactions('${'ab'.repeat(32)}')`, bearer(key))
    expect(response.data.error.code).toBe('TRANSACTION_NOT_FOUND')
    expect(response.headers['x-access-units-charged']).toBe('0')
    expect(response.headers['x-access-units-left']).toBe('50')
    expect(await balanceOf(id)).toBe(50)
    const entries = await ledgerOf(id)
    expect(entries.map(entry => [entry.kind, entry.units, entry.state])).toEqual([['credit', 50, 'posted'], ['charge', -1, 'refunded'], ['refund', 1, 'posted']])
    expect(ledgerSum(entries)).toBe(50)
  })

  test('a call with a path longer than the ledger stores is answered 4xx and refunded; the ledger keeps the route cut to 500 characters', async () => {
    const { id, key } = await issueTestKey({ units: 50 })
    const response = await GET(`${S}/Transactions('${'a'.repeat(3000)}')`, bearer(key))
    expect(response.data.error.code).toMatch(/^[A-Z_]+$/)
    expect(response.status).toBeGreaterThanOrEqual(400)
    expect(response.status).toBeLessThan(500)
    expect(await balanceOf(id)).toBe(50)
    const charge = (await ledgerOf(id)).find(entry => entry.kind === 'charge')
    expect(charge.route).toHaveLength(500)
    expect(charge.route.startsWith(`GET ${S}/Transactions('aaa`)).toBe(true)
  })

  test('exhausted units answer 402 with the price and the units left', async () => {
    const { id, key } = await issueTestKey({ units: 1 })
    const response = await POST(`${S}/GetAddressByBech32`, { address: devnet.wallets()[0].address }, bearer(key))
    expect(response.data.error).toMatchObject({ code: 'UNITS_EXHAUSTED', price: 2, unitsLeft: 1, routeClass: 'read-action' })
    expect(response.status).toBe(402)
    expect(response.headers['x-access-units-charged']).toBe('0')
    expect(response.headers['x-access-units-left']).toBe('1')
    expect(await balanceOf(id)).toBe(1)
  })
})

describe('keys', () => {
  test('a missing key answers 401 KEY_MISSING', async () => {
    const response = await GET(`${S}/Blocks`)
    expect(response.data.error.code).toBe('KEY_MISSING')
    expect(response.status).toBe(401)
    expect(response.headers['www-authenticate']).toMatch(/^Bearer/)
  })

  test('unknown and revoked keys answer the same 401 body', async () => {
    const { id, key } = await issueTestKey()
    await revokeKey(id)
    const revoked = await GET(`${S}/Blocks`, bearer(key))
    const unknown = await GET(`${S}/Blocks`, bearer('cag_' + key.slice(4, 10) + 'x'.repeat(key.length - 10)))
    const forged = await GET(`${S}/Blocks`, bearer('cag_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'))
    expect(revoked.data).toEqual(unknown.data)
    expect(revoked.data).toEqual(forged.data)
    expect(revoked.data.error.code).toBe('KEY_INVALID')
    expect([revoked.status, unknown.status, forged.status]).toEqual([401, 401, 401])
  })

  test('an expired key answers 401 KEY_EXPIRED', async () => {
    const { id, key } = await issueTestKey()
    const { ApiKeys } = cds.entities('gateway')
    await cds.tx(() => UPDATE(ApiKeys, id).set({ validUntil: new Date(Date.now() - 1000).toISOString() }))
    const response = await GET(`${S}/Blocks`, bearer(key))
    expect(response.data.error.code).toBe('KEY_EXPIRED')
    expect(response.status).toBe(401)
  })

  test('the key is accepted in x-agent-token too', async () => {
    const { key } = await issueTestKey()
    const response = await GET(`${S}/Blocks?$top=1`, { headers: { 'x-agent-token': key } })
    expect(response.status).toBe(200)
    expect(response.headers['x-access-units-charged']).toBe('1')
  })
})

describe('free routes', () => {
  test('$metadata and the service document need no key and cost nothing', async () => {
    const metadata = await GET(`${S}/$metadata`)
    const serviceDocument = await GET(`${S}/`)
    expect(metadata.data).toContain('Blocks')
    expect(serviceDocument.data.value.map((set: any) => set.name)).toContain('Transactions')
    expect([metadata.status, serviceDocument.status]).toEqual([200, 200])
    expect(metadata.headers['x-access-units-charged']).toBe('0')
  })

  test('/prices and /health need no key', async () => {
    const prices = await GET('/prices')
    const health = await GET('/health')
    expect(prices.data.value).toEqual(expect.arrayContaining([{ routeClass: 'entity-read', units: 1, description: expect.any(String) }]))
    expect(prices.data.rules.length).toBeGreaterThan(0)
    expect(health.data.status).toBe('UP')
  })

  test('/me shows plan, units left, validity and last calls, and costs nothing', async () => {
    const { id, key } = await issueTestKey({ units: 30, plan: 'trial' })
    await GET(`${S}/Blocks?$top=1`, bearer(key))
    await GET(`${S}/Epochs(0)`, bearer(key))
    await settled(id)
    const me = await GET('/me', bearer(key))
    expect(me.data).toMatchObject({ id, plan: 'trial', unitsLeft: 28, status: 'active', validUntil: expect.any(String) })
    expect(me.data.lastCalls.map((call: any) => call.route)).toEqual([`GET ${S}/Epochs(0)`, `GET ${S}/Blocks`])
    expect(me.headers['x-access-units-charged']).toBe('0')
    expect(await balanceOf(id)).toBe(28)
  })

  test('/me/ledger pages newest first with a cursor', async () => {
    const { id, key } = await issueTestKey({ units: 30 })
    for (let i = 0; i < 4; i++) await GET(`${S}/Blocks?$top=1`, bearer(key))
    await settled(id)
    const first = await GET('/me/ledger?limit=3', bearer(key))
    const second = await GET(`/me/ledger?limit=3&before=${first.data.next}`, bearer(key))
    const all = [...first.data.value, ...second.data.value]
    expect(all.map((entry: any) => entry.kind)).toEqual(['charge', 'charge', 'charge', 'charge', 'credit'])
    expect(second.data.next).toBeNull()
    const times = all.map((entry: any) => entry.createdAt)
    expect(times).toEqual([...times].sort().reverse())
  })

  test('/me/ledger refuses a bad cursor or limit with 400', async () => {
    const { key } = await issueTestKey()
    const badLimit = await GET('/me/ledger?limit=0', bearer(key))
    const badCursor = await GET('/me/ledger?before=zzz', bearer(key))
    const dateLikeCursor = await GET(`/me/ledger?before=${Buffer.from('1|x').toString('base64url')}`, bearer(key))
    expect([badLimit.data.error.code, badCursor.data.error.code, dateLikeCursor.data.error.code]).toEqual(['INVALID_LIMIT', 'INVALID_CURSOR', 'INVALID_CURSOR'])
  })
})

describe('/me/usage', () => {
  const today = () => new Date().toISOString().slice(0, 10)

  test('sums committed charges and credits per UTC day, every day present, oldest first; a refunded call is not used', async () => {
    const { id, key } = await issueTestKey({ units: 40 })
    for (let i = 0; i < 3; i++) await GET(`${S}/Blocks?$top=1`, bearer(key))
    await GET(`${S}/Transactions('${'ab'.repeat(32)}')`, bearer(key))
    await settled(id)
    const usage = await GET('/me/usage?days=7', bearer(key))
    expect(usage.status).toBe(200)
    expect(usage.headers['x-access-units-charged']).toBe('0')
    const days = usage.data.days
    expect(days).toHaveLength(7)
    expect(days.map((day: any) => day.day)).toEqual([...days.map((day: any) => day.day)].sort())
    expect(days.at(-1)).toEqual({ day: today(), used: 3, credited: 40, calls: 3 })
    expect(days.slice(0, -1).every((day: any) => day.used === 0 && day.credited === 0 && day.calls === 0)).toBe(true)
  })

  test('a charge not yet committed (the call in flight, or answered a moment ago) is used already, as the units left say; refunded, it is not', async () => {
    const { id, key } = await issueTestKey({ units: 10 })
    const { ApiKeys } = cds.entities('gateway')
    const { secretHash } = await cds.tx(() => SELECT.one.from(ApiKeys).columns('secretHash').where({ ID: id }))
    await ledger.reserve({ keyId: id, secretHash, version: 0, units: 3, routeClass: 'entity-read', route: 'GET /in-flight', routeFamily: 'other', requestId: 'in-flight-request' })
    const pending = await GET('/me/usage?days=1', bearer(key))
    expect(pending.data.days).toEqual([{ day: today(), used: 3, credited: 10, calls: 1 }])
    expect((await GET('/me', bearer(key))).data.unitsLeft).toBe(7)
    await ledger.refund('in-flight-request', '502')
    expect((await GET('/me/usage?days=1', bearer(key))).data.days).toEqual([{ day: today(), used: 0, credited: 10, calls: 0 }])
  })

  test('counts only the caller\'s own key', async () => {
    const mine = await issueTestKey({ units: 10 })
    const other = await issueTestKey({ units: 10 })
    await GET(`${S}/Blocks?$top=1`, bearer(other.key))
    await settled(other.id)
    const usage = await GET('/me/usage?days=1', bearer(mine.key))
    expect(usage.data.days).toEqual([{ day: today(), used: 0, credited: 10, calls: 0 }])
  })

  test('refuses days outside 1..366 with 400 INVALID_DAYS, and answers 401 without a key', async () => {
    const { key } = await issueTestKey()
    const answers = await Promise.all(['0', '367', '1.5', 'x'].map(days => GET(`/me/usage?days=${days}`, bearer(key))))
    expect(answers.map((answer: any) => [answer.status, answer.data.error.code])).toEqual(Array(4).fill([400, 'INVALID_DAYS']))
    expect((await GET('/me/usage')).status).toBe(401)
  })
})

describe('rotation and revocation', () => {
  test('rotation gives a new secret on the same key: units and ledger stay, the old secret answers 401 at once', async () => {
    const { id, key } = await issueTestKey({ units: 20 })
    await GET(`${S}/Blocks?$top=1`, bearer(key))
    const rotated = await POST('/me/rotate', {}, bearer(key))
    // The new secret is shown once, with its client configuration.
    expect(rotated.data).toMatchObject({ id, key: expect.stringMatching(/^cag_/), unitsLeft: 19, configuration: { mcpServers: { 'chain-a': expect.any(Object), 'chain-b': expect.any(Object) } } })
    expect(rotated.data.configuration.mcpServers['chain-a'].env.CHAIN_ACCESS_API_KEY).toBe(rotated.data.key)
    const old = await GET(`${S}/Blocks?$top=1`, bearer(key))
    const fresh = await GET('/me', bearer(rotated.data.key))
    expect(old.status).toBe(401)
    expect(fresh.data).toMatchObject({ id, unitsLeft: 19 })
  })

  test('revocation revokes the key and both product grants', async () => {
    const { id, key } = await issueTestKey()
    const revoked = await POST('/me/revoke', {}, bearer(key))
    expect(revoked.data).toEqual({ id, status: 'revoked' })
    const after = await GET(`${S}/Blocks`, bearer(key))
    expect(after.status).toBe(401)
    const { ProductGrants } = cds.entities('gateway')
    const grants = await cds.tx(() => SELECT.from(ProductGrants).columns('product', 'status').where({ apiKey_ID: id }).orderBy('product'))
    expect(grants).toEqual([{ product: 'chain-a', status: 'revoked' }, { product: 'chain-b', status: 'revoked' }])
  })
})
