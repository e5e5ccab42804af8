import cds from '@sap/cds'

/**
 * Plans, prices and packs as the console edits them, through drafts: edit makes a draft of the row,
 * a change goes to the draft only, save (draftActivate) writes the row through the same handler as
 * a direct PATCH (audited with the row before and after, within the bounds the model annotates),
 * cancel discards the draft and changes nothing. A POST to the collection still adds a row at once
 * (new drafts come from draftNew), and only an operator edits.
 */
const { GET, POST, PATCH, DELETE: DEL, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }
defaults.validateStatus = () => true

const OP = '/odata/v4/operator'
const bob = { auth: { username: 'bob', password: '' } }

const active = (set: string, key: string) => `${OP}/${set}(${key},IsActiveEntity=true)`
const draft = (set: string, key: string) => `${OP}/${set}(${key},IsActiveEntity=false)`
const edit = (set: string, key: string) => POST(`${active(set, key)}/OperatorService.draftEdit`, { PreserveChanges: true })
const save = (set: string, key: string) => POST(`${draft(set, key)}/OperatorService.draftActivate`, {})
const auditOf = async (target: string) => (await GET(`${OP}/AuditLog?$filter=target eq '${target}'&$orderby=sequence`)).data.value as any[]
const priceOf = async (routeClass: string) => (await GET(`${OP}/Prices(routeClass='${routeClass}',IsActiveEntity=true)`)).data.units

describe('a price edited through a draft', () => {
  const key = "routeClass='analytics'"

  test('edit, change, save: the price changes once saved, and the audit keeps the row before and after', async () => {
    const before = await priceOf('analytics')
    const edited = await edit('Prices', key)
    expect(edited.data).toMatchObject({ routeClass: 'analytics', IsActiveEntity: false, HasActiveEntity: true })
    expect(edited.status).toBe(201)
    expect((await PATCH(draft('Prices', key), { units: before + 5 })).status).toBe(200)
    // The draft holds the change; the row charged is still the old price.
    expect(await priceOf('analytics')).toBe(before)
    expect(await auditOf('price:analytics')).toEqual([])
    const saved = await save('Prices', key)
    expect(saved.data).toMatchObject({ units: before + 5, IsActiveEntity: true })
    expect(saved.status).toBe(200)
    expect(await priceOf('analytics')).toBe(before + 5)
    const [entry] = await auditOf('price:analytics')
    expect(entry).toMatchObject({ actor: 'alice', action: 'price.update' })
    expect(JSON.parse(entry.before)).toMatchObject({ units: before })
    expect(JSON.parse(entry.after)).toMatchObject({ units: before + 5 })
  })

  test('cancel: the draft is discarded, the price and the audit stay', async () => {
    const before = await priceOf('analytics')
    const audited = (await auditOf('price:analytics')).length
    await edit('Prices', key)
    await PATCH(draft('Prices', key), { units: 999 })
    expect((await DEL(draft('Prices', key))).status).toBe(204)
    expect(await priceOf('analytics')).toBe(before)
    expect((await GET(draft('Prices', key))).status).toBe(404)
    expect(await auditOf('price:analytics')).toHaveLength(audited)
  })

  test('a negative price is refused on save (400 ASSERT_RANGE): the price stays, the draft stays to be corrected', async () => {
    const before = await priceOf('analytics')
    await edit('Prices', key)
    await PATCH(draft('Prices', key), { units: -1 })
    const refused = await save('Prices', key)
    expect(JSON.stringify(refused.data.error)).toContain('ASSERT_RANGE')
    expect(refused.status).toBe(400)
    expect(await priceOf('analytics')).toBe(before)
    expect((await GET(draft('Prices', key))).data.units).toBe(-1)
    expect((await DEL(draft('Prices', key))).status).toBe(204)
  })

  test('a direct PATCH of the active row still works beside drafts', async () => {
    const { data, status } = await PATCH(`${OP}/Prices('analytics')`, { units: 6 })
    expect(data).toMatchObject({ routeClass: 'analytics', units: 6 })
    expect(status).toBe(200)
  })

  test('no new route class, by POST or by a new draft; none removed', async () => {
    expect((await POST(`${OP}/Prices`, { routeClass: 'made-up', units: 1 })).status).toBe(403)
    const newDraft = await POST(`${OP}/Prices/OperatorService.draftNew`, { routeClass: 'made-up' })
    expect([newDraft.status, newDraft.data.error.code]).toEqual([403, 'PRICE_CLASS_FIXED'])
    expect((await GET(`${OP}/Prices?$filter=routeClass eq 'made-up'`)).data.value).toEqual([])
    expect((await DEL(active('Prices', key))).status).toBe(403)
  })

  test('a user without the operator role cannot edit: 403', async () => {
    expect((await POST(`${active('Prices', key)}/OperatorService.draftEdit`, { PreserveChanges: true }, bob)).status).toBe(403)
  })
})

describe('a pack edited through a draft', () => {
  const key = "name='starter'"

  test('an unknown plan is refused on save (400 ASSERT_TARGET); a known one is saved and audited', async () => {
    await edit('Packs', key)
    await PATCH(draft('Packs', key), { plan_name: 'made-up' })
    const refused = await save('Packs', key)
    expect(JSON.stringify(refused.data.error)).toContain('ASSERT_TARGET')
    expect(refused.status).toBe(400)
    await PATCH(draft('Packs', key), { plan_name: 'scale', lovelace: '6000000' })
    expect((await save('Packs', key)).status).toBe(200)
    const { Packs } = cds.entities('gateway')
    const row = await SELECT.one.from(Packs, 'starter')
    expect([row.plan_name, Number(row.lovelace)]).toEqual(['scale', 6000000])
    const [entry] = await auditOf('pack:starter')
    expect(entry).toMatchObject({ actor: 'alice', action: 'pack.update' })
    expect(JSON.parse(entry.after)).toMatchObject({ plan_name: 'scale' })
  })
})

describe('a plan', () => {
  test('a new plan from a draft (draftNew, fill in, save): created and audited as a plan creation', async () => {
    const created = await POST(`${OP}/Plans/OperatorService.draftNew`, { name: 'team' })
    expect(created.status).toBe(201)
    expect((await PATCH(draft('Plans', "name='team'"), { units: 5000, validityDays: 30, ratePerSecond: 10, burst: 20 })).status).toBe(200)
    expect((await save('Plans', "name='team'")).status).toBe(201)
    expect((await GET(`${OP}/Plans('team')`)).data).toMatchObject({ name: 'team', units: '5000', burst: 20 })
    expect((await auditOf('plan:team')).map(entry => entry.action)).toEqual(['plan.create'])
  })

  test('a POST to the collection still adds the plan at once', async () => {
    const { data, status } = await POST(`${OP}/Plans`, { name: 'direct', units: 1, validityDays: 1, ratePerSecond: 1, burst: 1 })
    expect(data).toMatchObject({ name: 'direct' })
    expect(status).toBe(201)
    expect((await GET(active('Plans', "name='direct'"))).data).toMatchObject({ name: 'direct', IsActiveEntity: true, HasDraftEntity: false })
  })
})
