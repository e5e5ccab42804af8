import cds from '@sap/cds'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import * as snarkjs from 'snarkjs'
import { runningChainB } from '../support/chain-b.ts'
import { balanceOf, issueTestKey } from '../support/gateway.ts'
import { anchoredDocument, CHAINB, client, fieldOf, settledJob, VERIFY, witnessOf, type Client, type PreparedDocument } from './attest.ts'

/**
 * Every claim kind end to end through the hosted gateway: prepare → anchor → prove (a job) →
 * confirmed → the verify lane, without a key, says valid; the proof checks offline with snarkjs
 * and the verification key. Proofs are real Groth16 proofs; there are few of them (each costs time).
 */

process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_RATE_PER_SECOND = '100000'
process.env.GATEWAY_BURST = '100000'
process.env.CHAIN_B_JOBS_POLL_MS = '20'
const app: { url: string } = cds.test(__dirname + '/../..') as any
// Each test proves a claim: on a busy machine a proof takes well over the default minute.
jest.setTimeout(240_000)

const KEYS = join(__dirname, '..', '..', 'zk', 'keys')
const verificationKey = (circuit: string) => JSON.parse(readFileSync(join(KEYS, circuit, 'verification_key.json'), 'utf8'))

let key: { id: string; key: string }
let alice: Client
let anonymous: Client
let invoice: PreparedDocument
let revised: PreparedDocument

const INVOICE = { id: 'INV-1', total: 1234.5, currency: 'EUR', buyer: { country: 'DE', vatId: 'DE123' }, lines: 3 }
const FIELDS = ['total', 'currency', 'buyer.country', 'buyer.vatId', { field: 'lines', scale: 1 }]

beforeAll(async () => {
  runningChainB()
  key = await issueTestKey({ units: 5000 })
  alice = client(app.url, key.key)
  anonymous = client(app.url)
  invoice = await anchoredDocument(alice, INVOICE, FIELDS)
  revised = await anchoredDocument(alice, { ...INVOICE, total: 999, lines: 4 }, FIELDS)
}, 60_000)
afterAll(() => {
  for (const name of ['GATEWAY_ENABLED', 'GATEWAY_RATE_PER_SECOND', 'GATEWAY_BURST', 'CHAIN_B_JOBS_POLL_MS']) delete process.env[name]
})

/** Issues a claim (charged `price`), follows its job to confirmed, and checks what the verify lane and snarkjs say of it. */
async function provenAttestation(operation: string, body: object, price: string) {
  const accepted = await alice.post(`${CHAINB}/${operation}`, body)
  expect(accepted.data).toMatchObject({ jobId: expect.any(String), status: 'queued', attestationId: expect.any(String) })
  expect(accepted.charged).toBe(price)
  const job = await settledJob(alice, accepted.data.jobId)
  expect(job).toMatchObject({ kind: 'proveAttestation', status: 'confirmed', errorCode: null })

  const row = (await alice.get(`${CHAINB}/Attestations(${accepted.data.attestationId})`)).data
  expect(row).toMatchObject({ status: 'proven', provenTxHash: job.txHash, provenHeight: job.blockHeight })
  const verdict = await anonymous.get(`${VERIFY}/verifyAttestation(attestationId=${accepted.data.attestationId})`)
  expect(verdict.data).toMatchObject({ verified: true, code: 'VALID', txHash: job.txHash, blockHeight: job.blockHeight, circuitId: row.circuitId })
  expect(verdict.charged).toBe('0')
  expect(await snarkjs.groth16.verify(verificationKey(row.circuitId), JSON.parse(row.publicSignals), JSON.parse(row.proof))).toBe(true)
  return { row, job, verdict: verdict.data }
}

test('a field predicate: total >= 1000 proven without revealing the total, valid on the free lane', async () => {
  const field = fieldOf(invoice, 'total')
  const { row } = await provenAttestation('issueFieldPredicateAttestation', { ...witnessOf(invoice, 'total'), value: field.value, scale: field.scale, predicate: 'greaterOrEqual', threshold: '1000' }, '50')
  expect(JSON.parse(row.claim)).toEqual({ fieldKey: field.fieldKey, predicate: 'greaterOrEqual', threshold: '1000', scale: '1000', scaledThreshold: '1000000' })
  // Once proved, the job keeps the call with the proof, not the witness: no value, no salt.
  const request = JSON.parse((await alice.get(`${CHAINB}/Jobs(${row.job_ID})`)).data.request)
  expect(request.prove).toBeUndefined()
  expect(request.call.circuit).toBe('recordAttestations')
  expect(JSON.stringify(request)).not.toContain(String(BigInt('0x' + field.salt)))
  expect(JSON.stringify(request)).not.toContain('"value"')
  // The attestation is the key's own: another key lists none and reads none by id (the verify lane is public).
  const stranger = client(app.url, (await issueTestKey({ units: 10 })).key)
  expect((await stranger.get(`${CHAINB}/Attestations`)).data.value).toEqual([])
  expect((await stranger.get(`${CHAINB}/Attestations(${row.ID})`)).status).toBe(404)
  const state = await anonymous.get(`${VERIFY}/verifyPredicateState(payloadHash='${invoice.payloadHash}',predicate='greaterOrEqual',fieldKey='total',threshold='1000')`)
  expect(state.data).toMatchObject({ verified: true, proven: true, code: 'VALID' })
  const other = await anonymous.get(`${VERIFY}/verifyPredicateState(payloadHash='${invoice.payloadHash}',predicate='greaterOrEqual',fieldKey='total',threshold='1001')`)
  expect(other.data).toMatchObject({ verified: false, code: 'NOT_PROVEN' })
})

test('field equality: the currency is the text whose SHA-256 is public', async () => {
  const { row } = await provenAttestation('issueFieldEqualityAttestation', { ...witnessOf(invoice, 'currency'), expectedValue: 'EUR' }, '50')
  const expectedDigest = JSON.parse(row.claim).expectedDigest
  const state = await anonymous.get(`${VERIFY}/verifyPredicateState(payloadHash='${invoice.payloadHash}',predicate='bytesEquality',fieldKey='currency',expectedDigest='${expectedDigest}')`)
  expect(state.data).toMatchObject({ verified: true, code: 'VALID' })
})

test('field membership: the buyer country is in an allow-list, which member stays hidden', async () => {
  const set = (await alice.post(`${CHAINB}/prepareMembershipSet`, { allowedValuesJson: JSON.stringify(['FR', 'DE', 'IT', 'AT']) })).data
  expect(set).toMatchObject({ memberCount: 4, setRoot: expect.stringMatching(/^[0-9a-f]{64}$/) })
  const { row } = await provenAttestation('issueFieldMembershipAttestation', { ...witnessOf(invoice, 'buyer.country'), value: 'DE', allowedValuesJson: JSON.stringify(['FR', 'DE', 'IT', 'AT']) }, '50')
  expect(JSON.parse(row.claim).setRoot).toBe(set.setRoot)
  const state = await anonymous.get(`${VERIFY}/verifyPredicateState(payloadHash='${invoice.payloadHash}',predicate='setMembership',fieldKey='buyer.country',setRoot='${set.setRoot}')`)
  expect(state.data).toMatchObject({ verified: true, code: 'VALID' })
})

test('document integrity: the revision differs from the invoice only in total and lines', async () => {
  const mask = (1 << 0) | (1 << 4)
  await provenAttestation('issueDocumentIntegrityAttestation', {
    payloadHashA: invoice.payloadHash, payloadHashB: revised.payloadHash, allowedMask: mask, openingAJson: JSON.stringify(invoice.opening), openingBJson: JSON.stringify(revised.opening),
  }, '50')
  const state = await anonymous.get(`${VERIFY}/verifyPredicateState(payloadHash='${invoice.payloadHash}',predicate='documentIntegrity',payloadHashB='${revised.payloadHash}',allowedMask=${mask})`)
  expect(state.data).toMatchObject({ verified: true, code: 'VALID' })
})

test('document diff: the revision differs from the invoice in at least 2 slots', async () => {
  await provenAttestation('issueDocumentDiffAttestation', {
    payloadHashA: invoice.payloadHash, payloadHashB: revised.payloadHash, k: 2, openingAJson: JSON.stringify(invoice.opening), openingBJson: JSON.stringify(revised.opening),
  }, '50')
  const state = await anonymous.get(`${VERIFY}/verifyPredicateState(payloadHash='${invoice.payloadHash}',predicate='documentDiff',payloadHashB='${revised.payloadHash}',k=2)`)
  expect(state.data).toMatchObject({ verified: true, code: 'VALID' })
})

test('a batch of 8 claims: one job, one transaction, duplicates proven once', async () => {
  const total = fieldOf(revised, 'total')
  const lines = fieldOf(revised, 'lines')
  const numeric = (field: typeof total, path: string, predicate: string, threshold: string) => ({ ...witnessOf(revised, path), value: field.value, scale: field.scale, predicate, threshold })
  const claims = [
    numeric(total, 'total', 'lessOrEqual', '1000'), numeric(total, 'total', 'greaterThan', '10'), numeric(total, 'total', 'lessThan', '1000'),
    numeric(lines, 'lines', 'greaterOrEqual', '4'), numeric(lines, 'lines', 'lessOrEqual', '4'), numeric(lines, 'lines', 'greaterThan', '3'),
    { ...witnessOf(revised, 'currency'), predicate: 'bytesEquality', expectedValue: 'EUR' },
    { ...witnessOf(revised, 'buyer.vatId'), predicate: 'bytesEquality', expectedValue: 'DE123' },
  ]
  const before = await balanceOf(key.id)
  const accepted = await alice.post(`${CHAINB}/issueFieldPredicateAttestationBatch`, { payloadHash: revised.payloadHash, claimsJson: JSON.stringify([...claims, claims[0]].slice(0, 8)) })
  expect(accepted.data).toMatchObject({ status: 'queued', droppedDuplicates: 0 })
  expect(accepted.data.claims).toHaveLength(8)
  expect(accepted.charged).toBe('200')
  expect(await balanceOf(key.id)).toBe(before - 200)
  const job = await settledJob(alice, accepted.data.jobId)
  expect(job.status).toBe('confirmed')
  const listed = await alice.get(`${CHAINB}/Attestations?$filter=${encodeURIComponent(`job_ID eq ${accepted.data.jobId}`)}&$orderby=batchIndex`)
  const rows = listed.data.value
  expect(listed.status).toBe(200)
  expect(rows).toHaveLength(8)
  expect(new Set(rows.map((row: { provenTxHash: string }) => row.provenTxHash))).toEqual(new Set([job.txHash]))
  for (const row of rows) expect((await anonymous.get(`${VERIFY}/verifyAttestation(attestationId=${row.ID})`)).data).toMatchObject({ verified: true, code: 'VALID' })

  const twice = await alice.post(`${CHAINB}/issueFieldPredicateAttestationBatch`, { payloadHash: revised.payloadHash, claimsJson: JSON.stringify([numeric(total, 'total', 'greaterOrEqual', '999'), numeric(total, 'total', 'greaterOrEqual', '999')]) })
  expect(twice.data).toMatchObject({ droppedDuplicates: 1 })
  expect(twice.data.claims).toHaveLength(1)
  expect((await settledJob(alice, twice.data.jobId)).status).toBe('confirmed')
})

test('the same request sent at once with one idempotency key: one job, one attestation, charged once', async () => {
  const field = fieldOf(invoice, 'lines')
  const body = { ...witnessOf(invoice, 'lines'), value: field.value, scale: field.scale, predicate: 'greaterOrEqual', threshold: '1', idempotencyKey: 'lines-at-least-one' }
  const before = await balanceOf(key.id)
  const answers = await Promise.all([1, 2, 3].map(() => alice.post(`${CHAINB}/issueFieldPredicateAttestation`, body)))
  expect(new Set(answers.map(answer => answer.data.jobId)).size).toBe(1)
  expect(new Set(answers.map(answer => answer.data.attestationId)).size).toBe(1)
  expect(answers.map(answer => answer.charged).sort()).toEqual(['0', '0', '50'])
  expect(await balanceOf(key.id)).toBe(before - 50)
  expect((await settledJob(alice, answers[0].data.jobId)).status).toBe('confirmed')
  const rows = (await alice.get(`${CHAINB}/Attestations?$filter=${encodeURIComponent(`job_ID eq ${answers[0].data.jobId}`)}`)).data.value
  expect(rows).toHaveLength(1)
})

describe('a proof made by the caller, sponsored', () => {
  async function localProof(attesterId: string, threshold: bigint) {
    const field = fieldOf(invoice, 'lines')
    const decimal = (hex: string) => String(BigInt('0x' + hex))
    const modulus = 21888242871839275222246405745257275088548364400416034343698204186575808495617n
    const input = {
      payload: String(BigInt('0x' + invoice.payloadHash) % modulus), root: decimal(invoice.contentRoot), attester: String(BigInt('0x' + attesterId) % modulus),
      fieldKey: decimal(field.fieldKey), scale: field.scale, threshold: String(threshold), op: '0', value: field.value, salt: decimal(field.salt),
      siblings: field.siblings.map(decimal), dirs: field.dirs.map(dir => (dir ? '1' : '0')),
    }
    return snarkjs.groth16.fullProve(input, join(KEYS, 'field_predicate', 'field_predicate.wasm'), join(KEYS, 'field_predicate', 'field_predicate.zkey'), undefined, undefined, { singleThread: true })
  }

  test('a proof made with snarkjs outside the service is verified, recorded and paid for', async () => {
    const { attesterId } = (await alice.get(`${CHAINB}/getAttesterIdentity()`)).data
    const { proof, publicSignals } = await localProof(attesterId, 10n)
    const tampered = [...publicSignals]
    tampered[5] = '2'
    const before = await balanceOf(key.id)
    const refused = await alice.post(`${CHAINB}/sponsorAttestation`, { circuitId: 'field_predicate', proofJson: JSON.stringify(proof), publicSignalsJson: JSON.stringify(tampered), payloadHash: invoice.payloadHash })
    expect(refused.data.error.code).toBe('INVALID_PROOF')
    expect(refused.status).toBe(400)
    expect(refused.charged).toBe('0')
    expect(await balanceOf(key.id)).toBe(before)
    const raw = await anonymous.post(`${VERIFY}/verifyProof`, { circuitId: 'field_predicate', proofJson: JSON.stringify(proof), publicSignalsJson: JSON.stringify(tampered) })
    expect(raw.data).toMatchObject({ verified: false, code: 'INVALID_PROOF' })

    const accepted = await alice.post(`${CHAINB}/sponsorAttestation`, { circuitId: 'field_predicate', proofJson: JSON.stringify(proof), publicSignalsJson: JSON.stringify(publicSignals), payloadHash: invoice.payloadHash })
    expect(accepted.charged).toBe('25')
    const job = await settledJob(alice, accepted.data.jobId)
    expect(job).toMatchObject({ kind: 'sponsorAttestation', status: 'confirmed' })
    const verdict = await anonymous.post(`${VERIFY}/verifyProof`, { circuitId: 'field_predicate', proofJson: JSON.stringify(proof), publicSignalsJson: JSON.stringify(publicSignals) })
    expect(verdict.data).toMatchObject({ verified: true, code: 'VALID', recorded: true, txHash: job.txHash })
    expect((await anonymous.get(`${VERIFY}/verifyAttestation(attestationId=${accepted.data.attestationId})`)).data).toMatchObject({ verified: true, code: 'VALID' })
  })

  test("another key cannot have the first key's proof recorded as its own: 400 ATTESTER_MISMATCH, not charged", async () => {
    const { attesterId } = (await alice.get(`${CHAINB}/getAttesterIdentity()`)).data
    const { proof, publicSignals } = await localProof(attesterId, 5n)
    const other = await issueTestKey({ units: 100 })
    const refused = await client(app.url, other.key).post(`${CHAINB}/sponsorAttestation`, { circuitId: 'field_predicate', proofJson: JSON.stringify(proof), publicSignalsJson: JSON.stringify(publicSignals), payloadHash: invoice.payloadHash })
    expect(refused.data.error.code).toBe('ATTESTER_MISMATCH')
    expect(refused.charged).toBe('0')
    expect(await balanceOf(other.id)).toBe(100)
    const replay = await alice.post(`${CHAINB}/sponsorAttestation`, { circuitId: 'field_predicate', proofJson: JSON.stringify(proof), publicSignalsJson: JSON.stringify(publicSignals), payloadHash: revised.payloadHash })
    expect(replay.data.error.code).toBe('PAYLOAD_MISMATCH')
    expect(replay.charged).toBe('0')
  })
})
