import cds from '@sap/cds'
import { runningDevnet } from '../support/chain-a.ts'
import { issueTestKey } from '../support/gateway.ts'

process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_RATE_PER_SECOND = '1000000'
process.env.GATEWAY_BURST = '1000000'
// These tests make hundreds of calls with dead secrets on purpose.
process.env.GATEWAY_AUTH_FAILURES = '1000000'
const app: { url: string } = cds.test(__dirname + '/../..') as any

beforeAll(() => runningDevnet())
afterAll(() => {
  for (const name of ['GATEWAY_ENABLED', 'GATEWAY_RATE_PER_SECOND', 'GATEWAY_BURST', 'GATEWAY_AUTH_FAILURES']) delete process.env[name]
})

interface Outcome {
  startedAt: number
  status: number
}

/** Clients call with `key` until stopped, recording when each call started and how it ended. */
function load(key: string, clients = 16) {
  const outcomes: Outcome[] = []
  let running = true
  const done = Promise.all(Array.from({ length: clients }, async () => {
    while (running) {
      const startedAt = Date.now()
      const response = await fetch(`${app.url}/odata/v4/chaina-odata/Blocks?$top=1`, { headers: { authorization: `Bearer ${key}` } })
      await response.arrayBuffer()
      outcomes.push({ startedAt, status: response.status })
    }
  }))
  return { outcomes, stop: async () => ((running = false), await done) }
}

const pause = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

test('under load, no call with the old secret succeeds once rotation has returned', async () => {
  const { key } = await issueTestKey({ units: 100_000 })
  const traffic = load(key)
  await pause(150)
  const rotation = await fetch(`${app.url}/me/rotate`, { method: 'POST', headers: { authorization: `Bearer ${key}` } })
  const returnedAt = Date.now()
  const { key: newKey } = await rotation.json()
  await pause(150)
  await traffic.stop()
  const after = traffic.outcomes.filter(outcome => outcome.startedAt >= returnedAt)
  expect(traffic.outcomes.some(outcome => outcome.startedAt < returnedAt && outcome.status === 200)).toBe(true)
  expect(after.length).toBeGreaterThan(0)
  expect(after.every(outcome => outcome.status === 401)).toBe(true)
  const fresh = await fetch(`${app.url}/odata/v4/chaina-odata/Blocks?$top=1`, { headers: { authorization: `Bearer ${newKey}` } })
  expect(fresh.status).toBe(200)
})

test('under load, no call succeeds once revocation has returned', async () => {
  const { key } = await issueTestKey({ units: 100_000 })
  const traffic = load(key)
  await pause(150)
  await fetch(`${app.url}/me/revoke`, { method: 'POST', headers: { authorization: `Bearer ${key}` } })
  const returnedAt = Date.now()
  await pause(150)
  await traffic.stop()
  const after = traffic.outcomes.filter(outcome => outcome.startedAt >= returnedAt)
  expect(after.length).toBeGreaterThan(0)
  expect(after.every(outcome => outcome.status === 401)).toBe(true)
})

test('under load, no call starting after the key expired succeeds', async () => {
  const { id, key } = await issueTestKey({ units: 100_000 })
  const expiresAt = Date.now() + 300
  const { ApiKeys } = cds.entities('gateway')
  await cds.tx(() => UPDATE(ApiKeys, id).set({ validUntil: new Date(expiresAt).toISOString() }))
  const traffic = load(key)
  await pause(600)
  await traffic.stop()
  const before = traffic.outcomes.filter(outcome => outcome.startedAt < expiresAt - 50)
  const after = traffic.outcomes.filter(outcome => outcome.startedAt >= expiresAt)
  expect(before.some(outcome => outcome.status === 200)).toBe(true)
  expect(after.length).toBeGreaterThan(0)
  expect(after.every(outcome => outcome.status === 401)).toBe(true)
})
