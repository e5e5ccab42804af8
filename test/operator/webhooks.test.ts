import cds from '@sap/cds'
import { bearer, freshClientAddress, issueTestKey, sendFrom } from '../support/gateway.ts'
import { WebhookReceiver, verifySignature } from '../support/webhook-receiver.ts'
import { createVouchers } from '../../srv/key-lanes/vouchers.ts'
import { publishWebhookEvent } from '../../srv/lib/webhooks.ts'

/**
 * Webhooks, through the hosted gateway: an operator subscribes a URL (validated, its secret shown
 * once, each change audited without it); events from real triggers (a voucher redeemed, a key's
 * balance crossing a threshold and running out) are delivered signed to a local receiver, retried
 * after failures with each attempt recorded, and a deactivated subscription gets nothing.
 */
process.env.GATEWAY_ENABLED = 'true'
const app = cds.test(__dirname + '/../..') as any
const { GET, POST, PATCH, DELETE: DEL, defaults } = app
defaults.validateStatus = () => true
defaults.auth = { username: 'alice', password: '' }

const OP = '/odata/v4/operator'
const receiver = new WebhookReceiver()

beforeAll(() => receiver.start())
afterAll(async () => {
  await receiver.stop()
  delete process.env.GATEWAY_ENABLED
})

const subscribe = async (body: object) => {
  const { data, status } = await POST(`${OP}/WebhookSubscriptions`, { url: `${receiver.url}/hooks`, ...body })
  expect(data.error).toBeUndefined()
  expect(status).toBe(201)
  return data as { ID: string; secret: string }
}

const deactivate = (id: string) => PATCH(`${OP}/WebhookSubscriptions(${id})`, { active: false })

const deliveriesOf = async (subscriptionId: string) =>
  (await GET(`${OP}/WebhookDeliveries?$filter=subscription_ID eq ${subscriptionId}&$orderby=createdAt`)).data.value as any[]

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const giveUpAt = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value) || Date.now() > giveUpAt) return value
    await new Promise(resolve => setTimeout(resolve, 200))
  }
}

const redeemVoucher = async (units: number) => {
  const [voucher] = await createVouchers({ units, count: 1 })
  const answer = await sendFrom(app.url, 'POST', '/vouchers/redeem', { from: freshClientAddress(), raw: JSON.stringify({ code: voucher.code }) })
  expect(answer.status).toBe(200)
  return { voucher, key: answer.body as { id: string } }
}

describe('subscriptions', () => {
  test('created with a secret of its own: shown in the answer once, never read back; audited without it', async () => {
    const { ID, secret } = await subscribe({ events: 'voucher.redeemed', description: 'audit check' })
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
    const { data } = await GET(`${OP}/WebhookSubscriptions(${ID})`)
    expect(data).toMatchObject({ ID, events: 'voucher.redeemed', active: true, secret: null, createdBy: 'alice' })
    expect(JSON.stringify((await GET(`${OP}/WebhookSubscriptions`)).data)).not.toContain(secret)
    const audit = (await GET(`${OP}/AuditLog?$filter=target eq 'webhook:${ID}'`)).data.value
    expect(audit).toEqual([expect.objectContaining({ actor: 'alice', action: 'webhook.create' })])
    expect(JSON.stringify(audit)).not.toContain(secret)
    await deactivate(ID)
  })

  test('a secret given on create is taken; a change replaces it (answered once, audited as replaced, never shown)', async () => {
    const { ID, secret } = await subscribe({ events: 'voucher.redeemed', secret: 'a-secret-of-the-operators-own' })
    expect(secret).toBe('a-secret-of-the-operators-own')
    const { data } = await PATCH(`${OP}/WebhookSubscriptions(${ID})`, { secret: 'another-secret-long-enough', active: false })
    expect(data).toMatchObject({ secret: 'another-secret-long-enough', active: false })
    expect((await GET(`${OP}/WebhookSubscriptions(${ID})`)).data.secret).toBeNull()
    const audit = (await GET(`${OP}/AuditLog?$filter=target eq 'webhook:${ID}'&$orderby=sequence`)).data.value
    expect(audit.map((entry: any) => [entry.action, entry.reason])).toEqual([['webhook.create', null], ['webhook.update', 'secret replaced']])
    expect(JSON.stringify(audit)).not.toMatch(/another-secret|operators-own/)
  })

  test('deleted: gone, audited', async () => {
    const { ID } = await subscribe({ events: 'upstream.down' })
    expect((await DEL(`${OP}/WebhookSubscriptions(${ID})`)).status).toBe(204)
    expect((await GET(`${OP}/WebhookSubscriptions(${ID})`)).status).toBe(404)
    const audit = (await GET(`${OP}/AuditLog?$filter=target eq 'webhook:${ID}'&$orderby=sequence`)).data.value
    expect(audit.map((entry: any) => entry.action)).toEqual(['webhook.create', 'webhook.delete'])
  })

  test.each([
    ['no url', { events: 'key.exhausted', url: undefined }, 'INVALID_WEBHOOK_URL'],
    ['a url that is no url', { events: 'key.exhausted', url: 'not a url' }, 'INVALID_WEBHOOK_URL'],
    ['an ftp url', { events: 'key.exhausted', url: 'ftp://example.org/hook' }, 'INVALID_WEBHOOK_URL'],
    ['a file url', { events: 'key.exhausted', url: 'file:///etc/passwd' }, 'INVALID_WEBHOOK_URL'],
    ['a url with a password', { events: 'key.exhausted', url: 'https://user:pw@example.org/hook' }, 'INVALID_WEBHOOK_URL'],
    ['a huge url', { events: 'key.exhausted', url: `https://example.org/${'a'.repeat(100_000)}` }, 'ASSERT_DATA_TYPE'],
    ['a url that is a number', { events: 'key.exhausted', url: 42 }, 'ASSERT_DATA_TYPE'],
    ['an unknown event', { events: 'key.exhausted,key.stolen' }, 'UNKNOWN_WEBHOOK_EVENT'],
    ['no events', { events: ' , ' }, 'UNKNOWN_WEBHOOK_EVENT'],
    ['events as an array', { events: ['key.exhausted'] }, 'ASSERT_DATA_TYPE'],
    ['a long event list', { events: 'key.exhausted,'.repeat(1_000) }, 'ASSERT_DATA_TYPE'],
    ['a body over the limit', { events: 'key.exhausted,'.repeat(100_000) }, 'PAYLOAD_TOO_LARGE'],
    ['balance_low without its threshold', { events: 'key.balance_low' }, 'INVALID_WEBHOOK_THRESHOLD'],
    ['a negative threshold', { events: 'key.balance_low', balanceThreshold: -5 }, 'INVALID_WEBHOOK_THRESHOLD'],
    ['a threshold that is text', { events: 'key.balance_low', balanceThreshold: 'lots' }, 'ASSERT_DATA_TYPE'],
    ['a threshold of zero', { events: 'key.balance_low', balanceThreshold: 0 }, 'INVALID_WEBHOOK_THRESHOLD'],
    ['a short secret', { events: 'key.exhausted', secret: 'short' }, 'INVALID_WEBHOOK_SECRET'],
    ['a huge secret', { events: 'key.exhausted', secret: 'x'.repeat(100_000) }, 'ASSERT_DATA_TYPE'],
    ['a secret that is a number', { events: 'key.exhausted', secret: 1234567890123456 }, 'ASSERT_DATA_TYPE'],
  ])('%s: 4xx with its code, nothing created', async (_, body, code) => {
    const before = (await GET(`${OP}/WebhookSubscriptions/$count`)).data
    const { data, status } = await POST(`${OP}/WebhookSubscriptions`, { url: `${receiver.url}/hooks`, ...body })
    expect(data.error.code).toBe(code)
    expect(status).toBe(code === 'PAYLOAD_TOO_LARGE' ? 413 : 400)
    expect((await GET(`${OP}/WebhookSubscriptions/$count`)).data).toBe(before)
  })

  test('a huge description, or a change to an unknown event: 4xx with a code, never 5xx', async () => {
    const huge = await POST(`${OP}/WebhookSubscriptions`, { url: `${receiver.url}/hooks`, events: 'key.exhausted', description: 'd'.repeat(100_000) })
    expect(huge.data.error.code).toEqual(expect.any(String))
    expect(huge.status).toBeGreaterThanOrEqual(400)
    expect(huge.status).toBeLessThan(500)
    const { ID } = await subscribe({ events: 'key.exhausted', active: false })
    const changed = await PATCH(`${OP}/WebhookSubscriptions(${ID})`, { events: 'key.everything' })
    expect(changed.data.error.code).toBe('UNKNOWN_WEBHOOK_EVENT')
    expect(changed.status).toBe(400)
    const filtered = await GET(`${OP}/WebhookSubscriptions?$filter=secret eq 'x'`)
    expect(filtered.status).toBeLessThan(500)
    expect(filtered.data.value ?? []).toEqual([])
  })

  test('deliveries are read-only; a user without the operator role gets nothing', async () => {
    const write = await POST(`${OP}/WebhookDeliveries`, { event: 'key.exhausted', payload: '{}' })
    expect(write.status).toBeGreaterThanOrEqual(400)
    expect(write.status).toBeLessThan(500)
    const bob = { auth: { username: 'bob', password: '' } }
    expect((await GET(`${OP}/WebhookSubscriptions`, bob)).status).toBe(403)
    expect((await GET(`${OP}/WebhookDeliveries`, bob)).status).toBe(403)
  })
})

describe('deliveries', () => {
  test('a voucher redeemed: one signed delivery, fresh, with the event id for de-duplication, recorded as delivered', async () => {
    const { ID, secret } = await subscribe({ events: 'voucher.redeemed' })
    try {
      const { voucher, key } = await redeemVoucher(25)
      const [delivery] = await receiver.until(received => received.some(r => JSON.parse(r.body).data?.voucher === voucher.id)).then(all => all.filter(r => JSON.parse(r.body).data?.voucher === voucher.id))
      const body = JSON.parse(delivery.body)
      expect(body).toMatchObject({ id: expect.any(String), event: 'voucher.redeemed', occurredAt: expect.any(String), data: { voucher: voucher.id, units: 25, key: key.id, newKey: true } })
      expect(delivery.headers['x-cag-event-id']).toBe(body.id)
      expect(delivery.headers['x-cag-event']).toBe('voucher.redeemed')
      expect(delivery.headers['content-type']).toBe('application/json')
      expect(verifySignature(secret, delivery.body, delivery.headers['x-cag-signature'] as string, delivery.arrivedAt)).toEqual({ valid: true, fresh: true })
      expect(verifySignature('another secret', delivery.body, delivery.headers['x-cag-signature'] as string).valid).toBe(false)
      expect(verifySignature(secret, delivery.body.replace('25', '26'), delivery.headers['x-cag-signature'] as string).valid).toBe(false)
      const [recorded] = await until(() => deliveriesOf(ID), rows => rows[0]?.status === 'delivered')
      expect(recorded).toMatchObject({ event: 'voucher.redeemed', eventId: body.id, status: 'delivered', attempts: 1, lastStatusCode: 200, lastError: null, payload: delivery.body })
      expect(receiver.of(body.id)).toHaveLength(1)
    } finally {
      await deactivate(ID)
    }
  })

  test('a receiver answering 500 twice: tried again after a back-off, delivered on the third attempt, each attempt recorded', async () => {
    const { ID } = await subscribe({ events: 'voucher.redeemed' })
    try {
      receiver.answerNext(500, 500)
      const { voucher } = await redeemVoucher(7)
      const mine = (all: typeof receiver.received) => all.filter(r => JSON.parse(r.body).data?.voucher === voucher.id)
      const retrying = await until(() => deliveriesOf(ID), rows => rows[0]?.status === 'retrying')
      expect(retrying[0]).toMatchObject({ status: 'retrying', lastStatusCode: 500, lastError: 'the receiver answered HTTP 500' })
      await receiver.until(all => mine(all).some(r => r.answered === 200))
      const attempts = mine(receiver.received)
      expect(attempts.map(r => r.answered)).toEqual([500, 500, 200])
      expect(new Set(attempts.map(r => r.headers['x-cag-event-id'])).size).toBe(1)
      expect(new Set(attempts.map(r => r.body)).size).toBe(1)
      const [recorded] = await until(() => deliveriesOf(ID), rows => rows[0]?.status === 'delivered')
      expect(recorded).toMatchObject({ status: 'delivered', attempts: 3, lastStatusCode: 200 })
    } finally {
      await deactivate(ID)
    }
  })

  test('a receiver that is not there: recorded as retrying with the reason', async () => {
    const { ID } = await subscribe({ events: 'voucher.redeemed', url: 'http://127.0.0.1:9/nobody-listens' })
    try {
      await redeemVoucher(3)
      const [recorded] = await until(() => deliveriesOf(ID), rows => rows[0]?.status === 'retrying')
      expect(recorded).toMatchObject({ status: 'retrying', attempts: 1, lastStatusCode: null, lastError: expect.stringMatching(/^the receiver was not reached: /) })
      expect(Date.parse(recorded.nextAttemptAt)).toBeGreaterThan(Date.parse(recorded.lastAttemptAt))
    } finally {
      await deactivate(ID)
    }
    // Its next attempt finds the subscription deactivated: the delivery has failed, and nothing is left queued.
    const [ended] = await until(() => deliveriesOf(ID), rows => rows[0]?.status === 'failed')
    expect(ended).toMatchObject({ status: 'failed', attempts: 2, lastError: 'the subscription was deactivated' })
  })

  test('metered calls: the balance crossing the threshold, then the key running out, each once', async () => {
    const { ID } = await subscribe({ events: 'key.balance_low,key.exhausted', balanceThreshold: 2 })
    try {
      const key = await issueTestKey({ units: 4 })
      const asKey = { ...bearer(key.key), auth: undefined }
      for (let call = 0; call < 4; call++) expect((await GET('/odata/v4/chaina-odata/Blocks?$top=1', asKey)).status).toBe(200)
      expect((await GET('/odata/v4/chaina-odata/Blocks?$top=1', asKey)).status).toBe(402)
      const forKey = (all: { body: string }[]) => all.map(r => JSON.parse(r.body)).filter(body => body.data?.key === key.id)
      await receiver.until(all => forKey(all).length >= 2)
      const rows = await until(() => deliveriesOf(ID), found => found.length === 2 && found.every(row => row.status === 'delivered'))
      expect(rows.map(row => row.event).sort()).toEqual(['key.balance_low', 'key.exhausted'])
      expect(forKey(receiver.received).map(body => [body.event, body.data.unitsLeft]).sort()).toEqual([['key.balance_low', 1], ['key.exhausted', 0]])
      expect(forKey(receiver.received).find(body => body.event === 'key.balance_low').data.threshold).toBe(2)
    } finally {
      await deactivate(ID)
    }
  })

  test('a reservation a crashed process left pending, voided by the sweeper: reservations.swept, once, with how many', async () => {
    const { ID } = await subscribe({ events: 'reservations.swept' })
    try {
      const ledger = await import('../../srv/gateway/ledger.ts')
      const { id } = await issueTestKey({ units: 10 })
      const { ApiKeys, LedgerEntries } = cds.entities('gateway')
      const { secretHash } = await cds.tx(() => SELECT.one.from(ApiKeys).columns('secretHash').where({ ID: id }))
      const requestId = `crashed-${cds.utils.uuid()}`
      expect(await ledger.reserve({ keyId: id, secretHash, version: 0, units: 3, routeClass: 'entity-read', route: 'GET /crashed', routeFamily: 'other', requestId })).toMatchObject({ ok: true })
      await cds.tx(() => UPDATE(LedgerEntries).set({ createdAt: new Date(Date.now() - 120_000).toISOString() }).where({ requestId }))
      const sweeps = await Promise.all([ledger.sweep(60), ledger.sweep(60)])
      expect(sweeps.reduce((a, b) => a + b, 0)).toBe(1)
      const rows = await until(() => deliveriesOf(ID), found => found.length === 1 && found[0].status === 'delivered')
      expect(rows.map(row => [row.event, row.status])).toEqual([['reservations.swept', 'delivered']])
      expect(JSON.parse(rows[0].payload).data).toEqual({ kind: 'reservations', voided: 1, olderThanSeconds: 60 })
    } finally {
      await deactivate(ID)
    }
  })

  test('an event published in a transaction that rolls back: no delivery recorded, nothing sent', async () => {
    const { ID } = await subscribe({ events: 'voucher.redeemed' })
    try {
      const marker = cds.utils.uuid()
      await expect(cds.tx(async () => {
        await publishWebhookEvent('voucher.redeemed', { voucher: marker, units: 1 })
        throw new Error('the change failed')
      })).rejects.toThrow('the change failed')
      await cds.tx(() => publishWebhookEvent('voucher.redeemed', { voucher: `${marker}-committed`, units: 1 }))
      await receiver.until(all => all.some(r => JSON.parse(r.body).data?.voucher === `${marker}-committed`))
      const rows = await until(() => deliveriesOf(ID), found => found.every(row => row.status === 'delivered'))
      expect(rows.map(row => JSON.parse(row.payload).data.voucher)).toEqual([`${marker}-committed`])
      expect(receiver.received.filter(r => JSON.parse(r.body).data?.voucher === marker)).toEqual([])
    } finally {
      await deactivate(ID)
    }
  })

  test('a deactivated subscription gets nothing', async () => {
    const { ID } = await subscribe({ events: 'voucher.redeemed' })
    await deactivate(ID)
    const { voucher } = await redeemVoucher(5)
    const { ID: witness } = await subscribe({ events: 'voucher.redeemed' })
    try {
      const { voucher: later } = await redeemVoucher(6)
      await receiver.until(all => all.some(r => JSON.parse(r.body).data?.voucher === later.id))
      expect(await deliveriesOf(ID)).toEqual([])
      expect(receiver.received.filter(r => JSON.parse(r.body).data?.voucher === voucher.id)).toEqual([])
    } finally {
      await deactivate(witness)
    }
  })
})

describe('watches: states told once when entered, whichever instance looks first', () => {
  // Each look below is two at once, as two instances would look: the guarded state row lets one tell.
  const lookTwice = async () => {
    const { lookOnce } = await import('../../srv/operator/webhook-watches.ts')
    await Promise.all([lookOnce(), lookOnce()])
  }
  const eventsOf = async (subscriptionId: string) => (await deliveriesOf(subscriptionId)).map(row => JSON.parse(row.payload))

  test('key.expired: a key past its validUntil, once; a new expiry that passes is told again; revoked keys are not', async () => {
    const { ID } = await subscribe({ events: 'key.expired' })
    try {
      const expiring = await issueTestKey({ units: 5 })
      const revoked = await issueTestKey({ units: 5 })
      const { ApiKeys } = cds.entities('gateway')
      const past = (ms: number) => new Date(Date.now() - ms).toISOString()
      await cds.tx(() => UPDATE(ApiKeys).set({ validUntil: past(60_000) }).where({ ID: { in: [expiring.id, revoked.id] } }))
      await cds.tx(() => UPDATE(ApiKeys).set({ status: 'revoked' }).where({ ID: revoked.id }))
      await lookTwice()
      await lookTwice()
      const told = () => eventsOf(ID).then(all => all.filter(event => [expiring.id, revoked.id].includes(event.data.key)))
      expect((await told()).map(event => [event.event, event.data.key])).toEqual([['key.expired', expiring.id]])
      // The operator extends it, and the new expiry passes too.
      const extended = past(1_000)
      await cds.tx(() => UPDATE(ApiKeys).set({ validUntil: extended }).where({ ID: expiring.id }))
      await lookTwice()
      const both = await told()
      expect(both.map(event => event.data.key)).toEqual([expiring.id, expiring.id])
      expect(new Date(both[1].data.validUntil).getTime()).toBe(new Date(extended).getTime())
      expect(both[0].data.validUntil).not.toBe(both[1].data.validUntil)
    } finally {
      await deactivate(ID)
    }
  })

  test('follower.lag: the chain-A follower\'s row more blocks behind the tip than the threshold, told once; caught up and behind again, told again', async () => {
    process.env.WEBHOOK_FOLLOWER_LAG_BLOCKS = '10'
    const { ID } = await subscribe({ events: 'follower.lag' })
    // The follower is off in tests: its row, which every instance reads, is written here as a follower would.
    const { SyncState } = cds.entities('chaina')
    const existing = await cds.tx(() => SELECT.one.from(SyncState))
    const followed = (lagBlocks: number) => cds.tx(() => UPSERT.into(SyncState).entries({ ID: 'chain-a', chainHeight: 1000, indexedHeight: 1000 - lagBlocks }))
    const toldOfChainA = async () => (await eventsOf(ID)).filter(event => event.data.chain === 'chain-a')
    try {
      await followed(10)
      await lookTwice()
      expect(await toldOfChainA()).toHaveLength(0)
      await followed(25)
      await lookTwice()
      await lookTwice()
      expect((await toldOfChainA()).map(event => event.data)).toEqual([{ chain: 'chain-a', lagBlocks: 25, threshold: 10, chainHeight: 1000, indexedHeight: 975 }])
      await followed(3)
      await lookTwice()
      expect(await toldOfChainA()).toHaveLength(1)
      await followed(40)
      await lookTwice()
      expect((await toldOfChainA()).map(event => event.data.lagBlocks)).toEqual([25, 40])
    } finally {
      await cds.tx(async () => {
        await DELETE.from(SyncState).where({ ID: 'chain-a' })
        if (existing) await INSERT.into(SyncState).entries(existing)
      })
      delete process.env.WEBHOOK_FOLLOWER_LAG_BLOCKS
      await deactivate(ID)
    }
  })

  test('chainb.sponsor_low: the sponsor\'s balance under the minimum, told once; above it, then under again, told again', async () => {
    const { chainB } = await import('../../srv/chains/chain-b/index.ts')
    const connector = await chainB()
    await connector.ensureSponsorFunded()
    const balance = BigInt(await connector.port.sponsorBalance(connector.sponsorKey().publicKey))
    expect(balance).toBeGreaterThan(0n)
    const above = String(balance + 1n)
    // The connector's option (no variable is set in tests): read anew at each look.
    const options = connector.options as { sponsorMinBalance?: string }
    const configured = options.sponsorMinBalance
    const setMinimum = (value: string) => (options.sponsorMinBalance = value)
    setMinimum('1')
    const { ID } = await subscribe({ events: 'chainb.sponsor_low' })
    try {
      await lookTwice()
      expect(await eventsOf(ID)).toHaveLength(0)
      setMinimum(above)
      await lookTwice()
      await lookTwice()
      let told = await eventsOf(ID)
      expect(told).toHaveLength(1)
      expect(told[0]).toMatchObject({ event: 'chainb.sponsor_low', data: { balance: String(balance), threshold: above, network: 'devnet' } })
      setMinimum('1')
      await lookTwice()
      expect(await eventsOf(ID)).toHaveLength(1)
      setMinimum(above)
      await lookTwice()
      told = await eventsOf(ID)
      expect(told).toHaveLength(2)
    } finally {
      options.sponsorMinBalance = configured
      await deactivate(ID)
    }
  }, 120_000)

  test('jobs.failure_rate: more than the share of chain-B jobs ended in the window failed, with enough of them, told once', async () => {
    process.env.WEBHOOK_JOB_FAILURE_MIN_JOBS = '4'
    process.env.WEBHOOK_JOB_FAILURE_PERCENT = '50'
    const { ID } = await subscribe({ events: 'jobs.failure_rate' })
    const { Jobs } = cds.entities('chainb')
    const ended = (status: string) => ({
      ID: cds.utils.uuid(), kind: 'anchor', status, nonce: cds.utils.uuid().replace(/-/g, '').padEnd(64, '0'), attesterSubject: 'watch-test', owner: 'watch-test',
      finishedAt: new Date().toISOString(), errorCode: status === 'failed' ? 'UPSTREAM_REFUSED' : null,
    })
    const inserted: string[] = []
    const add = async (...statuses: string[]) => {
      const rows = statuses.map(ended)
      inserted.push(...rows.map(row => row.ID))
      await cds.tx(() => INSERT.into(Jobs).entries(rows))
    }
    try {
      // Compared with the window's other jobs (other tests' jobs may have ended in it too): enough failures to pass the share whatever ended before.
      const before = await cds.tx(() => SELECT.from(Jobs).columns('ID').where({ finishedAt: { '>=': new Date(Date.now() - 900_000).toISOString() } }))
      await add(...Array(before.length + 4).fill('failed'))
      await lookTwice()
      await lookTwice()
      const told = await eventsOf(ID)
      expect(told).toHaveLength(1)
      expect(told[0]).toMatchObject({ event: 'jobs.failure_rate', data: { threshold: 50, windowSeconds: 900 } })
      expect(told[0].data.percent).toBeGreaterThan(50)
      expect(told[0].data.failed).toBeGreaterThanOrEqual(4)
    } finally {
      await cds.tx(() => DELETE.from(Jobs).where({ ID: { in: inserted } }))
      delete process.env.WEBHOOK_JOB_FAILURE_MIN_JOBS
      delete process.env.WEBHOOK_JOB_FAILURE_PERCENT
      await deactivate(ID)
    }
  })
})
