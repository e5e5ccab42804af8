import cds from '@sap/cds'
import { createHash } from 'node:crypto'
import { produceBlocks, runningChainB } from '../support/chain-b.ts'
import { balanceOf, bearer, issueTestKey, settled } from '../support/gateway.ts'
import { answerOf, connectToolServer, printedConfiguration, refusalOf, type ToolSession } from '../support/mcp.ts'

/**
 * The chain-B tool server against the hosted gateway, as an agent uses it: prepare a document,
 * anchor it and prove claims about its fields (real Groth16 proofs, followed as jobs with progress
 * notifications), verify them on the free lane (also without any key), attest an agent's output,
 * grant and revoke disclosure to another key's attester, and the refusals an agent meets.
 */

process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_RATE_PER_SECOND = '100000'
process.env.GATEWAY_BURST = '100000'
process.env.CHAIN_B_JOBS_POLL_MS = '20'
const app: { url: string } = cds.test(__dirname + '/../..') as any

const INVOICE = { id: 'INV-7', total: 1234.5, currency: 'EUR', buyer: { country: 'DE', vatId: 'DE123' } }
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

let alice: { id: string; key: string }
let bob: { id: string; key: string }
let session: ToolSession
let bobSession: ToolSession
const sessions: ToolSession[] = []

async function started(key: string) {
  const started = await connectToolServer(printedConfiguration('chain-b', key, app.url))
  sessions.push(started)
  return started
}

beforeAll(async () => {
  runningChainB()
  alice = await issueTestKey({ units: 2000 })
  bob = await issueTestKey({ units: 100 })
  ;[session, bobSession] = await Promise.all([started(alice.key), started(bob.key)])
}, 60_000)
// Charges are committed just after each answer: each test lets its last ones land (before the database closes, at the end).
afterEach(() => Promise.all([alice, bob].map(key => settled(key.id))))
afterAll(async () => {
  await Promise.all(sessions.map(started => started.close()))
  for (const name of ['GATEWAY_ENABLED', 'GATEWAY_RATE_PER_SECOND', 'GATEWAY_BURST', 'CHAIN_B_JOBS_POLL_MS']) delete process.env[name]
})

/** The test devnet makes chain-B blocks only on request: one every 100 ms while a tool follows its job. */
async function withBlocks<T>(work: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => produceBlocks(1), 100)
  try {
    return await work()
  } finally {
    clearInterval(timer)
  }
}

/** A chain-B function called over HTTP with a key, as the grantee's own client would. */
async function chainB(key: string, path: string) {
  const response = await fetch(`${app.url}/odata/v4/chainb/${path}`, bearer(key))
  return { status: response.status, body: await response.json() }
}

type Field = { field: string; fieldKey: string; value: string; scale: string; salt: string; siblings: string[]; dirs: boolean[]; valueDigest?: string }

describe('prepare, anchor, prove and verify: the flow an agent follows', () => {
  let prepared: { payloadHash: string; contentRoot: string; schemaId: string; fields: Field[]; opening: { saltSeed: string } }
  const PROOF_FIELDS = ['total', 'currency', { field: 'buyer.country', kind: 'bytes' }]
  let documentId: string
  let anchorJobId: string
  let attestationId: string
  const field = (path: string) => prepared.fields.find(candidate => candidate.field === path)!
  const witness = (path: string) => ({ payloadHash: prepared.payloadHash, fieldKey: field(path).fieldKey, fieldSalt: field(path).salt, siblings: field(path).siblings, dirs: field(path).dirs })

  test('prepare_document_proof takes the document as an object, records nothing, and answers each field\'s witness', async () => {
    prepared = answerOf(await session.call('prepare_document_proof', { document: INVOICE, proofFields: PROOF_FIELDS }))
    expect(prepared).toMatchObject({ payloadHash: expect.stringMatching(/^[0-9a-f]{64}$/), contentRoot: expect.stringMatching(/^[0-9a-f]{64}$/), schemaId: expect.stringMatching(/^[0-9a-f]{64}$/) })
    expect(prepared.fields.map(entry => [entry.field, entry.value, entry.scale])).toEqual([['total', '1234.5', '1000'], ['currency', 'EUR', '0'], ['buyer.country', 'DE', '0']])
    expect(field('total')).toMatchObject({ salt: expect.stringMatching(/^[0-9a-f]{64}$/), siblings: expect.any(Array), dirs: expect.any(Array) })
    expect((prepared as any).units).toEqual({ charged: 2, left: 1998 })
    // JSON text is the same document: the same payload hash (its canonical JSON's SHA-256).
    const asText = answerOf(await session.call('prepare_document_proof', { document: JSON.stringify(INVOICE), proofFields: ['total'] }))
    expect(asText.payloadHash).toBe(prepared.payloadHash)
    expect(asText.payloadHash).toBe(sha256(asText.canonicalDocument))
  })

  test('anchor_document with waitSeconds follows its job to confirmed, reporting progress, and charges each look', async () => {
    const progress: { progress: number; total?: number; message?: string }[] = []
    const answer = await withBlocks(async () => answerOf(await session.call('anchor_document', {
      sha256: prepared.payloadHash, document: INVOICE, proofFields: PROOF_FIELDS, saltSeed: prepared.opening.saltSeed, contentRoot: prepared.contentRoot,
      contentType: 'application/json', metadata: { batch: 7 }, waitSeconds: 60,
    }, { onprogress: notification => progress.push(notification) })))
    expect(answer).toMatchObject({ status: 'queued', jobId: expect.any(String), documentId: expect.any(String) })
    expect(answer.job).toMatchObject({ jobId: answer.jobId, kind: 'anchorDocument', status: 'confirmed', txHash: expect.stringMatching(/^[0-9a-f]{64}$/), blockHeight: expect.any(Number) })
    documentId = answer.documentId
    anchorJobId = answer.jobId
    expect(progress[0]).toMatchObject({ progress: 0, total: 60, message: 'queued' })
    expect(progress.every((step, i) => i === 0 || step.progress > progress[i - 1].progress)).toBe(true)
    expect(progress.every(step => /^(queued|running|submitted|confirmed)\b/.test(step.message!))).toBe(true)
    // The anchor costs 25 units and each look at the job 1; every look is reported, though the SDK's
    // client may drop the last report when it arrives in the same read as the answer.
    const looks = answer.units.charged - 25
    expect(looks).toBeGreaterThanOrEqual(1)
    expect([looks, looks - 1]).toContain(progress.length - 1)
  })

  test('prove_field_predicate proves total >= 1000 with a real proof; the verify tools find it by id, by payload hash and by the claim', async () => {
    const total = field('total')
    const proven = await withBlocks(async () => answerOf(await session.call('prove_field_predicate', {
      ...witness('total'), value: total.value, scale: total.scale, predicate: 'greaterOrEqual', threshold: 1000, unit: 'EUR', waitSeconds: 120,
    }, { timeoutMs: 130_000 })))
    expect(proven).toMatchObject({ status: 'queued', attestationId: expect.any(String), job: { kind: 'proveAttestation', status: 'confirmed' } })
    attestationId = proven.attestationId

    const byId = answerOf(await session.call('verify_attestation', { attestationId }))
    expect(byId).toMatchObject({ verified: true, code: 'VALID', circuitId: 'field_predicate', txHash: proven.job.txHash, blockHeight: proven.job.blockHeight })
    expect(byId.claim).toEqual({ fieldKey: total.fieldKey, predicate: 'greaterOrEqual', threshold: '1000', scale: '1000', scaledThreshold: '1000000', unit: 'EUR' })
    expect(JSON.parse(byId.proof)).toHaveProperty('pi_a')
    // The free lane is not metered: its answers carry no units.
    expect(byId.units).toBeUndefined()

    const byHash = answerOf(await session.call('verify_attestation', { payloadHash: prepared.payloadHash, contentRoot: prepared.contentRoot, schemaId: prepared.schemaId }))
    expect(byHash).toMatchObject({ verified: true, code: 'VALID', contentRootOk: true, schemaOk: true })
    const otherRoot = answerOf(await session.call('verify_attestation', { payloadHash: prepared.payloadHash, contentRoot: field('total').salt }))
    expect(otherRoot).toMatchObject({ verified: false, code: 'CONTENT_ROOT_MISMATCH' })

    const claim = answerOf(await session.call('verify_predicate', { payloadHash: prepared.payloadHash, predicate: 'greaterOrEqual', fieldKey: 'total', threshold: '1000' }))
    expect(claim).toMatchObject({ verified: true, proven: true, code: 'VALID', circuitId: 'field_predicate' })
    const higher = answerOf(await session.call('verify_predicate', { payloadHash: prepared.payloadHash, predicate: 'greaterOrEqual', fieldKey: total.fieldKey, threshold: 2000 }))
    expect(higher).toMatchObject({ verified: false, code: 'NOT_PROVEN' })

    const free = answerOf(await session.call('verify_document', { sha256: prepared.payloadHash }))
    expect(free).toMatchObject({ verified: true, code: 'VALID', contentRoot: prepared.contentRoot, txHash: expect.any(String) })
    expect(free.units).toBeUndefined()
    const own = answerOf(await session.call('verify_document', { documentId, providedSha256: prepared.payloadHash }))
    expect(own).toMatchObject({ verified: true, originalSha256: prepared.payloadHash, anchoredTxHash: free.txHash })
    expect(own.units.charged).toBe(2)
    const wrong = answerOf(await session.call('verify_document', { documentId, providedSha256: sha256('another document') }))
    expect(wrong).toMatchObject({ verified: false, originalSha256: prepared.payloadHash })
  }, 150_000)

  test('prove_field_equality and prove_field_membership: confirmed, and verify_predicate finds both claims', async () => {
    const [equality, membership] = await withBlocks(() => Promise.all([
      session.call('prove_field_equality', { ...witness('currency'), expectedValue: 'EUR', waitSeconds: 150 }, { timeoutMs: 160_000 }),
      session.call('prove_field_membership', { ...witness('buyer.country'), value: 'DE', allowedValues: ['FR', 'DE', 'IT', 'AT'], waitSeconds: 150 }, { timeoutMs: 160_000 }),
    ]))
    expect(answerOf(equality).job).toMatchObject({ status: 'confirmed' })
    expect(answerOf(membership).job).toMatchObject({ status: 'confirmed' })

    const byValue = answerOf(await session.call('verify_predicate', { payloadHash: prepared.payloadHash, predicate: 'bytesEquality', fieldKey: 'currency', expectedValue: 'EUR' }))
    expect(byValue).toMatchObject({ verified: true, code: 'VALID', circuitId: 'field_equality' })
    const byDigest = answerOf(await session.call('verify_predicate', { payloadHash: prepared.payloadHash, predicate: 'bytesEquality', fieldKey: 'currency', expectedDigest: sha256('USD') }))
    expect(byDigest).toMatchObject({ verified: false, code: 'NOT_PROVEN' })

    const { setRoot } = answerOf(await session.call('verify_attestation', { attestationId: answerOf(membership).attestationId })).claim
    const member = answerOf(await session.call('verify_predicate', { payloadHash: prepared.payloadHash, predicate: 'setMembership', fieldKey: 'buyer.country', setRoot }))
    expect(member).toMatchObject({ verified: true, code: 'VALID', circuitId: 'field_membership' })
  }, 180_000)

  test('grant_disclosure and revoke_disclosure to another key\'s attester: its reads follow the grant', async () => {
    const grantee = (await chainB(bob.key, 'getAttesterIdentity()')).body.attesterId
    const document = async () => (await chainB(bob.key, `getDocument(payloadHash='${prepared.payloadHash}')`)).body
    expect(await document()).toMatchObject({ role: 'public_only' })

    const granted = await withBlocks(async () => answerOf(await session.call('grant_disclosure', { payloadHash: prepared.payloadHash, grantee, role: 'legitimate_interest', waitSeconds: 60 })))
    expect(granted).toMatchObject({ status: 'queued', disclosureGrantId: expect.any(String), job: { kind: 'grantDisclosure', status: 'confirmed' } })
    expect(await document()).toMatchObject({ role: 'legitimate_interest', contentType: 'application/json', metadataHash: sha256('{"batch":7}') })

    const revoked = await withBlocks(async () => answerOf(await session.call('revoke_disclosure', { payloadHash: prepared.payloadHash, grantee, waitSeconds: 60 })))
    expect(revoked).toMatchObject({ disclosureGrantId: granted.disclosureGrantId, job: { kind: 'revokeDisclosure', status: 'confirmed' } })
    expect(await document()).toMatchObject({ role: 'public_only' })
    expect(refusalOf(await session.call('revoke_disclosure', { payloadHash: prepared.payloadHash, grantee }))).toMatch(/^Refused \(404 DISCLOSURE_GRANT_NOT_FOUND: /)
  }, 150_000)

  test('get_job_status answers the key\'s own job, and another key\'s job as unknown (404)', async () => {
    const job = answerOf(await session.call('get_job_status', { jobId: anchorJobId }))
    expect(job).toMatchObject({ jobId: anchorJobId, kind: 'anchorDocument', status: 'confirmed', attempt: expect.any(Number), units: { charged: 1 } })
    expect(job.result).toEqual(expect.any(Object))
    const theirs = refusalOf(await bobSession.call('get_job_status', { jobId: anchorJobId }))
    expect(theirs).toMatch(/^Refused \(404 JOB_NOT_FOUND: /)
    expect(JSON.parse(theirs.split('\n')[1])).toMatchObject({ httpStatus: 404, code: 'JOB_NOT_FOUND' })
  })

  test('the verify tools work without any key (the free lane); a metered tool says the key is missing', async () => {
    const keyless = await connectToolServer(printedConfiguration('chain-b', '', app.url))
    sessions.push(keyless)
    expect(keyless.stderr()).toMatch(/no key \(set CHAIN_ACCESS_API_KEY\)/)
    expect(answerOf(await keyless.call('verify_attestation', { attestationId }))).toMatchObject({ verified: true, code: 'VALID' })
    expect(answerOf(await keyless.call('verify_document', { sha256: prepared.payloadHash }))).toMatchObject({ verified: true, code: 'VALID' })
    expect(answerOf(await keyless.call('verify_predicate', { payloadHash: prepared.payloadHash, predicate: 'lessThan', fieldKey: 'total', threshold: '5' }))).toMatchObject({ verified: false, code: 'NOT_PROVEN' })
    expect(refusalOf(await keyless.call('verify_document', { documentId, providedSha256: prepared.payloadHash }))).toMatch(/^The key was refused \(/)
    expect(refusalOf(await keyless.call('get_job_status', { jobId: anchorJobId }))).toMatch(/^The key was refused \(/)
  }, 60_000)
})

test('attest_agent_output anchors the envelope whose SHA-256 anyone can recompute and find', async () => {
  const args = { agentId: 'agent-7', inputHash: sha256('the question'), outputHash: sha256('the answer'), modelId: 'model-1', producedAt: '2026-01-31T12:00:00Z' }
  const answer = await withBlocks(async () => answerOf(await session.call('attest_agent_output', { ...args, waitSeconds: 60 })))
  expect(answer).toMatchObject({ status: 'queued', job: { kind: 'attestAgentOutput', status: 'confirmed' } })
  expect(JSON.parse(answer.envelopeJson)).toEqual({ v: 1, ...args })
  expect(answer.payloadHash).toBe(sha256(answer.envelopeJson))
  expect(answerOf(await session.call('verify_document', { sha256: answer.payloadHash }))).toMatchObject({ verified: true, code: 'VALID' })
}, 60_000)

test('without waitSeconds a write answers the queued job at once, and get_job_status follows it', async () => {
  const accepted = answerOf(await session.call('anchor_document', { sha256: sha256(`plain ${cds.utils.uuid()}`), idempotencyKey: 'plain-anchor' }))
  expect(accepted).toMatchObject({ status: 'queued', units: { charged: 25 } })
  expect(accepted.job).toBeUndefined()
  const progress: string[] = []
  const job = await withBlocks(async () => answerOf(await session.call('get_job_status', { jobId: accepted.jobId, waitSeconds: 60 }, { onprogress: ({ message }) => progress.push(message!) })))
  expect(job).toMatchObject({ jobId: accepted.jobId, status: 'confirmed', txHash: expect.any(String) })
  expect(progress[0]).toMatch(/^(queued|running|submitted)/)
  expect(job.units.charged).toBeGreaterThanOrEqual(2)
}, 60_000)

test('a cancelled wait stops looking at the job (and charging for it)', async () => {
  const accepted = answerOf(await session.call('anchor_document', { sha256: sha256(`cancelled ${cds.utils.uuid()}`) }))
  const controller = new AbortController()
  const looks: string[] = []
  // No blocks come: the job stays on its way, and the wait goes on until it is cancelled.
  const waiting = session.client.callTool({ name: 'get_job_status', arguments: { jobId: accepted.jobId, waitSeconds: 60 } }, undefined, {
    signal: controller.signal,
    onprogress: ({ message }) => {
      looks.push(message!)
      if (looks.length === 2) controller.abort()
    },
  })
  await expect(waiting).rejects.toThrow()
  await settled(alice.id)
  const afterCancel = await balanceOf(alice.id)
  await new Promise(resolve => setTimeout(resolve, 2500))
  await settled(alice.id)
  expect(await balanceOf(alice.id)).toBe(afterCancel)
  expect(answerOf(await withBlocks(() => session.call('get_job_status', { jobId: accepted.jobId, waitSeconds: 30 }))).status).toBe('confirmed')
}, 60_000)

describe('refusals an agent can act on', () => {
  test('a malformed payloadHash is refused by the schema, before any call', async () => {
    const before = await balanceOf(alice.id)
    expect(refusalOf(await session.call('verify_attestation', { payloadHash: 'abc' }))).toMatch(/payloadHash/)
    expect(refusalOf(await session.call('prove_field_predicate', {
      payloadHash: 'not-a-hash', fieldKey: 'total', fieldSalt: sha256('x'), siblings: [], dirs: [], value: '1', predicate: 'greaterOrEqual', threshold: '1',
    }))).toMatch(/payloadHash/)
    await settled(alice.id)
    expect(await balanceOf(alice.id)).toBe(before)
  })

  test('a well-formed payloadHash of no anchored document: the service refuses the proof, nothing is charged', async () => {
    const before = await balanceOf(alice.id)
    // A well-formed witness, each part a field element (below BN254's prime).
    const hash = '0' + sha256('never anchored').slice(1)
    const refused = refusalOf(await session.call('prove_field_predicate', {
      payloadHash: hash, fieldKey: 'total', fieldSalt: hash, siblings: [hash, hash, hash, hash], dirs: [true, true, true, true], value: '5', predicate: 'lessOrEqual', threshold: '9',
    }))
    expect(refused).toMatch(/^Refused \(409 DOCUMENT_NOT_ANCHORED: /)
    expect(answerOf(await session.call('verify_attestation', { payloadHash: hash }))).toMatchObject({ verified: false, code: 'NOT_ANCHORED' })
    await settled(alice.id)
    expect(await balanceOf(alice.id)).toBe(before)
  })

  test('the tools\' own checks: exactly one form of verify_attestation, verify_document, the equality value, the set and the level', async () => {
    const hash = sha256('x')
    const path = { payloadHash: hash, fieldKey: 'f', fieldSalt: hash, siblings: [hash, hash, hash, hash], dirs: [true, false, true, false] }
    const refusals: [string, object, RegExp][] = [
      ['verify_attestation', {}, /exactly one of attestationId and payloadHash/],
      ['verify_attestation', { attestationId: cds.utils.uuid(), payloadHash: hash }, /exactly one of attestationId and payloadHash/],
      ['verify_document', { sha256: hash, documentId: cds.utils.uuid() }, /sha256 alone/],
      ['verify_document', { documentId: cds.utils.uuid() }, /documentId together with providedSha256/],
      ['prove_field_equality', { ...path, expectedValue: 'a', expectedDigest: hash }, /exactly one of expectedValue and expectedDigest/],
      ['prove_field_membership', { ...path, value: 'a', allowedValues: ['a'], setRoot: hash }, /allowedValues, or as setRoot/],
      ['anchor_document', { sha256: hash, document: { a: 1 } }, /document, proofFields and saltSeed go together/],
      ['grant_disclosure', { payloadHash: hash, grantee: hash }, /role .* or level/],
      ['prepare_document_proof', { document: '{not json', proofFields: ['a'] }, /document is not valid JSON/],
    ]
    for (const [tool, args, reason] of refusals) {
      const text = refusalOf(await session.call(tool, args as Record<string, unknown>))
      expect({ tool, text }).toEqual({ tool, text: expect.stringMatching(new RegExp(`^Invalid arguments for ${tool}: .*${reason.source}`)) })
    }
  })

  test('an unknown attestation id answers 404 on the free lane', async () => {
    expect(refusalOf(await session.call('verify_attestation', { attestationId: cds.utils.uuid() }))).toMatch(/^Refused \(404 ATTESTATION_NOT_FOUND: /)
  })
})
