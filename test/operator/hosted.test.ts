import cds from '@sap/cds'
import { balanceOf, bearer, issueTestKey, ledgerOf, rawRequest } from '../support/gateway.ts'

/**
 * The operator service behind the hosted gateway: the operator signs in as CAP's auth says (the
 * mocked `alice` here), never with an API key or an agent grant: a key of any plan, on any spelling
 * of the path, is refused (403 OPERATOR_ONLY) and charged nothing. What an operator does to a key
 * holds at once for the key's next call.
 */
process.env.GATEWAY_ENABLED = 'true'
const app = cds.test(__dirname + '/../..') as any
const { GET, POST, PATCH, defaults } = app
defaults.validateStatus = () => true

afterAll(() => {
  delete process.env.GATEWAY_ENABLED
})

const OP = '/odata/v4/operator'
const alice = { auth: { username: 'alice', password: '' } }
const act = (id: string, action: string, body: object = {}) => POST(`${OP}/Keys(${id})/OperatorService.${action}`, body, alice)

test('the operator, signed in: 200 and the keys, charged nothing', async () => {
  const { data, status, headers } = await GET(`${OP}/Keys?$top=5`, alice)
  expect(data.value).toEqual(expect.any(Array))
  expect(status).toBe(200)
  expect(headers['x-access-units-charged']).toBe('0')
})

test('no identity at all: 401 from the operator login, not a key challenge', async () => {
  const { status } = await GET(`${OP}/Keys`)
  expect(status).toBe(401)
})

describe.each(['trial', 'standard', 'scale', 'operator'])('a key of plan %s', plan => {
  test.each([
    ['GET', `${OP}/Keys`],
    ['GET', `${OP}/$metadata`],
    ['GET', `${OP}/`],
    ['GET', `${OP}/AuditLog?$top=1`],
    ['POST', `${OP}/issueKey`],
    ['GET', '//odata/v4/operator/Keys'],
    ['GET', '/odata/v4/./operator/Keys'],
    ['GET', '/odata/v4/chaina-odata/../operator/Keys'],
    ['GET', '/odata/v4/%6Fperator/Keys'],
    ['GET', '/odata/v4/Operator/Keys'],
    ['GET', '/odata/v4/operator/Keys/'],
  ])('%s %s: 403 OPERATOR_ONLY, charged nothing', async (method, path) => {
    const key = await issueTestKey({ plan, units: 50 })
    for (const headers of [{ authorization: `Bearer ${key.key}` }, { 'x-agent-token': key.key }] as Record<string, string>[]) {
      const answer = await rawRequest(app.url, method, path, { ...headers, 'content-type': 'application/json' }, method === 'POST' ? '{"plan":"standard"}' : '')
      expect(JSON.parse(answer.body).error.code).toMatch(/^(OPERATOR_ONLY|ROUTE_NOT_FORWARDED|AMBIGUOUS_PATH)$/)
      expect(answer.status).toBeGreaterThanOrEqual(400)
      expect(answer.status).toBeLessThan(500)
      expect(answer.headers['x-access-units-charged']).toBe('0')
    }
    expect(await balanceOf(key.id)).toBe(50)
    expect((await ledgerOf(key.id)).map(entry => entry.kind)).toEqual(['credit'])
  })
})

test('an agent grant token beside the operator\'s login, or a made-up key with a wrong checksum: 403 OPERATOR_ONLY', async () => {
  for (const init of [{ ...alice, headers: { 'x-agent-token': 'cga_nothing' } }, { headers: { authorization: 'Bearer cag_made-up-key-with-a-wrong-checksum-000000000000000000' } }]) {
    const { data, status } = await GET(`${OP}/Keys`, init)
    expect(data.error.code).toBe('OPERATOR_ONLY')
    expect(status).toBe(403)
  }
})

test('the operator login on a metered route is no key: 401 there', async () => {
  const { status } = await GET('/odata/v4/chaina-odata/Blocks?$top=1', alice)
  expect(status).toBe(401)
})

describe('a key an operator acts on', () => {
  const me = (key: string) => GET('/me', bearer(key))

  test('suspended: its next call is 403 KEY_SUSPENDED, charged nothing and not a failed attempt; resumed, it calls again', async () => {
    const key = await issueTestKey({ units: 20 })
    expect((await me(key.key)).status).toBe(200)
    expect((await act(key.id, 'suspend', { reason: 'abuse report' })).status).toBe(200)
    for (let i = 0; i < 12; i++) {
      const { data, status } = await GET('/odata/v4/chaina-odata/Blocks?$top=1', bearer(key.key))
      expect(data.error.code).toBe('KEY_SUSPENDED')
      expect(status).toBe(403)
    }
    expect(await balanceOf(key.id)).toBe(20)
    expect((await act(key.id, 'resume')).status).toBe(200)
    const { status } = await GET('/odata/v4/chaina-odata/Blocks?$top=1', bearer(key.key))
    expect(status).toBe(200)
  })

  test('credited: /me shows the units at once', async () => {
    const key = await issueTestKey({ units: 20 })
    await act(key.id, 'credit', { units: 30, reason: 'support ticket 17' })
    expect(Number((await me(key.key)).data.unitsLeft)).toBe(50)
  })

  test('moved to another plan: /me names it at once', async () => {
    const key = await issueTestKey({ units: 20 })
    expect((await me(key.key)).data.plan).toBe('standard')
    await act(key.id, 'changePlan', { plan: 'trial' })
    expect((await me(key.key)).data.plan).toBe('trial')
  })

  test('expired by the operator: 401 KEY_EXPIRED at once', async () => {
    const key = await issueTestKey({ units: 20 })
    await act(key.id, 'setExpiry', { validUntil: new Date(Date.now() - 1000).toISOString() })
    const { data, status } = await GET('/odata/v4/chaina-odata/Blocks?$top=1', bearer(key.key))
    expect(data.error.code).toBe('KEY_EXPIRED')
    expect(status).toBe(401)
  })

  test('rotated: the old secret is refused, the new one works', async () => {
    const key = await issueTestKey({ units: 20 })
    const { data } = await act(key.id, 'rotate')
    expect((await me(key.key)).status).toBe(401)
    expect((await me(data.key)).status).toBe(200)
  })
})

test('a price the operator edits is what the next metered calls are charged, within seconds', async () => {
  const key = await issueTestKey({ units: 1000 })
  const charged = async () => Number((await GET('/odata/v4/chaina-odata/Blocks?$top=1', bearer(key.key))).headers['x-access-units-charged'])
  expect(await charged()).toBe(1)
  expect((await PATCH(`${OP}/Prices('entity-read')`, { units: 7 }, alice)).status).toBe(200)
  try {
    let seen = await charged()
    for (let waited = 0; seen !== 7 && waited < 20_000; waited += 250) {
      await new Promise(resolve => setTimeout(resolve, 250))
      seen = await charged()
    }
    expect(seen).toBe(7)
    const ledger = await ledgerOf(key.id)
    expect(ledger.filter(entry => entry.kind === 'charge').at(-1)).toMatchObject({ units: -7, routeClass: 'entity-read' })
  } finally {
    await PATCH(`${OP}/Prices('entity-read')`, { units: 1 }, alice)
  }
}, 60_000)

test('a voucher batch an operator creates redeems at /vouchers/redeem; once revoked, its code no longer does', async () => {
  const { data } = await POST(`${OP}/createVouchers`, { units: 40, count: 2, reason: 'hosted test' }, alice)
  const [kept, revoked] = data.vouchers as { ID: string; code: string }[]
  expect((await POST(`${OP}/Vouchers(${revoked.ID})/OperatorService.revoke`, {}, alice)).status).toBe(200)
  const redeemed = await POST('/vouchers/redeem', { code: kept.code })
  expect(redeemed.status).toBe(200)
  expect(await balanceOf(redeemed.data.id)).toBe(40)
  const refused = await POST('/vouchers/redeem', { code: revoked.code })
  expect([refused.status, refused.data.error.code]).toEqual([404, 'VOUCHER_NOT_REDEEMABLE'])
  const listed = (await GET(`${OP}/Vouchers(${kept.ID})?$expand=redemptions`, alice)).data
  expect(listed).toMatchObject({ redeemedCount: 1, redemptions: [{ apiKey_ID: redeemed.data.id }] })
})

test('a pack an operator adds is on /prices at once; deactivated, it is gone', async () => {
  expect((await POST(`${OP}/Packs`, { name: 'hosted-pack', units: 777, lovelace: 3000000, plan_name: 'standard' }, alice)).status).toBe(201)
  const packs = async () => (await GET('/prices')).data.packs.map((pack: { name: string }) => pack.name)
  expect(await packs()).toContain('hosted-pack')
  expect((await PATCH(`${OP}/Packs('hosted-pack')`, { active: false }, alice)).status).toBe(200)
  expect(await packs()).not.toContain('hosted-pack')
})
