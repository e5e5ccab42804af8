import cds from '@sap/cds'
import { balanceOf, ledgerOf, ledgerSum } from '../support/gateway.ts'

/**
 * The operator service, self-hosted: only the operator role reaches it; each key action works on
 * the key at once, moves units only with a ledger entry, answers a stable code for what cannot be
 * done, and records itself in the hash-chained audit with the operator, the key before and after,
 * and never a secret.
 */
const { GET, POST, PATCH, DELETE: DEL, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }
defaults.validateStatus = () => true

const OP = '/odata/v4/operator'
const bob = { auth: { username: 'bob', password: '' } }

let keyId: string
let secret: string

const issue = async (body: object = {}) => {
  const { data, status } = await POST(`${OP}/issueKey`, { plan: 'standard', units: 100, label: 'operator-test', ...body })
  expect(status).toBe(200)
  return data as { ID: string; key: string; unitsLeft: string; mcpConfiguration: string }
}

const act = (id: string, action: string, body: object = {}) => POST(`${OP}/Keys(${id})/OperatorService.${action}`, body)

const auditOf = async (id: string, kind = 'key') => (await GET(`${OP}/AuditLog?$filter=target eq '${kind}:${id}'&$orderby=sequence`)).data.value as any[]

beforeAll(async () => {
  const issued = await issue()
  expect(issued.unitsLeft).toBe('100')
  keyId = issued.ID
  secret = issued.key
})

describe('who reaches it', () => {
  test('an operator: the keys, ledger, plans, prices and audit', async () => {
    for (const set of ['Keys', 'LedgerEntries', 'Plans', 'Prices', 'AuditLog']) {
      const { data, status } = await GET(`${OP}/${set}?$top=1`)
      expect(data.value).toEqual(expect.any(Array))
      expect(status).toBe(200)
    }
  })

  test('a user without the operator role: 403, on reads and actions alike', async () => {
    expect((await GET(`${OP}/Keys`, bob)).status).toBe(403)
    expect((await POST(`${OP}/Keys(${keyId})/OperatorService.credit`, { units: 5, reason: 'x' }, bob)).status).toBe(403)
    expect((await POST(`${OP}/issueKey`, { plan: 'standard' }, bob)).status).toBe(403)
    expect(await balanceOf(keyId)).toBe(100)
  })

  test('no user: 401', async () => {
    expect((await GET(`${OP}/Keys`, { auth: undefined })).status).toBe(401)
  })
})

describe('keys', () => {
  test('issueKey: the key shown once with its MCP configuration; the key row never carries a secret', async () => {
    expect(secret).toMatch(/^cag_[A-Za-z0-9_-]{49}$/)
    const { data } = await GET(`${OP}/Keys(${keyId})`)
    expect(data).toMatchObject({ ID: keyId, plan_name: 'standard', status: 'active', label: 'operator-test', unitsLeft: '100', unitsLeased: '0' })
    expect(data.secretHash).toBeUndefined()
    const issued = await issue({ units: 3 })
    expect(JSON.parse(issued.mcpConfiguration).mcpServers['chain-a'].env.CHAIN_ACCESS_API_KEY).toBe(issued.key)
  })

  test('KeyStatuses: the statuses a key can have, for value lists, with what each means', async () => {
    const { data } = await GET(`${OP}/KeyStatuses`)
    expect(data.value.map((status: { code: string; servesCalls: boolean }) => [status.code, status.servesCalls])).toEqual([['active', true], ['suspended', false], ['revoked', false]])
    expect(data.value.every((status: { description: string }) => status.description.length > 0)).toBe(true)
    expect((await GET(`${OP}/KeyStatuses`, bob)).status).toBe(403)
  })

  test('found by a search on label, by filter on status, and paged', async () => {
    const { data } = await GET(`${OP}/Keys?$search=operator-test&$filter=status eq 'active'&$count=true&$top=1`)
    expect(data['@odata.count']).toBeGreaterThanOrEqual(2)
    expect(data.value).toHaveLength(1)
  })

  test('credit with a reason: the units and a credit entry naming the operator and why', async () => {
    const { data, status } = await act(keyId, 'credit', { units: 50, reason: 'goodwill' })
    expect(data).toMatchObject({ unitsLeft: '150', unitsLeased: '0' })
    expect(status).toBe(200)
    const entry = (await ledgerOf(keyId)).find(e => e.kind === 'credit' && e.units === 50)
    expect(entry).toMatchObject({ state: 'posted', note: 'operator alice: goodwill' })
  })

  test('debit: never below zero (409 INSUFFICIENT_UNITS, nothing moved); within the balance, a debit entry', async () => {
    const refused = await act(keyId, 'debit', { units: 151, reason: 'too much' })
    expect(refused.data.error).toMatchObject({ code: 'INSUFFICIENT_UNITS' })
    expect(refused.status).toBe(409)
    const { data } = await act(keyId, 'debit', { units: 20, reason: 'refund to card' })
    expect(data.unitsLeft).toBe('130')
    const ledger = await ledgerOf(keyId)
    expect(ledger.find(e => e.kind === 'debit')).toMatchObject({ units: -20, note: 'operator alice: refund to card' })
    expect(ledgerSum(ledger)).toBe(await balanceOf(keyId))
  })

  test.each([
    ['a word', { units: 'many', reason: 'x' }, 'ASSERT_DATA_TYPE'],
    ['zero', { units: 0, reason: 'x' }, 'INVALID_UNITS'],
    ['a negative number', { units: -5, reason: 'x' }, 'INVALID_UNITS'],
    ['a fraction', { units: '2.5', reason: 'x' }, 'ASSERT_DATA_TYPE'],
    ['more than a credit may move', { units: '10000000000000', reason: 'x' }, 'INVALID_UNITS'],
    ['a blank reason', { units: 5, reason: '  ' }, 'MISSING_PARAMETER'],
  ])('credit with %s: 400, nothing moved', async (_, body, code) => {
    const { data, status } = await act(keyId, 'credit', body)
    expect(data.error.code).toBe(code)
    expect(status).toBe(400)
    expect(await balanceOf(keyId)).toBe(130)
  })

  test('credit without units or reason: 400 naming the parameter', async () => {
    const { data, status } = await act(keyId, 'credit', { reason: 'x' })
    expect(JSON.stringify(data.error)).toMatch(/units/)
    expect(status).toBe(400)
  })

  test('an unknown key: 404 KEY_NOT_FOUND, and nothing audited', async () => {
    const unknown = cds.utils.uuid()
    const { data, status } = await act(unknown, 'credit', { units: 5, reason: 'x' })
    expect(data.error.code).toBe('KEY_NOT_FOUND')
    expect(status).toBe(404)
    expect(await auditOf(unknown)).toEqual([])
  })

  test('suspend, then resume; each only from the state it changes', async () => {
    expect((await act(keyId, 'suspend', { reason: 'abuse report' })).data.status).toBe('suspended')
    const again = await act(keyId, 'suspend')
    expect(again.data.error.code).toBe('KEY_STATE_CONFLICT')
    expect(again.status).toBe(409)
    expect((await act(keyId, 'resume')).data.status).toBe('active')
    expect((await act(keyId, 'resume')).status).toBe(409)
  })

  test('changePlan: an unknown plan is 400 UNKNOWN_PLAN; a known one counts up the key\'s version', async () => {
    const unknown = await act(keyId, 'changePlan', { plan: 'platinum' })
    expect(unknown.data.error.code).toBe('UNKNOWN_PLAN')
    expect(unknown.status).toBe(400)
    const before = (await GET(`${OP}/Keys(${keyId})`)).data.version
    const { data } = await act(keyId, 'changePlan', { plan: 'scale', reason: 'upgrade' })
    expect(data).toMatchObject({ plan_name: 'scale', version: before + 1 })
  })

  test('setExpiry: a time sets it, none clears it, a non-time is 400 INVALID_TIME', async () => {
    expect((await act(keyId, 'setExpiry', { validUntil: '2030-01-31T00:00:00Z' })).data.validUntil).toMatch(/^2030-01-31T00:00:00/)
    expect((await act(keyId, 'setExpiry', {})).data.validUntil).toMatch(/^9999-12-31/)
    expect((await act(keyId, 'setExpiry', { validUntil: 'tomorrow' })).status).toBe(400)
  })

  test('rotate: a new secret, shown once; the key keeps its units', async () => {
    const { data, status } = await act(keyId, 'rotate', { reason: 'leaked in a log' })
    expect(data.key).toMatch(/^cag_/)
    expect(data.key).not.toBe(secret)
    expect(status).toBe(200)
    expect(await balanceOf(keyId)).toBe(130)
  })

  test('revoke: the key and its grants; a second revoke is 409', async () => {
    const { data } = await act(keyId, 'revoke', { reason: 'customer left' })
    expect(data.status).toBe('revoked')
    expect((await act(keyId, 'revoke')).status).toBe(409)
    const { ProductGrants } = cds.entities('gateway')
    const grants = await cds.tx(() => SELECT.from(ProductGrants).columns('status').where({ apiKey_ID: keyId }))
    expect(grants.map((grant: { status: string }) => grant.status)).toEqual(['revoked', 'revoked'])
  })
})


describe('plans and prices', () => {
  const priceOf = async (routeClass: string) => (await GET(`${OP}/Prices('${routeClass}')`)).data

  test('a price edited: the row changes, and the audit keeps who, the row before and after', async () => {
    const { data, status } = await PATCH(`${OP}/Prices('analytics')`, { units: 4 })
    expect(data).toMatchObject({ routeClass: 'analytics', units: 4 })
    expect(status).toBe(200)
    const [entry] = await auditOf('analytics', 'price')
    expect(entry).toMatchObject({ actor: 'alice', action: 'price.update' })
    expect(JSON.parse(entry.before)).toMatchObject({ units: 3 })
    expect(JSON.parse(entry.after)).toMatchObject({ units: 4 })
  })

  test.each([
    ['a negative price', { units: -1 }, 'ASSERT_RANGE'],
    ['a price above a million units', { units: 1000001 }, 'ASSERT_RANGE'],
    ['no price at all', { units: null }, 'MISSING_PARAMETER'],
    ['an object with its own toString', { units: { toString: 'x' } }, 'ASSERT_DATA_TYPE'],
    ['an object', { units: { '+=': 1 } }, 'ASSERT_DATA_TYPE'],
    ['an array', { units: [1] }, 'ASSERT_DATA_TYPE'],
  ])('%s: 400, the price stays', async (_, body, code) => {
    const { data, status } = await PATCH(`${OP}/Prices('analytics')`, body)
    expect(data.error.code).toBe(code)
    expect(status).toBe(400)
    expect((await priceOf('analytics')).units).toBe(4)
  })

  test('a route class is the services\' own: none added, none removed (403), an unknown one is 404', async () => {
    expect((await POST(`${OP}/Prices`, { routeClass: 'made-up', units: 1 })).status).toBe(403)
    expect((await DEL(`${OP}/Prices('analytics')`)).status).toBe(403)
    expect((await PATCH(`${OP}/Prices('made-up')`, { units: 1 })).status).toBe(404)
  })

  test('a user without the operator role changes nothing: 403', async () => {
    expect((await PATCH(`${OP}/Prices('analytics')`, { units: 9 }, bob)).status).toBe(403)
    expect((await priceOf('analytics')).units).toBe(4)
  })

  test('a plan added and edited, within its bounds; each change audited', async () => {
    const created = await POST(`${OP}/Plans`, { name: 'enterprise', description: 'for big teams', units: 100000, validityDays: 365, ratePerSecond: 200, burst: 400 })
    expect(created.status).toBe(201)
    const refused = await PATCH(`${OP}/Plans('enterprise')`, { burst: 0 })
    expect(refused.data.error.code).toBe('ASSERT_RANGE')
    expect(refused.status).toBe(400)
    expect((await PATCH(`${OP}/Plans('enterprise')`, { burst: 500 })).data.burst).toBe(500)
    expect((await DEL(`${OP}/Plans('enterprise')`)).status).toBe(403)
    expect((await auditOf('enterprise', 'plan')).map(entry => entry.action)).toEqual(['plan.create', 'plan.update'])
    const { ID } = await issue({ units: 1 })
    expect((await act(ID, 'changePlan', { plan: 'enterprise' })).data.plan_name).toBe('enterprise')
  })
})


describe('vouchers', () => {
  const create = (body: object) => POST(`${OP}/createVouchers`, { units: 25, count: 3, label: '=launch, "day"', reason: 'meetup', ...body })

  test('createVouchers: the codes shown once, also as CSV; the list shows hints and counts, never a code or its hash', async () => {
    const { data, status } = await create({ uses: 2 })
    expect(status).toBe(200)
    expect(data.vouchers).toHaveLength(3)
    const { hashVoucherCode, normaliseCode } = await import('../../srv/key-lanes/voucher-codes.ts')
    const { Vouchers } = cds.entities('gateway')
    for (const voucher of data.vouchers) {
      expect(voucher).toMatchObject({ code: expect.stringMatching(/^[0-9A-Z]{4}(-[0-9A-Z]{4}){4}$/), uses: 2, expiresAt: null, label: '=launch, "day"' })
      expect(voucher.units).toBe('25')
      // The code given is the one stored, as its keyed hash.
      expect((await SELECT.one.from(Vouchers, voucher.ID)).codeHash).toBe(hashVoucherCode(normaliseCode(voucher.code)))
    }
    const csv = data.csv.trim().split('\r\n')
    expect(csv[0]).toBe('id,code,units,uses,expiresAt,label')
    // A label a spreadsheet would run as a formula stays text; commas and quotes are quoted.
    expect(csv.slice(1)).toEqual(data.vouchers.map((voucher: any) => `${voucher.ID},${voucher.code},25,2,,"'=launch, ""day"""`))
    const listed = (await GET(`${OP}/Vouchers?$filter=label eq '=launch, "day"'&$expand=redemptions`)).data.value
    expect(listed).toHaveLength(3)
    expect(listed[0]).toMatchObject({ maxRedemptions: 2, redeemedCount: 0, redemptions: [], hint: data.vouchers.find((v: any) => v.ID === listed[0].ID).code.slice(0, 4) + '…' })
    const everything = JSON.stringify(listed)
    expect(everything).not.toContain('codeHash')
    for (const voucher of data.vouchers) expect(everything).not.toContain(voucher.code)
    const [entry] = await auditOf('3', 'vouchers')
    expect(entry).toMatchObject({ actor: 'alice', action: 'voucher.create', reason: 'meetup' })
    expect(JSON.parse(entry.after).ids.sort()).toEqual(data.vouchers.map((v: any) => v.ID).sort())
    for (const voucher of data.vouchers) expect(JSON.stringify(entry)).not.toContain(voucher.code)
  })

  test('revoke: the code no longer redeems; again 409, unknown 404; audited', async () => {
    const [voucher] = (await create({ count: 1 })).data.vouchers
    const revoked = await POST(`${OP}/Vouchers(${voucher.ID})/OperatorService.revoke`, { reason: 'leaked' })
    expect(revoked.status).toBe(200)
    expect(revoked.data.revokedAt).toEqual(expect.any(String))
    const again = await POST(`${OP}/Vouchers(${voucher.ID})/OperatorService.revoke`, {})
    expect([again.status, again.data.error.code]).toEqual([409, 'VOUCHER_STATE_CONFLICT'])
    const unknown = await POST(`${OP}/Vouchers(${cds.utils.uuid()})/OperatorService.revoke`, {})
    expect([unknown.status, unknown.data.error.code]).toEqual([404, 'VOUCHER_NOT_FOUND'])
    const entries = await auditOf(voucher.ID, 'voucher')
    expect(entries.map(entry => [entry.action, entry.actor, entry.reason])).toEqual([['voucher.revoke', 'alice', 'leaked']])
    expect(JSON.parse(entries[0].before).revokedAt).toBeNull()
  })

  test.each([
    ['no units', { units: 0 }, 'INVALID_VOUCHER'],
    ['no codes', { count: 0 }, 'INVALID_VOUCHER'],
    ['more codes than a batch holds', { count: 10001 }, 'INVALID_VOUCHER'],
    ['no uses', { uses: 0 }, 'INVALID_VOUCHER'],
    ['an expiry in the past', { expiresAt: '2001-01-01T00:00:00Z' }, 'INVALID_VOUCHER'],
    ['a fraction of a unit', { units: 1.5 }, 'INVALID_INTEGER'],
    ['an object for the count', { count: { n: 1 } }, 'ASSERT_DATA_TYPE'],
  ])('%s: 400, nothing created', async (_, body, code) => {
    const { Vouchers } = cds.entities('gateway')
    const before = (await SELECT.one.from(Vouchers).columns('count(*) as n')).n
    const { data, status } = await create(body)
    expect([status, data.error.code]).toEqual([400, code])
    expect((await SELECT.one.from(Vouchers).columns('count(*) as n')).n).toBe(before)
  })

  test('a user without the operator role: 403', async () => {
    expect((await POST(`${OP}/createVouchers`, { units: 1, count: 1 }, bob)).status).toBe(403)
    expect((await GET(`${OP}/Vouchers`, bob)).status).toBe(403)
  })
})

describe('packs', () => {
  test('an operator adds and edits a pack; each change audited with before and after', async () => {
    const created = await POST(`${OP}/Packs`, { name: 'meetup', description: 'for the meetup', units: 5000, lovelace: 2000000, plan_name: 'standard' })
    expect(created.status).toBe(201)
    expect((await PATCH(`${OP}/Packs('meetup')`, { lovelace: 3000000, active: false })).status).toBe(200)
    const { Packs } = cds.entities('gateway')
    const row = await SELECT.one.from(Packs, 'meetup')
    expect([Number(row.lovelace), row.active]).toEqual([3000000, false])
    const entries = await auditOf('meetup', 'pack')
    expect(entries.map(entry => [entry.action, entry.actor])).toEqual([['pack.create', 'alice'], ['pack.update', 'alice']])
    expect(JSON.parse(entries[1].before)).toMatchObject({ active: true })
    expect(JSON.parse(entries[1].after)).toMatchObject({ active: false })
  })

  test.each([
    ['a price under one ada', { lovelace: 999999 }, 'ASSERT_RANGE'],
    ['a negative price', { lovelace: -5 }, 'ASSERT_RANGE'],
    ['no units', { units: 0 }, 'ASSERT_RANGE'],
    ['an unknown plan', { plan_name: 'made-up' }, 'ASSERT_TARGET'],
    ['an object for the price', { lovelace: { '+=': 1 } }, 'ASSERT_DATA_TYPE'],
  ])('%s: 400, the pack stays', async (_, body, code) => {
    const { data, status } = await PATCH(`${OP}/Packs('starter')`, body)
    expect([status, data.error?.code]).toEqual([400, code])
    const { Packs } = cds.entities('gateway')
    expect(Number((await SELECT.one.from(Packs, 'starter')).lovelace)).toBe(5000000)
  })

  test('a name other than letters, digits, - and _ is refused; a pack is never removed', async () => {
    const { data, status } = await POST(`${OP}/Packs`, { name: 'a b', units: 1, lovelace: 2000000, plan_name: 'standard' })
    expect([status, data.error.code]).toEqual([400, 'ASSERT_FORMAT'])
    expect((await DEL(`${OP}/Packs('starter')`)).status).toBe(403)
  })

  test('a pack or plan added under a name that exists: 409 ALREADY_EXISTS, the row stays', async () => {
    const pack = await POST(`${OP}/Packs`, { name: 'starter', units: 1, lovelace: 2000000, plan_name: 'standard' })
    expect([pack.status, pack.data.error.code, pack.data.error.target]).toEqual([409, 'ALREADY_EXISTS', 'name'])
    const plan = await POST(`${OP}/Plans`, { name: 'standard', units: 1, validityDays: 1, ratePerSecond: 1, burst: 1 })
    expect([plan.status, plan.data.error.code]).toEqual([409, 'ALREADY_EXISTS'])
    const { Packs } = cds.entities('gateway')
    expect(Number((await SELECT.one.from(Packs, 'starter')).units)).toBe(10000)
  })
})

describe('agent grants', () => {
  test('listed without token or hash; revoked once (audited), a second time 409, an unknown one 404', async () => {
    const { ID } = await issue({ units: 1 })
    const { data } = await GET(`${OP}/Grants?$filter=apiKey_ID eq ${ID}&$orderby=product`)
    expect(data.value.map((grant: { product: string }) => grant.product)).toEqual(['chain-a', 'chain-b'])
    expect(JSON.stringify(data.value)).not.toMatch(/tokenHash|cg[ab]_[A-Za-z0-9_-]{20}/)
    const grantId = data.value[0].ID
    const revoked = await POST(`${OP}/Grants(${grantId})/OperatorService.revoke`, { reason: 'agent retired' })
    expect(revoked.data).toMatchObject({ ID: grantId, status: 'revoked' })
    const again = await POST(`${OP}/Grants(${grantId})/OperatorService.revoke`, {})
    expect(again.data.error.code).toBe('GRANT_STATE_CONFLICT')
    expect(again.status).toBe(409)
    const unknown = await POST(`${OP}/Grants(${cds.utils.uuid()})/OperatorService.revoke`, {})
    expect(unknown.data.error.code).toBe('GRANT_NOT_FOUND')
    expect(unknown.status).toBe(404)
    const [entry] = await auditOf(grantId, 'grant')
    expect(entry).toMatchObject({ actor: 'alice', action: 'grant.revoke', reason: 'agent retired' })
    expect(JSON.parse(entry.after)).toMatchObject({ status: 'revoked' })
    expect((await GET(`${OP}/Keys(${ID})`)).data.version).toBe(1)
  })

  test('issued on a product (its token once, audited without it); its calls run as its subject; operations checked', async () => {
    const issued = await POST(`${OP}/issueGrant`, { product: 'chain-b', operations: ['ChainBService:*'], label: 'remote', subject: 'hosted:k-1', reason: 'a hosted gateway' })
    expect(issued.status).toBe(200)
    expect(issued.data).toMatchObject({ ID: expect.any(String), token: expect.stringMatching(/^cgb_/), product: 'chain-b', subject: 'hosted:k-1' })
    const [entry] = await auditOf(issued.data.ID, 'grant')
    expect(entry).toMatchObject({ actor: 'alice', action: 'grant.issue', reason: 'a hosted gateway' })
    expect(entry.after).not.toContain(issued.data.token)
    expect(JSON.parse(entry.after)).toMatchObject({ product: 'chain-b', status: 'active', subject: 'hosted:k-1' })
    // What the grant creates is its subject's (the owner stays when another grant is issued for it).
    const jobs = await GET('/odata/v4/chainb/Jobs', { headers: { 'x-agent-token': issued.data.token } })
    expect(jobs.status).toBe(200)
    const { ownerOf } = await import('../../srv/lib/ownership.ts')
    const { grantPrincipal } = await import('../../srv/gateway/principals.ts')
    expect(ownerOf(grantPrincipal({ ID: issued.data.ID, product: 'chain-b', allowedOperations: [], subject: 'hosted:k-1' }))).toBe('hosted:k-1')

    const wrongProduct = await POST(`${OP}/issueGrant`, { product: 'chain-c' })
    expect(wrongProduct).toMatchObject({ status: 400, data: { error: { code: 'INVALID_PRODUCT' } } })
    const foreign = await POST(`${OP}/issueGrant`, { product: 'chain-b', operations: ['ChainAReadService:*'] })
    expect(foreign).toMatchObject({ status: 400, data: { error: { code: 'INVALID_GRANT_OPERATION' } } })
    for (const subject of ['key:' + cds.utils.uuid(), 'grant:x', 'alice', 'hosted:', 'hosted:a b']) {
      expect(await POST(`${OP}/issueGrant`, { product: 'chain-b', subject })).toMatchObject({ status: 400, data: { error: { code: 'INVALID_GRANT_SUBJECT' } } })
    }
    const malformed = await POST(`${OP}/issueGrant`, { product: 'chain-a', operations: ['*'] })
    expect(malformed).toMatchObject({ status: 400, data: { error: { code: 'INVALID_GRANT_OPERATION' } } })
    expect((await POST(`${OP}/issueGrant`, { product: 'chain-b' }, bob)).status).toBe(403)
  })
})

describe('the audit', () => {
  test('every change of the key in order, by alice, with the key before and after and never a secret', async () => {
    const entries = await auditOf(keyId)
    expect(entries.map(entry => entry.action)).toEqual([
      'key.issue', 'key.credit', 'key.debit', 'key.suspend', 'key.resume', 'key.change-plan', 'key.set-expiry', 'key.set-expiry', 'key.rotate', 'key.revoke',
    ])
    expect(entries.every(entry => entry.actor === 'alice')).toBe(true)
    const credit = entries[1]
    expect(credit.reason).toBe('goodwill')
    expect(JSON.parse(credit.before)).toMatchObject({ unitsLeft: 100 })
    expect(JSON.parse(credit.after)).toMatchObject({ unitsLeft: 150 })
    const everything = JSON.stringify(entries)
    expect(everything).not.toContain(secret)
    expect(everything).not.toMatch(/secretHash|cag_[A-Za-z0-9_-]{20}/)
  })

  test('verifyAudit: every link intact', async () => {
    const { data } = await GET(`${OP}/verifyAudit()`)
    expect(data).toMatchObject({ valid: true, brokenAt: null })
    expect(data.entries).toBeGreaterThanOrEqual(11)
  })

  test('20 credits at once: every one applied once and audited once, in one unbroken chain', async () => {
    const { ID } = await issue({ units: 0 })
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => act(ID, 'credit', { units: 1, reason: `burst ${i}` })))
    expect(answers.map((answer: { status: number }) => answer.status)).toEqual(Array(20).fill(200))
    expect(await balanceOf(ID)).toBe(20)
    expect((await auditOf(ID)).filter(entry => entry.action === 'key.credit')).toHaveLength(20)
    expect((await GET(`${OP}/verifyAudit()`)).data.valid).toBe(true)
  })

  test('an entry changed in the database: verifyAudit names it', async () => {
    const { OperatorAuditLog } = cds.entities('operator')
    const [entry] = await auditOf(keyId)
    await cds.tx(() => UPDATE(OperatorAuditLog).set({ reason: 'rewritten' }).where({ sequence: entry.sequence }))
    const { data } = await GET(`${OP}/verifyAudit()`)
    expect(data).toMatchObject({ valid: false, brokenAt: entry.sequence, reason: expect.stringContaining('altered') })
  })

  test('the audit cannot be written through the service', async () => {
    expect((await POST(`${OP}/AuditLog`, { sequence: 999, actor: 'x', action: 'x', target: 'x', previousHash: '0', hash: '0', occurredAt: new Date().toISOString() })).status).toBe(405)
  })
})
