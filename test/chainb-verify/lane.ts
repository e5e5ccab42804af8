import cds from '@sap/cds'
import { connect } from 'node:net'
import { runningChainB } from '../support/chain-b.ts'
import { parseRawResponse, type RawResponse } from '../support/raw-http.ts'
import { CHAINB, fieldOf, settledJob, witnessOf, type Answer, type PreparedDocument } from '../chainb/attest.ts'
import { randomHash } from '../chainb/support.ts'

/**
 * The free verify lane, asked as anyone would ask it: without a key, under both spellings, each
 * answer valid or not with a code and where on chain. The same scenarios run with the hosted
 * gateway in front (verify-lane.test.ts) and self-hosted (verify-lane-self-hosted.test.ts).
 * One document is anchored and one field predicate proven (a real Groth16 proof) per file.
 */

export const SPELLINGS = [
  { name: 'OData', base: '/odata/v4/chainb-verify' },
  { name: 'plugin', base: '/api/v1/verify' },
]

export interface LaneSetup {
  app: { url: string }
  /** The hosted gateway is in front: every answer says it charged 0 units. Self-hosted, no answer mentions units. */
  hosted: boolean
  /** Headers of a caller who may anchor and attest (an API key hosted, a mocked user self-hosted). */
  ownerHeaders(): Promise<Record<string, string>>
}

const INVOICE = { id: 'INV-7', total: 1234.5, currency: 'EUR', buyer: { country: 'DE' } }
const PROOF_FIELDS = ['total', 'currency', 'buyer.country']

/** The rate limit and burst the scenarios run under, so that only the rate-limit scenario meets the limit. */
export const UNLIMITED = { CHAIN_B_VERIFY_RATE_PER_SECOND: '100000', CHAIN_B_VERIFY_BURST: '100000' }

/** Sets environment variables; answers a function that puts back what was there. */
export function withEnvironment(values: Record<string, string>): () => void {
  const before = Object.fromEntries(Object.keys(values).map(name => [name, process.env[name]]))
  Object.assign(process.env, values)
  return () => {
    for (const [name, value] of Object.entries(before)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  }
}

/** One HTTP/1.1 request on a connection of its own, from `localAddress` (a loopback address) when given. */
function send(url: string, method: string, target: string, headers: Record<string, string>, body: string, localAddress?: string): Promise<RawResponse> {
  const { port } = new URL(url)
  const lines = [`${method} ${target} HTTP/1.1`, `Host: 127.0.0.1:${port}`, 'Connection: close', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)]
  if (body) lines.push(`Content-Length: ${Buffer.byteLength(body)}`)
  return new Promise((resolve, reject) => {
    const socket = connect({ port: Number(port), host: '127.0.0.1', localAddress })
    const chunks: Buffer[] = []
    const answer = () => resolve(parseRawResponse(Buffer.concat(chunks).toString('latin1')))
    socket.on('data', chunk => chunks.push(chunk))
    // A server that refuses a body it will not read may close before all of it is written: its answer counts.
    socket.on('error', error => (chunks.length ? answer() : reject(error)))
    socket.on('end', answer)
    socket.write(lines.join('\r\n') + '\r\n\r\n' + body, 'latin1')
  })
}

const answerOf = (response: RawResponse): Answer => ({
  status: response.status,
  data: /json/.test(response.headers['content-type'] ?? '') && response.body ? JSON.parse(response.body) : response.body,
  charged: response.headers['x-access-units-charged'],
  headers: response.headers,
})

/** A caller with these headers (none: anyone), from `localAddress` when given; `raw` sends a body as it is. */
export function caller(url: string, headers: Record<string, string> = {}, localAddress?: string) {
  const call = async (method: string, target: string, body = '') => {
    const contentType: Record<string, string> = body ? { 'content-type': 'application/json' } : {}
    return answerOf(await send(url, method, target, { ...headers, ...contentType }, body, localAddress))
  }
  return {
    get: (target: string) => call('GET', target),
    post: (target: string, body: object) => call('POST', target, JSON.stringify(body)),
    raw: (method: string, target: string, body: string) => call(method, target, body),
  }
}

export type Caller = ReturnType<typeof caller>

/** What the scenarios look at: one anchored document, one proven and one pending attestation. */
interface Fixture {
  attesterId: string
  document: { payloadHash: string; contentRoot: string; schemaId: string; txHash: string; blockHeight: number }
  proven: { ID: string; txHash: string; blockHeight: number; proof: string; publicSignals: string; fieldKey: string }
  pendingId: string
}

async function anchoredInvoice(owner: Caller) {
  const prepared = await owner.post(`${CHAINB}/prepareDocumentProof`, { documentJson: JSON.stringify(INVOICE), proofFieldsJson: JSON.stringify(PROOF_FIELDS) })
  if (prepared.status !== 200) throw new Error(`prepareDocumentProof: ${prepared.status} ${JSON.stringify(prepared.data)}`)
  const { payloadHash, contentRoot, schemaId } = prepared.data
  const anchor = await owner.post(`${CHAINB}/anchorDocument`, {
    sha256: payloadHash, documentJson: JSON.stringify(INVOICE), proofFieldsJson: JSON.stringify(PROOF_FIELDS), saltSeed: prepared.data.opening.saltSeed,
  })
  if (anchor.status !== 200) throw new Error(`anchorDocument: ${anchor.status} ${JSON.stringify(anchor.data)}`)
  const job = await settledJob(owner, anchor.data.jobId)
  if (job.status !== 'confirmed') throw new Error(`the anchor failed: ${job.errorCode} ${job.errorMessage}`)
  return { prepared: prepared.data as PreparedDocument, document: { payloadHash, contentRoot, schemaId, txHash: job.txHash, blockHeight: job.blockHeight } }
}

/** total >= 1000 about the invoice, proven and recorded on chain. */
async function provenTotalAtLeast1000(owner: Caller, prepared: PreparedDocument) {
  const total = fieldOf(prepared, 'total')
  const accepted = await owner.post(`${CHAINB}/issueFieldPredicateAttestation`, { ...witnessOf(prepared, 'total'), value: total.value, scale: total.scale, predicate: 'greaterOrEqual', threshold: '1000' })
  if (accepted.status !== 200) throw new Error(`issueFieldPredicateAttestation: ${accepted.status} ${JSON.stringify(accepted.data)}`)
  const job = await settledJob(owner, accepted.data.jobId)
  if (job.status !== 'confirmed') throw new Error(`the attestation failed: ${job.errorCode} ${job.errorMessage}`)
  const row = (await owner.get(`${CHAINB}/Attestations(${accepted.data.attestationId})`)).data
  return { ID: row.ID, txHash: job.txHash, blockHeight: job.blockHeight, proof: row.proof, publicSignals: row.publicSignals, fieldKey: total.fieldKey }
}

/** An attestation whose job has not proven it yet, as the issuing operation records it (written here, so no runner can prove it meanwhile). */
async function pendingAttestation(payloadHash: string): Promise<string> {
  const ID = cds.utils.uuid()
  const { Attestations } = cds.entities('chainb')
  await cds.tx(() => cds.ql.INSERT.into(Attestations).entries({
    ID, owner: 'someone-else', kind: 'field-predicate', circuitId: 'field_predicate', payloadHash, attesterId: randomHash(),
    claim: JSON.stringify({ predicate: 'lessOrEqual', threshold: '5000' }), status: 'pending',
  }))
  return ID
}

/** The verify lane's scenarios under both spellings, plus its rate limit and documents. */
export function describeVerifyLane(setup: LaneSetup) {
  const fixture = {} as Fixture
  let anyone: Caller

  /** Every answer of the lane is free: hosted it says 0 units charged, self-hosted it says nothing of units. Never a 5xx. */
  const free = (answer: Answer) => {
    expect(answer.charged).toBe(setup.hosted ? '0' : undefined)
    expect(answer.status).toBeLessThan(500)
    return answer
  }
  const get = async (target: string) => free(await anyone.get(target))
  const post = async (target: string, body: object) => free(await anyone.post(target, body))

  beforeAll(async () => {
    runningChainB()
    const owner = caller(setup.app.url, await setup.ownerHeaders())
    anyone = caller(setup.app.url)
    const { prepared, document } = await anchoredInvoice(owner)
    fixture.document = document
    fixture.attesterId = (await owner.get(`${CHAINB}/getAttesterIdentity()`)).data.attesterId
    fixture.proven = await provenTotalAtLeast1000(owner, prepared)
    fixture.pendingId = await pendingAttestation(document.payloadHash)
  }, 60_000)

  describe.each(SPELLINGS)('under the $name spelling, without a key', ({ base }) => {
    describe('verifyDocument', () => {
      test('an anchored document: verified, where and when on chain, with its content root', async () => {
        const { document } = fixture
        const answer = await get(`${base}/verifyDocument(sha256='${document.payloadHash}')`)
        expect(answer.data).toMatchObject({
          verified: true, code: 'VALID', payloadHash: document.payloadHash, txHash: document.txHash, blockHeight: document.blockHeight,
          contentRoot: document.contentRoot, schemaId: document.schemaId, attesterId: fixture.attesterId,
        })
        expect(Number.isNaN(Date.parse(answer.data.anchoredAt))).toBe(false)
        expect(answer.status).toBe(200)
      })

      test('an unknown hash: 200, not verified, NOT_ANCHORED', async () => {
        const unknown = randomHash()
        const answer = await get(`${base}/verifyDocument(sha256='${unknown}')`)
        expect(answer.data).toMatchObject({ verified: false, code: 'NOT_ANCHORED', payloadHash: unknown, txHash: null, blockHeight: null, anchoredAt: null })
        expect(answer.status).toBe(200)
      })

      test('a malformed hash: 400 INVALID_HASH naming sha256', async () => {
        const answer = await get(`${base}/verifyDocument(sha256='not-a-digest')`)
        expect(answer.data.error).toMatchObject({ code: 'INVALID_HASH', message: expect.stringContaining('sha256') })
        expect(answer.status).toBe(400)
      })
    })

    describe('verifyAttestationState', () => {
      const state = (params: Record<string, string>) =>
        get(`${base}/verifyAttestationState(${Object.entries(params).map(([name, value]) => `${name}='${value}'`).join(',')})`)

      test('the anchored document with its content root and schema id: VALID, where on chain', async () => {
        const { payloadHash, contentRoot, schemaId, txHash, blockHeight } = fixture.document
        const answer = await state({ payloadHash, contentRoot, schemaId })
        expect(answer.data).toMatchObject({ verified: true, code: 'VALID', attested: true, contentRootOk: true, schemaOk: true, contentRoot, schemaId, txHash, blockHeight, attesterId: fixture.attesterId })
        expect(answer.status).toBe(200)
      })

      test('another content root: CONTENT_ROOT_MISMATCH, naming the anchored one', async () => {
        const { payloadHash, contentRoot, schemaId } = fixture.document
        const answer = await state({ payloadHash, contentRoot: randomHash(), schemaId })
        expect(answer.data).toMatchObject({ verified: false, code: 'CONTENT_ROOT_MISMATCH', attested: true, contentRootOk: false, schemaOk: true, contentRoot })
        expect(answer.status).toBe(200)
      })

      test('another schema id: SCHEMA_MISMATCH', async () => {
        const { payloadHash, contentRoot, schemaId } = fixture.document
        const answer = await state({ payloadHash, contentRoot, schemaId: randomHash() })
        expect(answer.data).toMatchObject({ verified: false, code: 'SCHEMA_MISMATCH', attested: true, contentRootOk: true, schemaOk: false, schemaId })
        expect(answer.status).toBe(200)
      })

      test('a document never anchored: NOT_ANCHORED', async () => {
        const answer = await state({ payloadHash: randomHash() })
        expect(answer.data).toMatchObject({ verified: false, code: 'NOT_ANCHORED', attested: false, txHash: null, blockHeight: null })
        expect(answer.status).toBe(200)
      })

      test('a malformed content root: 400 INVALID_HASH naming contentRoot', async () => {
        const answer = await state({ payloadHash: fixture.document.payloadHash, contentRoot: 'xyz' })
        expect(answer.data.error).toMatchObject({ code: 'INVALID_HASH', message: expect.stringContaining('contentRoot') })
        expect(answer.status).toBe(400)
      })
    })

    describe('verifyAttestation', () => {
      test('a proven attestation: VALID, with its proof, public signals and where it was recorded', async () => {
        const { proven } = fixture
        const answer = await get(`${base}/verifyAttestation(attestationId=${proven.ID})`)
        expect(answer.data).toMatchObject({
          verified: true, code: 'VALID', attestationId: proven.ID, kind: 'field-predicate', circuitId: 'field_predicate',
          payloadHash: fixture.document.payloadHash, attesterId: fixture.attesterId, proof: proven.proof, publicSignals: proven.publicSignals,
          txHash: proven.txHash, blockHeight: proven.blockHeight,
        })
        expect(JSON.parse(answer.data.claim)).toMatchObject({ predicate: 'greaterOrEqual', threshold: '1000' })
        expect(answer.status).toBe(200)
      })

      test('an attestation whose job has not run yet: NOT_PROVEN_YET, nowhere on chain', async () => {
        const answer = await get(`${base}/verifyAttestation(attestationId=${fixture.pendingId})`)
        expect(answer.data).toMatchObject({ verified: false, code: 'NOT_PROVEN_YET', attestationId: fixture.pendingId, proof: null, txHash: null, blockHeight: null })
        expect(answer.status).toBe(200)
      })

      test('an unknown id: 404 ATTESTATION_NOT_FOUND', async () => {
        const answer = await get(`${base}/verifyAttestation(attestationId=${cds.utils.uuid()})`)
        expect(answer.data.error).toMatchObject({ code: 'ATTESTATION_NOT_FOUND', message: expect.stringContaining('no attestation') })
        expect(answer.status).toBe(404)
      })

      test.each([
        ['a quoted text', "attestationId='not-a-uuid'"],
        ['a bare word', 'attestationId=nope'],
      ])('an id that is no UUID (%s): 400 INVALID_UUID', async (_name, parameter) => {
        const answer = await get(`${base}/verifyAttestation(${parameter})`)
        expect(answer.data.error).toMatchObject({ code: 'INVALID_UUID', target: 'attestationId', message: expect.stringContaining('attestationId must be a UUID') })
        expect(answer.status).toBe(400)
      })
    })

    describe('verifyPredicateState', () => {
      const predicateState = (params: Record<string, string>) =>
        get(`${base}/verifyPredicateState(${Object.entries(params).map(([name, value]) => `${name}='${value}'`).join(',')})`)
      const recorded = () => ({ payloadHash: fixture.document.payloadHash, predicate: 'greaterOrEqual', fieldKey: 'total', threshold: '1000' })

      test('the recorded claim: VALID, where it was recorded', async () => {
        const answer = await predicateState(recorded())
        expect(answer.data).toMatchObject({ verified: true, proven: true, code: 'VALID', circuitId: 'field_predicate', attesterId: fixture.attesterId, txHash: fixture.proven.txHash, blockHeight: fixture.proven.blockHeight })
        expect(answer.status).toBe(200)
      })

      test('the recorded claim by its attester, and by its field key in hex: VALID', async () => {
        const answer = await predicateState({ ...recorded(), fieldKey: fixture.proven.fieldKey, attesterId: fixture.attesterId })
        expect(answer.data).toMatchObject({ verified: true, code: 'VALID', txHash: fixture.proven.txHash })
        expect(answer.status).toBe(200)
      })

      test.each([
        ['a different threshold', { threshold: '1001' }],
        ['another predicate', { predicate: 'lessOrEqual' }],
        ['another field', { fieldKey: 'currency' }],
        ['another attester', { attesterId: 'ab'.repeat(32) }],
      ])('%s: NOT_PROVEN', async (_name, change) => {
        const answer = await predicateState({ ...recorded(), ...change })
        expect(answer.data).toMatchObject({ verified: false, proven: false, code: 'NOT_PROVEN', txHash: null, blockHeight: null })
        expect(answer.status).toBe(200)
      })

      test('a document never anchored: NOT_ANCHORED', async () => {
        const answer = await predicateState({ ...recorded(), payloadHash: randomHash() })
        expect(answer.data).toMatchObject({ verified: false, proven: false, code: 'NOT_ANCHORED' })
        expect(answer.status).toBe(200)
      })

      test.each(['between', 'toString', '__proto__', 'constructor'])('an unknown predicate (%s): 400 UNKNOWN_PREDICATE listing the known ones', async predicate => {
        const answer = await predicateState({ ...recorded(), predicate })
        expect(answer.data.error).toMatchObject({ code: 'UNKNOWN_PREDICATE', message: expect.stringContaining('greaterOrEqual') })
        expect(answer.status).toBe(400)
      })

      test('a field predicate without its threshold: 400 MISSING_PARAMETER naming threshold', async () => {
        const { threshold: _omitted, ...withoutThreshold } = recorded()
        const answer = await predicateState(withoutThreshold)
        expect(answer.data.error).toMatchObject({ code: 'MISSING_PARAMETER', message: expect.stringContaining('threshold') })
        expect(answer.status).toBe(400)
      })

      test.each([
        ['a document comparison without its mask', 'documentIntegrity', '', 'MISSING_PARAMETER', 'allowedMask'],
        ['a negative mask', 'documentIntegrity', ',allowedMask=-1', 'INVALID_MASK', 'allowedMask'],
        ['a document difference without k', 'documentDiff', '', 'MISSING_PARAMETER', 'k'],
        ['a negative k', 'documentDiff', ',k=-2', 'INVALID_K', 'k'],
      ])('%s: 400 %s', async (_name, predicate, parameter, code, named) => {
        const answer = await get(`${base}/verifyPredicateState(payloadHash='${fixture.document.payloadHash}',predicate='${predicate}',payloadHashB='${randomHash()}'${parameter})`)
        expect(answer.data.error).toMatchObject({ code, target: named, message: expect.stringContaining(named) })
        expect(answer.status).toBe(400)
      })
    })

    describe('verifyProof', () => {
      const recordedProof = () => ({ circuitId: 'field_predicate', proofJson: fixture.proven.proof, publicSignalsJson: fixture.proven.publicSignals })
      const verifyProof = (body: object) => post(`${base}/verifyProof`, body)

      test('the recorded proof: VALID, recorded, where on chain', async () => {
        const answer = await verifyProof(recordedProof())
        expect(answer.data).toMatchObject({ verified: true, code: 'VALID', circuitId: 'field_predicate', recorded: true, txHash: fixture.proven.txHash, blockHeight: fixture.proven.blockHeight, attesterId: fixture.attesterId })
        expect(answer.status).toBe(200)
      })

      test('a public signal changed (a higher threshold claimed): INVALID_PROOF', async () => {
        const signals = JSON.parse(fixture.proven.publicSignals) as string[]
        signals[5] = String(BigInt(signals[5]) + 1n)
        const answer = await verifyProof({ ...recordedProof(), publicSignalsJson: JSON.stringify(signals) })
        expect(answer.data).toMatchObject({ verified: false, code: 'INVALID_PROOF', recorded: false, txHash: null })
        expect(answer.status).toBe(200)
      })

      test.each([
        ['pi_a replaced by another curve point (pi_c)', (proof: any) => ({ ...proof, pi_a: proof.pi_c })],
        ['pi_a moved off the curve', (proof: any) => ({ ...proof, pi_a: [String(BigInt(proof.pi_a[0]) + 1n), ...proof.pi_a.slice(1)] })],
      ])('%s: INVALID_PROOF', async (_name, tamper) => {
        const answer = await verifyProof({ ...recordedProof(), proofJson: JSON.stringify(tamper(JSON.parse(fixture.proven.proof))) })
        expect(answer.data).toMatchObject({ verified: false, code: 'INVALID_PROOF', recorded: false })
        expect(answer.status).toBe(200)
      })

      test.each([
        ['an unknown circuit', 'UNKNOWN_CIRCUIT', { circuitId: 'field_magic' }, 'circuitId'],
        ['a proof that is no Groth16 proof', 'INVALID_PROOF_FORMAT', { proofJson: JSON.stringify({ pi_a: 'x' }) }, 'proofJson'],
        ['too few public signals', 'INVALID_PUBLIC_SIGNALS', { publicSignalsJson: JSON.stringify(['1', '2']) }, 'publicSignals'],
        ['public signals that are no numbers', 'INVALID_PUBLIC_SIGNALS', { publicSignalsJson: JSON.stringify(['a', 'b', 'c', 'd', 'e', 'f', 'g']) }, 'publicSignals'],
        ['a proof that is no JSON', 'INVALID_JSON', { proofJson: '{"pi_a": [' }, 'proofJson'],
        ['public signals that are no JSON', 'INVALID_JSON', { publicSignalsJson: '[1, 2' }, 'publicSignalsJson'],
        ['a proof text over 8 KiB', 'REQUEST_TOO_LARGE', { proofJson: JSON.stringify({ padding: 'x'.repeat(8 * 1024) }) }, 'proofJson'],
        ['a public-signal text over 8 KiB', 'REQUEST_TOO_LARGE', { publicSignalsJson: JSON.stringify(Array(2100).fill('1')) }, 'publicSignalsJson'],
      ])('%s: 400 %s', async (_name, code, change, named) => {
        const answer = await verifyProof({ ...recordedProof(), ...change })
        expect(answer.data.error).toMatchObject({ code, message: expect.stringContaining(named) })
        expect(answer.status).toBe(400)
      })

      test('a missing parameter: 400 naming it', async () => {
        const { publicSignalsJson: _omitted, ...withoutSignals } = recordedProof()
        const answer = await verifyProof(withoutSignals)
        expect(answer.data.error).toMatchObject({ code: 'MISSING_PARAMETER', target: 'publicSignalsJson' })
        expect(answer.status).toBe(400)
      })

      test('a body that is no JSON: 400 MALFORMED_JSON', async () => {
        const answer = free(await anyone.raw('POST', `${base}/verifyProof`, '{"circuitId": "field_predicate", '))
        expect(answer.data.error.code).toBe('MALFORMED_JSON')
        expect(answer.status).toBe(400)
      })

      test("a body over the server's body limit: 413 PAYLOAD_TOO_LARGE", async () => {
        const answer = free(await anyone.post(`${base}/verifyProof`, { ...recordedProof(), proofJson: 'x'.repeat(1024 * 1024) }))
        expect(answer.data.error.code).toBe('PAYLOAD_TOO_LARGE')
        expect(answer.status).toBe(413)
      })
    })

    test('the service document and $metadata: free, no key needed', async () => {
      const document = await get(`${base}/`)
      expect(document.data).toMatchObject({ '@odata.context': '$metadata', value: [] })
      expect(document.status).toBe(200)
      const metadata = await get(`${base}/$metadata`)
      expect(metadata.data).toContain('verifyProof')
      expect(metadata.status).toBe(200)
    })
  })

  test('the rate limit per client address: the 4th quick call answers 429 RATE_LIMITED with Retry-After, under either spelling; another address goes on', async () => {
    const restore = withEnvironment({ CHAIN_B_VERIFY_RATE_PER_SECOND: '1', CHAIN_B_VERIFY_BURST: '3' })
    try {
      const unknown = randomHash()
      const [odata, plugin] = SPELLINGS.map(({ base }) => `${base}/verifyDocument(sha256='${unknown}')`)
      const answers: Answer[] = []
      // One bucket per address, whichever spelling: these four calls share it.
      for (const target of [odata, plugin, odata, plugin]) answers.push(free(await anyone.get(target)))
      expect(answers.slice(0, 3).map(answer => answer.data.code)).toEqual(['NOT_ANCHORED', 'NOT_ANCHORED', 'NOT_ANCHORED'])
      const limited = answers[3]
      expect(limited.data.error).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringContaining('retry after') })
      expect(limited.status).toBe(429)
      expect(limited.headers['retry-after']).toMatch(/^[1-9][0-9]*$/)

      const elsewhere = free(await caller(setup.app.url, {}, '127.0.0.2').get(odata))
      expect(elsewhere.data).toMatchObject({ verified: false, code: 'NOT_ANCHORED' })
      expect(elsewhere.status).toBe(200)
    } finally {
      restore()
    }
  })

  test('behind a trusted router each forwarded client has a bucket of its own; an untrusted peer\'s X-Forwarded-For is ignored', async () => {
    const restore = withEnvironment({ CHAIN_B_VERIFY_RATE_PER_SECOND: '1', CHAIN_B_VERIFY_BURST: '3', GATEWAY_TRUSTED_PROXIES: '127.0.0.6' })
    try {
      const target = `${SPELLINGS[0].base}/verifyDocument(sha256='${randomHash()}')`
      const status = async (from: string, client: string) => free(await caller(setup.app.url, { 'x-forwarded-for': client }, from).get(target)).status
      const behindRouter = []
      for (let i = 0; i < 4; i++) behindRouter.push(await status('127.0.0.6', `203.0.113.1, 198.51.100.${i === 3 ? 31 : 30}`))
      expect(behindRouter).toEqual([200, 200, 200, 200])
      expect(await status('127.0.0.6', '198.51.100.30')).toBe(429)
      const untrusted = []
      for (let i = 0; i < 4; i++) untrusted.push(await status('127.0.0.7', `198.51.100.${40 + i}`))
      expect(untrusted).toEqual([200, 200, 200, 429])
    } finally {
      restore()
    }
  })
}
