import cds from '@sap/cds'
import { runningDevnet } from '../support/chain-a.ts'
import { balanceOf, issueTestKey, ledgerOf, rawRequest } from '../support/gateway.ts'
import { canonicalPath } from '../../srv/lib/route-aliases.ts'

process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_RATE_PER_SECOND = '100000'
process.env.GATEWAY_BURST = '100000'
const app: { url: string } = cds.test(__dirname + '/../..') as any

let key: { id: string; key: string }
beforeAll(async () => {
  runningDevnet()
  key = await issueTestKey({ units: 1000 })
})
afterAll(() => {
  delete process.env.GATEWAY_ENABLED
  delete process.env.GATEWAY_RATE_PER_SECOND
  delete process.env.GATEWAY_BURST
})

const SPELLINGS = [
  { name: 'OData', chainb: '/odata/v4/chainb', indexer: '/odata/v4/chainb-indexer' },
  { name: 'plugin', chainb: '/api/v1/chainb', indexer: '/api/v1/indexer' },
]

const request = (method: string, target: string, body = '', headers: Record<string, string> = {}) =>
  rawRequest(app.url, method, target, { Authorization: `Bearer ${key.key}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers }, body)

describe('the alias table', () => {
  test.each([
    ['/api/v1/chainb', '/odata/v4/chainb'],
    ['/api/v1/chainb/Jobs?$top=1', '/odata/v4/chainb/Jobs?$top=1'],
    ['/api/v1/indexer/getHealth()', '/odata/v4/chainb-indexer/getHealth()'],
    ['/api/v1/verify/$metadata', '/odata/v4/chainb-verify/$metadata'],
    ['/api/v1/chainbx/Jobs', '/api/v1/chainbx/Jobs'],
    ['/api/v1/admin', '/api/v1/admin'],
    ['/odata/v4/chainb/Jobs', '/odata/v4/chainb/Jobs'],
  ])('%s → %s', (path, canonical) => expect(canonicalPath(path)).toBe(canonical))
})

describe.each(SPELLINGS)('chain B under the $name spelling through the gateway', ({ chainb, indexer }) => {
  test('the service document and $metadata are free', async () => {
    for (const target of [`${chainb}/`, `${chainb}/$metadata`, `${indexer}/$metadata`]) {
      const response = await request('GET', target)
      expect(response.status).toBe(200)
      expect(response.headers['x-access-units-charged']).toBe('0')
    }
  })

  test('an entity set read costs entity-read (1 unit)', async () => {
    const response = await request('GET', `${chainb}/Jobs?$top=1&$count=true`)
    expect(JSON.parse(response.body)['@odata.count']).toBe(0)
    expect(response.status).toBe(200)
    expect(response.headers['x-access-units-charged']).toBe('1')
  })

  test('the indexer health costs read-action (2 units)', async () => {
    const response = await request('GET', `${indexer}/getHealth()`)
    expect(JSON.parse(response.body).status).toMatch(/^(healthy|degraded|unhealthy|unknown)$/)
    expect(response.status).toBe(200)
    expect(response.headers['x-access-units-charged']).toBe('2')
  })

  test('getJobStatus of an unknown job: 404 JOB_NOT_FOUND, refunded', async () => {
    const response = await request('POST', `${chainb}/getJobStatus`, JSON.stringify({ jobId: cds.utils.uuid() }))
    expect(JSON.parse(response.body).error.code).toBe('JOB_NOT_FOUND')
    expect(response.status).toBe(404)
    expect(response.headers['x-access-units-charged']).toBe('0')
  })
})

/** What the hosted surface does not have, under both spellings and in the variants a client might try: 403 (or 400 for ambiguous forms), nothing charged. */
const closed: [string, string, string][] = [
  ['wallet session', 'POST', '{chainb}/connectWallet'],
  ['wallet sessions set', 'GET', '{chainb}/WalletSessions'],
  ['sendNight', 'POST', '{chainb}/sendNight'],
  ['sendNight bound name', 'POST', '{chainb}/ChainBService.sendNight'],
  ['sendNight, encoded letter', 'POST', '{chainb}/%73endNight'],
  ['sendNight, trailing slash', 'POST', '{chainb}/sendNight/'],
  ['contract deployment', 'POST', '{chainb}/deployContract'],
  ['contract call', 'POST', '{chainb}/submitContractCall'],
  ['dust registration', 'POST', '{chainb}/registerForDustGeneration'],
  ['grant administration', 'POST', '{chainb}/createAgentGrant'],
  ['agent grants set', 'GET', '{chainb}/AgentGrants'],
  ['crawler pause', 'POST', '{indexer}/pauseCrawler'],
  ['crawler resume', 'POST', '{indexer}/resumeCrawler'],
  ['reindex', 'POST', '{indexer}/reindexFromHeight'],
  ['$batch', 'POST', '{chainb}/$batch'],
  ['write to an entity set', 'POST', '{chainb}/Jobs'],
  ['upper-case service', 'GET', '{CHAINB}/Jobs'],
  ['dot segment to admin', 'GET', '{chainb}/../admin'],
  ['duplicate slash', 'GET', '{chainb}//Jobs'],
]

const admin: [string, string, string][] = [
  ['admin service', 'GET', '/api/v1/admin'],
  ['admin operation', 'POST', '/api/v1/admin/invalidateAllSessions'],
  ['admin, upper case', 'GET', '/API/V1/ADMIN'],
  ['admin, encoded', 'GET', '/api/v1/%61dmin'],
  ['product path of the plugin', 'POST', '/api/v1/nightgate/anchorDocument'],
  ['unknown chain-B spelling', 'GET', '/api/v1/chainbx/Jobs'],
]

describe.each(SPELLINGS)('closed under the $name spelling: refused, nothing charged', ({ chainb, indexer }) => {
  const targetOf = (template: string) => template
    .replace('{chainb}', chainb).replace('{indexer}', indexer).replace('{CHAINB}', chainb.toUpperCase())
  test.each(closed)('%s', async (_name, method, template) => {
    const before = await balanceOf(key.id)
    const entries = (await ledgerOf(key.id)).length
    const response = await request(method, targetOf(template), method === 'POST' ? '{}' : '')
    expect(JSON.parse(response.body).error.code).toMatch(/^[A-Z_]+$/)
    expect([400, 403]).toContain(response.status)
    expect(response.headers['x-access-units-charged']).toBe('0')
    expect(await balanceOf(key.id)).toBe(before)
    expect((await ledgerOf(key.id)).length).toBe(entries)
  })
})

describe('closed plugin-only paths', () => {
  test.each(admin)('%s', async (_name, method, target) => {
    const response = await request(method, target, method === 'POST' ? '{}' : '')
    expect(JSON.parse(response.body).error.code).toMatch(/^[A-Z_]+$/)
    expect([400, 403]).toContain(response.status)
    expect(response.headers['x-access-units-charged']).toBe('0')
  })
})

describe('a repeated write with the same idempotency key is charged once', () => {
  test.each(SPELLINGS)('$name spelling', async ({ chainb }) => {
    const body = JSON.stringify({ sha256: cds.utils.uuid().replace(/-/g, '').padEnd(64, 'a'), idempotencyKey: `once-${chainb}` })
    const first = await request('POST', `${chainb}/anchorDocument`, body)
    const firstJob = JSON.parse(first.body)
    expect(firstJob.jobId).toBeDefined()
    expect(first.status).toBe(200)
    expect(first.headers['x-access-units-charged']).toBe('25')
    const again = await request('POST', `${chainb}/anchorDocument`, body)
    expect(JSON.parse(again.body).jobId).toBe(firstJob.jobId)
    expect(again.headers['x-idempotent-replay']).toBe('true')
    expect(again.headers['x-access-units-charged']).toBe('0')
  })
})

describe('a second key through the gateway sees and changes nothing of the first key\'s chain-B records', () => {
  test.each(SPELLINGS)('$name spelling', async ({ chainb }) => {
    const sha256 = cds.utils.uuid().replace(/-/g, '').padEnd(64, 'b')
    const first = JSON.parse((await request('POST', `${chainb}/anchorDocument`, JSON.stringify({ sha256 }))).body)
    const other = await issueTestKey({ units: 100 })
    const asOther = (method: string, target: string, body = '') =>
      rawRequest(app.url, method, target, { Authorization: `Bearer ${other.key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body)

    const status = await asOther('POST', `${chainb}/getJobStatus`, JSON.stringify({ jobId: first.jobId }))
    expect([status.status, JSON.parse(status.body).error.code]).toEqual([404, 'JOB_NOT_FOUND'])
    for (const set of ['Jobs', 'Documents']) expect(JSON.parse((await asOther('GET', `${chainb}/${set}?$count=true`)).body)['@odata.count']).toBe(0)
    const byKey = await asOther('GET', `${chainb}/Documents(${first.documentId})`)
    expect(byKey.status).toBe(404)
    const verify = await asOther('GET', `${chainb}/verifyDocument(documentId=${first.documentId},providedSha256='${sha256}')`)
    expect(verify.status).toBe(404)
    // Granting on the first key's payload is refused as if it did not exist.
    const grant = await asOther('POST', `${chainb}/grantDisclosure`, JSON.stringify({ payloadHash: sha256, grantee: 'c'.repeat(64), level: 1 }))
    expect([grant.status, JSON.parse(grant.body).error.code]).toEqual([404, 'DOCUMENT_NOT_FOUND'])
    // The two list reads cost 1 each; every refusal is refunded.
    expect(await balanceOf(other.id)).toBe(100 - 2)
  })
})
