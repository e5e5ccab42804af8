import cds from '@sap/cds'
import { balanceOf, bearer, issueTestKey, ledgerOf, settled } from '../support/gateway.ts'
import { CHAINB, chainBAdapter, randomHash } from './support.ts'

process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_RATE_PER_SECOND = '100000'
process.env.GATEWAY_BURST = '100000'
const { POST, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true

afterAll(() => {
  for (const name of ['GATEWAY_ENABLED', 'GATEWAY_RATE_PER_SECOND', 'GATEWAY_BURST']) delete process.env[name]
})

/** The connector as on a public network: an indexer to read, no submission API (no CHAIN_B_SUBMIT_URL). */
function withoutSubmissionApi() {
  const options = chainBAdapter().options
  options.network = 'preprod'
  delete options.submitUrl
}

const jobCount = async () => {
  const { Jobs } = cds.entities('chainb')
  const { count } = await cds.tx(() => SELECT.one.from(Jobs).columns('count(1) as count'))
  return Number(count)
}

test('with a submission API the connector can submit (the devnet has one)', () => {
  expect(chainBAdapter().settings.submitUrl).toBeDefined()
  expect(chainBAdapter().canSubmit).toBe(true)
})

test('without a submission API a write answers 503 CHAIN_B_SUBMIT_NOT_CONFIGURED at once: no job, nothing charged', async () => {
  const { id, key } = await issueTestKey({ units: 100 })
  withoutSubmissionApi()
  expect(chainBAdapter().canSubmit).toBe(false)
  const jobsBefore = await jobCount()

  const started = Date.now()
  const response = await POST(`${CHAINB}/anchorDocument`, { sha256: randomHash() }, bearer(key))
  expect(Date.now() - started).toBeLessThan(5000)
  expect(response.data.error.code).toBe('CHAIN_B_SUBMIT_NOT_CONFIGURED')
  expect(response.status).toBe(503)
  expect(response.headers['x-access-units-charged']).toBe('0')

  await settled(id)
  expect(await balanceOf(id)).toBe(100)
  expect((await ledgerOf(id)).reduce((sum, entry) => sum + entry.units, 0)).toBe(100)
  expect(await jobCount()).toBe(jobsBefore)

  // Reads still work: only writes need the submission API.
  const { Documents } = cds.entities('chainb')
  expect(await cds.tx(() => SELECT.from(Documents))).toEqual([])
})
