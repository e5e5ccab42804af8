import cds from '@sap/cds'
import { as, CHAINB, chainBAdapter, grantCaller, ledger, produce, randomHash, waitFor, whileChainDown } from './support.ts'

// Disclosure is on chain: the document's attester grants a grantee (an attester id) a level; a
// reader's getDocument answers the fields its level allows, public_only without a grant.
process.env.CHAIN_B_JOBS_POLL_MS = '20'
const { POST, GET, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true

let reader: Awaited<ReturnType<typeof grantCaller>>
let readerId: string
const sha256 = randomHash()
let documentId: string

async function finished(config: object, jobId: string) {
  await waitFor('submitted', async () => (await POST(`${CHAINB}/getJobStatus`, { jobId }, config)).data.status === 'submitted')
  produce(1)
  return waitFor('finished', async () => {
    const job = (await POST(`${CHAINB}/getJobStatus`, { jobId }, config)).data
    return ['confirmed', 'failed'].includes(job.status) && job
  })
}

const documentAs = async (config: object) => (await GET(`${CHAINB}/getDocument(payloadHash='${sha256}')`, config)).data

beforeAll(async () => {
  reader = await grantCaller()
  readerId = (await GET(`${CHAINB}/getAttesterIdentity()`, reader.config)).data.attesterId
  const accepted = (await POST(`${CHAINB}/anchorDocument`, { sha256, contentType: 'text/plain', size: 42, storageRef: 's3://bucket/doc', metadata: '{"batch":7}' }, as('bob'))).data
  documentId = accepted.documentId
  expect((await finished(as('bob'), accepted.jobId)).status).toBe('confirmed')
})

test('the attester identity is the caller\'s own, and the sponsor the service\'s', async () => {
  const bob = (await GET(`${CHAINB}/getAttesterIdentity()`, as('bob'))).data
  expect(bob).toEqual(expect.objectContaining({ attesterId: chainBAdapter().attesterKey('user:bob').id, sponsorId: chainBAdapter().sponsorKey().id }))
  expect(readerId).toBe(chainBAdapter().attesterKey(`grant:${reader.id}`).id)
})

test('the owner sees everything; a reader without a grant public_only; with a grant its level; after revoke public_only again', async () => {
  expect(await documentAs(as('bob'))).toMatchObject({ role: 'owner', storageRef: 's3://bucket/doc', metadata: '{"batch":7}', documentId })

  const publicView = await documentAs(reader.config)
  expect(publicView).toMatchObject({ role: 'public_only', payloadHash: sha256, attesterId: chainBAdapter().attesterKey('user:bob').id, anchoredTxHash: expect.any(String), anchorHeight: expect.any(Number) })
  expect(publicView.contentType ?? null).toBeNull()
  expect(publicView.storageRef ?? null).toBeNull()

  const granted = (await POST(`${CHAINB}/grantDisclosure`, { payloadHash: sha256, grantee: readerId, role: 'legitimate_interest' }, as('bob'))).data
  expect(granted).toMatchObject({ status: 'queued', disclosureGrantId: expect.any(String) })
  expect((await finished(as('bob'), granted.jobId)).status).toBe('confirmed')
  expect(Object.values(ledger().vaultState.documents[sha256])[0].disclosures?.[readerId]).toBe(1)
  const interest = await documentAs(reader.config)
  expect(interest).toMatchObject({ role: 'legitimate_interest', contentType: 'text/plain', size: '42', metadataHash: expect.stringMatching(/^[0-9a-f]{64}$/) })
  expect(interest.storageRef ?? null).toBeNull()

  const upgraded = (await POST(`${CHAINB}/grantDisclosure`, { payloadHash: sha256, grantee: readerId, level: 2 }, as('bob'))).data
  expect((await finished(as('bob'), upgraded.jobId)).status).toBe('confirmed')
  expect(await documentAs(reader.config)).toMatchObject({ role: 'authority', storageRef: 's3://bucket/doc', metadata: '{"batch":7}' })
  const grants = (await GET(`${CHAINB}/DisclosureGrants?$filter=payloadHash eq '${sha256}'&$orderby=createdAt`, as('bob'))).data.value
  expect(grants.map((g: any) => [g.role, g.status])).toEqual([['legitimate_interest', 'revoked'], ['authority', 'active']])

  const revoked = (await POST(`${CHAINB}/revokeDisclosure`, { payloadHash: sha256, grantee: readerId }, as('bob'))).data
  expect(revoked.disclosureGrantId).toBe(upgraded.disclosureGrantId)
  expect((await finished(as('bob'), revoked.jobId)).status).toBe('confirmed')
  const after = await documentAs(reader.config)
  expect(after.role).toBe('public_only')
  expect(after.contentType ?? null).toBeNull()
})

test('owner isolation: another caller\'s job and document answer 404 and are not listed', async () => {
  const bobsJobs = (await GET(`${CHAINB}/Jobs`, as('bob'))).data.value
  expect(bobsJobs.length).toBeGreaterThan(0)
  const job = await POST(`${CHAINB}/getJobStatus`, { jobId: bobsJobs[0].ID }, reader.config)
  expect(job.data.error.code).toBe('JOB_NOT_FOUND')
  expect(job.status).toBe(404)
  expect((await GET(`${CHAINB}/Jobs`, reader.config)).data.value).toEqual([])
  expect((await GET(`${CHAINB}/Documents`, reader.config)).data.value).toEqual([])
  expect((await GET(`${CHAINB}/Documents(${documentId})`, reader.config)).status).toBe(404)
  const verify = await GET(`${CHAINB}/verifyDocument(documentId=${documentId},providedSha256='${sha256}')`, reader.config)
  expect(verify.data.error.code).toBe('DOCUMENT_NOT_FOUND')
  // An operator sees everyone's.
  expect((await GET(`${CHAINB}/Jobs?$filter=owner eq 'bob'`, as('alice'))).data.value.length).toBe(bobsJobs.length)
})

test('a revoked grant\'s queued jobs fail GRANT_REVOKED', async () => {
  const caller = await grantCaller()
  await whileChainDown(async () => {
    const accepted = (await POST(`${CHAINB}/anchorDocument`, { sha256: randomHash() }, caller.config)).data
    const { Jobs } = cds.entities('chainb')
    // Its first try found the devnet away: back in the queue, waiting for its retry.
    await waitFor('queued again', async () => { const row = await SELECT.one.from(Jobs, accepted.jobId); return row.status === 'queued' && row.errorCode === 'CHAIN_B_UNAVAILABLE' })
    await cds.services.ChainBService.emit('GrantRevoked', { grantId: caller.id })
    const job = await waitFor('failed', async () => { const row = await SELECT.one.from(Jobs, accepted.jobId); return row.status === 'failed' && row })
    expect(job).toMatchObject({ errorCode: 'GRANT_REVOKED', refunded: false })
  })
})

describe('bad input: 4xx with a stable code, nothing queued', () => {
  const hash = randomHash()
  const cases: [string, string, object, number, string][] = [
    ['malformed sha256', 'anchorDocument', { sha256: 'abc' }, 400, 'INVALID_HASH'],
    ['sha256 with a 0x prefix', 'anchorDocument', { sha256: '0x' + hash.slice(2) }, 400, 'INVALID_HASH'],
    ['oversized metadata', 'anchorDocument', { sha256: randomHash(), metadata: 'x'.repeat(4097) }, 413, 'METADATA_TOO_LARGE'],
    ['negative size', 'anchorDocument', { sha256: randomHash(), size: -1 }, 400, 'INVALID_SIZE'],
    ['malformed nonce', 'anchorDocument', { sha256: randomHash(), nonce: 'zz' }, 400, 'INVALID_HASH'],
    ['unknown commitment', 'anchorDocument', { sha256: randomHash(), nonce: randomHash() }, 404, 'COMMITMENT_NOT_FOUND'],
    ['malformed commitment', 'commitDocumentAnchor', { commitment: 'nope' }, 400, 'INVALID_HASH'],
    ['malformed agent hash', 'attestAgentOutput', { agentId: 'a', inputHash: 'x', outputHash: hash }, 400, 'INVALID_HASH'],
    ['bad producedAt', 'attestAgentOutput', { agentId: 'a', inputHash: hash, outputHash: hash, producedAt: 'yesterday' }, 400, 'INVALID_TIMESTAMP'],
    ['unknown role', 'grantDisclosure', { payloadHash: hash, grantee: hash, role: 'king' }, 400, 'UNKNOWN_DISCLOSURE_ROLE'],
    ['unknown level', 'grantDisclosure', { payloadHash: hash, grantee: hash, level: 3 }, 400, 'UNKNOWN_DISCLOSURE_ROLE'],
    ['level and role disagree', 'grantDisclosure', { payloadHash: hash, grantee: hash, level: 0, role: 'authority' }, 400, 'UNKNOWN_DISCLOSURE_ROLE'],
    ['granting on a document the caller did not anchor', 'grantDisclosure', { payloadHash: hash, grantee: hash }, 404, 'DOCUMENT_NOT_FOUND'],
    ['revoking a grant that does not exist', 'revokeDisclosure', { payloadHash: hash, grantee: hash }, 404, 'DISCLOSURE_GRANT_NOT_FOUND'],
    ['unknown job', 'getJobStatus', { jobId: cds.utils.uuid() }, 404, 'JOB_NOT_FOUND'],
    ['bad idempotency key', 'anchorDocument', { sha256: randomHash(), idempotencyKey: 'has space' }, 400, 'INVALID_IDEMPOTENCY_KEY'],
  ]
  test.each(cases)('%s', async (_name, operation, body, status, code) => {
    const { Jobs } = cds.entities('chainb')
    const before = (await SELECT.from(Jobs)).length
    const response = await POST(`${CHAINB}/${operation}`, body, as('bob'))
    expect(response.data.error.code).toBe(code)
    expect(response.status).toBe(status)
    expect((await SELECT.from(Jobs)).length).toBe(before)
  })

  test('someone else\'s document: granting answers 404 like an unknown one; its owner anchoring it again 409; another caller anchoring the same hash makes its own anchor', async () => {
    const grant = await POST(`${CHAINB}/grantDisclosure`, { payloadHash: sha256, grantee: readerId }, reader.config)
    expect(grant.data.error.code).toBe('DOCUMENT_NOT_FOUND')
    const again = await POST(`${CHAINB}/anchorDocument`, { sha256 }, as('bob'))
    expect(again.data.error.code).toBe('ALREADY_ANCHORED')
    expect(again.status).toBe(409)
    const own = await POST(`${CHAINB}/anchorDocument`, { sha256 }, reader.config)
    expect(own.status).toBe(200)
    expect(own.data).toMatchObject({ status: 'queued', jobId: expect.any(String) })
  })

  test('an unknown document by payload hash: 404', async () => {
    const response = await GET(`${CHAINB}/getDocument(payloadHash='${randomHash()}')`, as('bob'))
    expect(response.data.error.code).toBe('DOCUMENT_NOT_FOUND')
    expect(response.status).toBe(404)
  })
})
