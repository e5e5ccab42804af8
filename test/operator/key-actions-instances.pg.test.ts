import cds from '@sap/cds'
import { PurchaseServers } from '../support/purchases.ts'
import type { RunningServer } from '../support/server.ts'

/**
 * What an operator does to a key at one instance is in force at every other at once: two gateway
 * processes on one PostgreSQL database, the key in use at the second (so it holds the key in
 * memory, with unit leases on), each action made at the first and the very next call at the
 * second answered under it. A price change reaches the second within seconds.
 */
cds.test(__dirname + '/../..')

const ALICE = `Basic ${Buffer.from('alice:').toString('base64')}`
const OP = '/odata/v4/operator'
const READ = '/odata/v4/chaina-odata/Blocks?$top=1&$select=hash'
let servers: PurchaseServers
let acting: RunningServer
let serving: RunningServer

beforeAll(async () => {
  servers = new PurchaseServers({ GATEWAY_LEASE_SECONDS: '5' })
  acting = await servers.serve()
  serving = await servers.serve()
}, 240_000)

afterAll(async () => {
  await servers?.stopAll()
}, 120_000)

async function operator(path: string, body: unknown, method = 'POST') {
  const response = await fetch(`${acting.url}${OP}${path}`, { method, headers: { authorization: ALICE, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const answer = await response.json() as any
  expect(answer.error).toBeUndefined()
  return answer
}

async function read(key: string) {
  const response = await fetch(`${serving.url}${READ}`, { headers: { authorization: `Bearer ${key}` } })
  const body = await response.json() as any
  return { status: response.status, code: body.error?.code as string | undefined, charged: response.headers.get('x-access-units-charged') }
}

async function issue(plan = 'scale') {
  const { ID, key } = await operator('/issueKey', { plan, units: 1000, label: 'across instances' })
  // In use at the serving instance: it holds the key (and a lease of its units) in memory.
  for (let call = 0; call < 5; call++) expect((await read(key)).status).toBe(200)
  return { ID: ID as string, key: key as string }
}

const action = (id: string, name: string, body: object = {}) => operator(`/Keys(${id})/OperatorService.${name}`, body)

test('suspend, resume, revoke: the next call at the other instance is refused, served, refused', async () => {
  const { ID, key } = await issue()
  await action(ID, 'suspend', { reason: 'across instances' })
  expect(await read(key)).toMatchObject({ status: 403, code: 'KEY_SUSPENDED', charged: '0' })
  await action(ID, 'resume')
  expect((await read(key)).status).toBe(200)
  await action(ID, 'revoke')
  expect(await read(key)).toMatchObject({ status: 401, charged: '0' })
})

test('rotate: the old key is refused at the other instance at once, the new one served', async () => {
  const { ID, key } = await issue()
  const rotated = await action(ID, 'rotate')
  expect((await read(key)).status).toBe(401)
  expect((await read(rotated.key)).status).toBe(200)
})

test('an expiry set in the past, then cleared: refused KEY_EXPIRED, then served', async () => {
  const { ID, key } = await issue()
  await action(ID, 'setExpiry', { validUntil: new Date(Date.now() - 60_000).toISOString() })
  expect(await read(key)).toMatchObject({ status: 401, code: 'KEY_EXPIRED', charged: '0' })
  await action(ID, 'setExpiry', { validUntil: null })
  expect((await read(key)).status).toBe(200)
})

test('a debit of every unit left: the next call at the other instance is refused for units; a credit serves it again', async () => {
  const { ID, key } = await issue()
  const { unitsLeft, unitsLeased } = await (await fetch(`${acting.url}${OP}/Keys(${ID})?$select=unitsLeft,unitsLeased`, { headers: { authorization: ALICE } })).json() as any
  // Units leased to the serving instance are still the key's: the debit takes them back from it first.
  await action(ID, 'debit', { units: String(Number(unitsLeft) + Number(unitsLeased ?? 0)), reason: 'across instances' })
  expect(await read(key)).toMatchObject({ status: 402, code: 'UNITS_EXHAUSTED', charged: '0' })
  await action(ID, 'credit', { units: '10', reason: 'across instances' })
  expect((await read(key)).status).toBe(200)
})

test('a plan change: the other instance limits the key\'s rate by the new plan at once', async () => {
  await operator('/Plans', { name: 'one-a-second', description: 'across instances', units: 100, validityDays: 1, ratePerSecond: 1, burst: 2 })
  const { ID, key } = await issue()
  await action(ID, 'changePlan', { plan: 'one-a-second' })
  const statuses = (await Promise.all(Array.from({ length: 20 }, () => read(key)))).map(answer => answer.status)
  expect(statuses).toContain(429)
  expect(statuses.filter(status => status === 200).length).toBeLessThan(20)
})

test('a price change at one instance is charged at the other within seconds', async () => {
  const { key } = await issue()
  expect((await read(key)).charged).toBe('1')
  await operator(`/Prices('entity-read')`, { units: 3 }, 'PATCH')
  try {
    const giveUpAt = Date.now() + 60_000
    let charged: string | null = null
    while (Date.now() < giveUpAt && (charged = (await read(key)).charged) !== '3') await new Promise(resolve => setTimeout(resolve, 250))
    expect(charged).toBe('3')
  } finally {
    await operator(`/Prices('entity-read')`, { units: 1 }, 'PATCH')
  }
}, 90_000)
