import cds from '@sap/cds'
import { balanceOf, issueTestKey } from '../support/gateway.ts'
import { randomHash } from '../chainb/support.ts'
import { caller, describeVerifyLane, UNLIMITED } from './lane.ts'

/** The verify lane through the hosted gateway: no key needed, every answer charges 0 units. */

process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_RATE_PER_SECOND = '100000'
process.env.GATEWAY_BURST = '100000'
process.env.CHAIN_B_JOBS_POLL_MS = '20'
Object.assign(process.env, UNLIMITED)
const app: { url: string } = cds.test(__dirname + '/../..') as any

afterAll(() => {
  for (const name of ['GATEWAY_ENABLED', 'GATEWAY_RATE_PER_SECOND', 'GATEWAY_BURST', 'CHAIN_B_JOBS_POLL_MS', ...Object.keys(UNLIMITED)]) delete process.env[name]
})

describeVerifyLane({
  app,
  hosted: true,
  ownerHeaders: async () => ({ authorization: `Bearer ${(await issueTestKey({ units: 1000 })).key}` }),
})

test('a call that brings a key is free as well: 0 units charged, the balance unchanged', async () => {
  const key = await issueTestKey({ units: 10 })
  const answer = await caller(app.url, { authorization: `Bearer ${key.key}` }).get(`/api/v1/verify/verifyDocument(sha256='${randomHash()}')`)
  expect(answer.data).toMatchObject({ verified: false, code: 'NOT_ANCHORED' })
  expect(answer.status).toBe(200)
  expect(answer.charged).toBe('0')
  expect(await balanceOf(key.id)).toBe(10)
})
