import cds from '@sap/cds'
import { paymentFor, post, PurchaseServers } from '../support/purchases.ts'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { runningDevnet } from '../support/chain-a.ts'
import { stopAndWait, type RunningServer } from '../support/server.ts'
import { HOLD, WebhookReceiver, verifySignature } from '../support/webhook-receiver.ts'

/**
 * Webhooks across gateway processes on one database: events raised at two instances at once,
 * with failed attempts retried, each reach the receiver once per attempt and are delivered once
 * (CAP's queue claims each message for one instance; each attempt is claimed once more by a
 * guarded UPDATE); a delivery waiting for its back-off when its server stops is sent by the next
 * server, once; one killed while its attempt waits is given its next attempt by the next server;
 * an upstream switched off and on, and an x402 payment credited, are delivered as events.
 */
process.env.DEVNET_WALLETS = '6'
cds.test(__dirname + '/../..')

const ALICE = `Basic ${Buffer.from('alice:').toString('base64')}`
const OP = '/odata/v4/operator'
let servers: PurchaseServers
const receiver = new WebhookReceiver()

beforeAll(async () => {
  await receiver.start()
  servers = new PurchaseServers({ WEBHOOK_SUBSCRIPTIONS_REFRESH_MS: '300', WEBHOOK_STALLED_ATTEMPT_S: '15' })
})

afterAll(async () => {
  await servers.stopAll()
  await receiver.stop()
  delete process.env.DEVNET_WALLETS
})

async function call(server: RunningServer, method: string, path: string, body?: unknown, authorization = ALICE) {
  const response = await fetch(`${server.url}${path}`, { method, headers: { authorization, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : undefined }
}

/** A subscription of its own to the receiver: its deliveries arrive at a path of their own (`received(path)`). */
async function subscribe(server: RunningServer, body: object, path = `/hooks/${cds.utils.uuid()}`) {
  const answer = await call(server, 'POST', `${OP}/WebhookSubscriptions`, { url: `${receiver.url}${path}`, ...body })
  expect(answer.body.error).toBeUndefined()
  expect(answer.status).toBe(201)
  return { ...(answer.body as { ID: string; secret: string }), path }
}

const receivedAt = (path: string) => receiver.received.filter(r => r.path === path)

async function issueKey(server: RunningServer, units: number) {
  const answer = await call(server, 'POST', `${OP}/issueKey`, { plan: 'standard', units, label: 'webhook-instances' })
  expect(answer.status).toBe(200)
  return answer.body as { ID: string; key: string }
}

const deliveriesOf = async (server: RunningServer, subscriptionId: string) =>
  (await call(server, 'GET', `${OP}/WebhookDeliveries?$filter=subscription_ID eq ${subscriptionId}`)).body.value as any[]

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 120_000): Promise<T> {
  const giveUpAt = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > giveUpAt) throw new Error(`not reached within ${timeoutMs} ms: ${JSON.stringify(value).slice(0, 2000)}`)
    await new Promise(resolve => setTimeout(resolve, 250))
  }
}

/** Waits until every instance's subscriptions in memory include the new one (each reads them every 300 ms here: ten times over, on a busy machine). */
const settle = () => new Promise(resolve => setTimeout(resolve, 3000))

test('events raised at two instances at once, some attempts failing: each delivered once, every attempt sent once', async () => {
  const [first, second] = [await servers.serve(), await servers.serve()]
  const { ID, secret, path } = await subscribe(first, { events: 'key.exhausted' })
  await settle()
  const KEYS = 16
  const keys = await Promise.all(Array.from({ length: KEYS }, () => issueKey(first, 1)))
  receiver.answerNext(...Array.from({ length: KEYS / 2 }, () => 500))
  const calls = await Promise.all(keys.map((key, i) => call([first, second][i % 2], 'GET', '/odata/v4/chaina-odata/Blocks?$top=1', undefined, `Bearer ${key.key}`)))
  expect(calls.map(answer => answer.status)).toEqual(keys.map(() => 200))

  const mine = () => receivedAt(path)
  await receiver.until(() => new Set(mine().filter(r => r.answered === 200).map(r => r.headers['x-cag-event-id'])).size === KEYS, 120_000)
  const rows = await until(() => deliveriesOf(first, ID), found => found.length === KEYS && found.every(row => row.status === 'delivered'))
  // Whatever is still in flight would show now.
  await new Promise(resolve => setTimeout(resolve, 3000))
  const arrived = mine()
  const byEvent = new Map<string, number[]>()
  for (const r of arrived) byEvent.set(r.headers['x-cag-event-id'] as string, [...(byEvent.get(r.headers['x-cag-event-id'] as string) ?? []), r.answered])
  expect(byEvent.size).toBe(KEYS)
  for (const answers of byEvent.values()) expect(answers.filter(status => status === 200)).toHaveLength(1)
  expect(arrived.filter(r => r.answered === 500)).toHaveLength(KEYS / 2)
  const attempts = rows.reduce((sum, row) => sum + Number(row.attempts), 0)
  expect(attempts).toBe(arrived.length)
  for (const r of arrived) expect(verifySignature(secret, r.body, r.headers['x-cag-signature'] as string, r.arrivedAt)).toEqual({ valid: true, fresh: true })
  await call(first, 'PATCH', `${OP}/WebhookSubscriptions(${ID})`, { active: false })
  for (const server of [first, second]) await stopAndWait(server)
  // The queue's own claim sufficed: no instance ever found an attempt's claim taken by the other.
  for (const server of [first, second]) expect(server.output()).not.toContain('was taken already')
}, 300_000)

test('a delivery waiting for its back-off when its server stops is sent by the next server, once', async () => {
  const before = await servers.serve()
  const { ID, path } = await subscribe(before, { events: 'key.exhausted' })
  await settle()
  const key = await issueKey(before, 1)
  receiver.answerNext(...Array.from({ length: 50 }, () => 500))
  expect((await call(before, 'GET', '/odata/v4/chaina-odata/Blocks?$top=1', undefined, `Bearer ${key.key}`)).status).toBe(200)
  // After the fourth failed attempt the next one is 8 s away: the server stops within them.
  const [waiting] = await until(() => deliveriesOf(before, ID), rows => rows[0]?.status === 'retrying' && Number(rows[0].attempts) >= 4)
  await stopAndWait(before)
  // An attempt may have gone out while the server was stopping: counted here, and recorded (or made again) by the next server.
  const failedAttempts = receivedAt(path).length
  expect(failedAttempts).toBeGreaterThanOrEqual(Number(waiting.attempts))
  receiver.answerAllOk()

  const after = await servers.serve()
  const [delivered] = await until(() => deliveriesOf(after, ID), rows => rows[0]?.status === 'delivered')
  await new Promise(resolve => setTimeout(resolve, 3000))
  const arrived = receivedAt(path)
  expect(arrived.map(r => r.answered)).toEqual([...Array.from({ length: failedAttempts }, () => 500), 200])
  expect(arrived.every(r => JSON.parse(r.body).data.key === key.ID)).toBe(true)
  expect(new Set(arrived.map(r => r.headers['x-cag-event-id'])).size).toBe(1)
  expect(delivered).toMatchObject({ status: 'delivered', attempts: failedAttempts + 1, lastStatusCode: 200 })
  await call(after, 'PATCH', `${OP}/WebhookSubscriptions(${ID})`, { active: false })
  await stopAndWait(after)
}, 300_000)

test('a server killed while its attempt waits for the receiver: the next server makes the next attempt, delivered once', async () => {
  const before = await servers.serve()
  const { ID, path } = await subscribe(before, { events: 'key.exhausted' })
  await settle()
  const key = await issueKey(before, 1)
  receiver.answerNext(HOLD)
  expect((await call(before, 'GET', '/odata/v4/chaina-odata/Blocks?$top=1', undefined, `Bearer ${key.key}`)).status).toBe(200)
  const forKey = () => receivedAt(path)
  await receiver.until(() => forKey().length === 1)
  before.stop('SIGKILL')
  await before.exited
  receiver.answerAllOk()

  const after = await servers.serve()
  const [delivered] = await until(() => deliveriesOf(after, ID), rows => rows[0]?.status === 'delivered')
  await new Promise(resolve => setTimeout(resolve, 3000))
  expect(forKey().map(r => r.answered)).toEqual([HOLD, 200])
  expect(new Set(forKey().map(r => r.headers['x-cag-event-id'])).size).toBe(1)
  expect(forKey().every(r => JSON.parse(r.body).data.key === key.ID)).toBe(true)
  expect(delivered).toMatchObject({ status: 'delivered', attempts: 2, lastStatusCode: 200 })
  await call(after, 'PATCH', `${OP}/WebhookSubscriptions(${ID})`, { active: false })
  await stopAndWait(after)
}, 300_000)

/** An upstream that can be switched off: forwards to this process's devnet while up, drops every connection while down. */
async function switchableUpstream() {
  const state = { up: true }
  const server: Server = createServer(async (req, res) => {
    if (!state.up) return void req.socket.destroy()
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const upstream = await fetch(`${runningDevnet().url}${req.url}`, { method: req.method, headers: { 'content-type': req.headers['content-type'] ?? 'application/json', project_id: String(req.headers.project_id ?? '') }, body: chunks.length ? Buffer.concat(chunks) : undefined })
    res.statusCode = upstream.status
    res.setHeader('content-type', upstream.headers.get('content-type') ?? 'application/json')
    res.end(Buffer.from(await upstream.arrayBuffer()))
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return { state, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, stop: () => new Promise<void>(resolve => { server.close(() => resolve()); server.closeAllConnections() }) }
}

test('an upstream going down and coming back, as an instance\'s readiness check finds it: upstream.down, then upstream.recovered', async () => {
  const upstream = await switchableUpstream()
  const server = await servers.serve({ BLOCKFROST_URL: upstream.url, HEALTH_CACHE_MS: '0', HEALTH_UPSTREAM_INTERVAL_MS: '0', HEALTH_UPSTREAM_TIMEOUT_MS: '3000' })
  try {
    const { ID } = await subscribe(server, { events: 'upstream.down,upstream.recovered' })
    await settle()
    const ready = () => fetch(`${server.url}/ready`).then(response => response.status)
    expect(await ready()).toBe(200)
    upstream.state.up = false
    expect(await ready()).toBe(503)
    expect(await ready()).toBe(503)
    upstream.state.up = true
    expect(await ready()).toBe(200)
    const rows = await until(() => deliveriesOf(server, ID), found => found.length === 2 && found.every(row => row.status === 'delivered'))
    const bodies = rows.map(row => JSON.parse(row.payload)).sort((a, b) => a.occurredAt.localeCompare(b.occurredAt))
    expect(bodies.map(body => [body.event, body.data.chain])).toEqual([['upstream.down', 'chain-a'], ['upstream.recovered', 'chain-a']])
    expect(bodies[0].data.reason).toEqual(expect.any(String))
    await call(server, 'PATCH', `${OP}/WebhookSubscriptions(${ID})`, { active: false })
  } finally {
    await stopAndWait(server)
    await upstream.stop()
  }
}, 300_000)

test('an x402 payment credited: payment.credited, once, with the key, the pack and the transaction', async () => {
  const server = await servers.serve()
  try {
    const { ID, path } = await subscribe(server, { events: 'payment.credited' })
    await settle()
    const signature = await paymentFor(server, 'wallet-4')
    const pending = await post(server, '/keys', undefined, signature)
    expect(pending.body.error.code).toBe('SETTLEMENT_PENDING')
    runningDevnet().produceBlock()
    runningDevnet().produceBlock()
    const bought = await post(server, '/keys', undefined, signature)
    expect(bought.body.id).toEqual(expect.any(String))
    expect(bought.status).toBe(200)
    expect((await post(server, '/keys', undefined, signature)).body.error.code).toBe('PAYMENT_ALREADY_CREDITED')
    const [delivered] = await until(() => deliveriesOf(server, ID), rows => rows.length === 1 && rows[0].status === 'delivered')
    await new Promise(resolve => setTimeout(resolve, 2000))
    const arrived = receivedAt(path)
    expect(arrived).toHaveLength(1)
    expect(JSON.parse(arrived[0].body)).toMatchObject({
      event: 'payment.credited', data: { key: bought.body.id, pack: 'starter', units: 10000, transaction: pending.body.transaction, newKey: true },
    })
    expect(delivered).toMatchObject({ event: 'payment.credited', attempts: 1 })
    await call(server, 'PATCH', `${OP}/WebhookSubscriptions(${ID})`, { active: false })
  } finally {
    await stopAndWait(server)
  }
}, 300_000)
