import cds from '@sap/cds'
import { join } from 'node:path'
import * as snarkjs from 'snarkjs'
import { sponsoredCall } from '../../srv/chainb/jobs/sign.ts'
import { runningChainB } from '../support/chain-b.ts'
import { balanceOf, issueTestKey } from '../support/gateway.ts'
import { anchoredDocument, CHAINB, client, fieldOf, settledJob, witnessOf, type Client, type PreparedDocument } from './attest.ts'
import { chainBAdapter } from './support.ts'

/**
 * What is refused, through the hosted gateway: claims that do not hold, witnesses that do not lead
 * to the anchored root, proofs that do not verify or are bound to another document, root or
 * attester, values outside a field's scale, sets above 64 members, more than 16 fields, more than
 * 8 claims. Each answers a 4xx with a stable code; nothing is queued, recorded or charged. One
 * real proof is made (outside the service, with snarkjs) to tamper with.
 */

process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_RATE_PER_SECOND = '100000'
process.env.GATEWAY_BURST = '100000'
process.env.CHAIN_B_JOBS_POLL_MS = '20'
const app: { url: string } = cds.test(__dirname + '/../..') as any

const KEYS = join(__dirname, '..', '..', 'zk', 'keys')
const MODULUS = 21888242871839275222246405745257275088548364400416034343698204186575808495617n
const decimal = (hex: string) => String(BigInt('0x' + hex) % MODULUS)

let key: { id: string; key: string }
let alice: Client
let passport: PreparedDocument
let amended: PreparedDocument
let attesterId: string

const PASSPORT = { name: 'Ada', age: 36, country: 'DE', height: 1.72 }
const FIELDS = [{ field: 'age', scale: 1 }, 'country', 'height', 'name']

beforeAll(async () => {
  runningChainB()
  key = await issueTestKey({ units: 1000 })
  alice = client(app.url, key.key)
  passport = await anchoredDocument(alice, PASSPORT, FIELDS)
  amended = await anchoredDocument(alice, { ...PASSPORT, height: 1.73 }, FIELDS)
  attesterId = (await alice.get(`${CHAINB}/getAttesterIdentity()`)).data.attesterId
}, 60_000)
afterAll(() => {
  for (const name of ['GATEWAY_ENABLED', 'GATEWAY_RATE_PER_SECOND', 'GATEWAY_BURST', 'CHAIN_B_JOBS_POLL_MS']) delete process.env[name]
})

const recorded = async () => (await cds.db.run(cds.ql.SELECT.from('chainb.Attestations').columns('ID'))).length
const jobs = async () => (await cds.db.run(cds.ql.SELECT.from('chainb.Jobs').columns('ID'))).length

/** The call is refused with status and code, and changes nothing: no charge, no job, no attestation. */
async function refused(operation: string, body: object, status: number, code: string) {
  const [units, attestations, queued] = [await balanceOf(key.id), await recorded(), await jobs()]
  const answer = await alice.post(`${CHAINB}/${operation}`, body)
  expect(answer.data?.error?.code).toBe(code)
  expect(answer.status).toBe(status)
  expect(answer.charged).toBe('0')
  expect(await balanceOf(key.id)).toBe(units)
  expect(await recorded()).toBe(attestations)
  expect(await jobs()).toBe(queued)
  return answer.data.error
}

const age = () => ({ ...witnessOf(passport, 'age'), value: '36', scale: '1' })

describe('claims the service will not prove', () => {
  test('a predicate that does not hold: 422 CLAIM_FALSE', async () => {
    await refused('issueFieldPredicateAttestation', { ...age(), predicate: 'lessThan', threshold: '18' }, 422, 'CLAIM_FALSE')
    await refused('issueFieldPredicateAttestation', { ...age(), predicate: 'greaterThan', threshold: '36' }, 422, 'CLAIM_FALSE')
  })

  test('a value other than the anchored one, or another salt, path or scale: 400 WITNESS_MISMATCH', async () => {
    await refused('issueFieldPredicateAttestation', { ...age(), value: '17', predicate: '<=', threshold: '18' }, 400, 'WITNESS_MISMATCH')
    await refused('issueFieldPredicateAttestation', { ...age(), fieldSalt: fieldOf(passport, 'country').salt, predicate: '>=', threshold: '18' }, 400, 'WITNESS_MISMATCH')
    await refused('issueFieldPredicateAttestation', { ...age(), scale: '1000', predicate: '>=', threshold: '18' }, 400, 'WITNESS_MISMATCH')
    await refused('issueFieldPredicateAttestation', { ...age(), payloadHash: amended.payloadHash, predicate: '>=', threshold: '18' }, 400, 'WITNESS_MISMATCH')
  })

  test('a value or threshold outside the field’s scale: 400 VALUE_OUT_OF_SCALE', async () => {
    const height = { ...witnessOf(passport, 'height'), value: '1.72', scale: '1000' }
    await refused('issueFieldPredicateAttestation', { ...height, value: '1.7201', predicate: '<=', threshold: '2' }, 400, 'VALUE_OUT_OF_SCALE')
    await refused('issueFieldPredicateAttestation', { ...height, predicate: '<=', threshold: '1.7205' }, 400, 'VALUE_OUT_OF_SCALE')
    await refused('issueFieldPredicateAttestation', { ...height, predicate: '<=', threshold: '-1' }, 400, 'VALUE_OUT_OF_SCALE')
    await refused('issueFieldPredicateAttestation', { ...age(), predicate: '<=', threshold: '18446744073709551616' }, 400, 'VALUE_OUT_OF_SCALE')
    await refused('prepareDocumentProof', { documentJson: '{"x":1.23456}', proofFieldsJson: '["x"]' }, 400, 'VALUE_OUT_OF_SCALE')
  })

  test('equality with another text, membership outside the set: 422', async () => {
    await refused('issueFieldEqualityAttestation', { ...witnessOf(passport, 'country'), expectedValue: 'FR' }, 422, 'CLAIM_FALSE')
    await refused('issueFieldMembershipAttestation', { ...witnessOf(passport, 'country'), value: 'DE', allowedValuesJson: '["FR","IT"]' }, 422, 'NOT_A_MEMBER')
  })

  test('a set above 64 members, more than 16 fields, more than 8 claims: 400', async () => {
    const many = JSON.stringify(Array.from({ length: 65 }, (_, i) => `member-${i}`))
    await refused('prepareMembershipSet', { allowedValuesJson: many }, 400, 'SET_TOO_LARGE')
    await refused('issueFieldMembershipAttestation', { ...witnessOf(passport, 'country'), value: 'DE', allowedValuesJson: many }, 400, 'SET_TOO_LARGE')
    await refused('prepareDocumentProof', { documentJson: '{}', proofFieldsJson: JSON.stringify(Array.from({ length: 17 }, (_, i) => `f${i}`)) }, 400, 'TOO_MANY_FIELDS')
    const claim = { ...age(), predicate: '>=', threshold: '18' }
    await refused('issueFieldPredicateAttestationBatch', { claimsJson: JSON.stringify(Array(9).fill(claim)) }, 400, 'TOO_MANY_CLAIMS')
  })

  test('comparisons: a change outside the mask, too few differences, an empty constraint, swapped openings', async () => {
    const pair = { payloadHashA: passport.payloadHash, payloadHashB: amended.payloadHash, openingAJson: JSON.stringify(passport.opening), openingBJson: JSON.stringify(amended.opening) }
    await refused('issueDocumentIntegrityAttestation', { ...pair, allowedMask: 1 }, 422, 'CLAIM_FALSE')
    await refused('issueDocumentIntegrityAttestation', { ...pair, allowedMask: 0xffff }, 400, 'VACUOUS_MASK')
    await refused('issueDocumentDiffAttestation', { ...pair, k: 2 }, 422, 'CLAIM_FALSE')
    await refused('issueDocumentDiffAttestation', { ...pair, k: 0 }, 400, 'INVALID_K')
    await refused('issueDocumentDiffAttestation', { ...pair, k: 1, openingAJson: pair.openingBJson }, 400, 'WITNESS_MISMATCH')
    await refused('issueDocumentDiffAttestation', { ...pair, k: 1, payloadHashB: passport.payloadHash }, 400, 'SAME_DOCUMENT')
  })

  test('documents that are not anchored, or anchored without a content root: 409', async () => {
    const loose = (await alice.post(`${CHAINB}/prepareDocumentProof`, { documentJson: '{"age":40}', proofFieldsJson: '[{"field":"age","scale":1}]' })).data
    const witness = { payloadHash: loose.payloadHash, fieldKey: loose.fields[0].fieldKey, value: '40', scale: '1', fieldSalt: loose.fields[0].salt, siblingsJson: JSON.stringify(loose.fields[0].siblings), dirsJson: JSON.stringify(loose.fields[0].dirs), predicate: '>=', threshold: '18' }
    await refused('issueFieldPredicateAttestation', witness, 409, 'DOCUMENT_NOT_ANCHORED')
    const plain = await alice.post(`${CHAINB}/anchorDocument`, { sha256: loose.payloadHash })
    expect((await settledJob(alice, plain.data.jobId)).status).toBe('confirmed')
    await refused('issueFieldPredicateAttestation', witness, 409, 'NO_CONTENT_ROOT')
  })
})

describe('proofs made outside the service', () => {
  let proof: snarkjs.Groth16Proof
  let publicSignals: string[]

  /** A field predicate proof of `age >= threshold`, made with snarkjs and the committed keys. */
  async function prove(document: PreparedDocument, overrides: Record<string, string> = {}) {
    const field = fieldOf(document, 'age')
    const input = {
      payload: decimal(document.payloadHash), root: decimal(document.contentRoot), attester: decimal(attesterId), fieldKey: decimal(field.fieldKey),
      scale: '1', threshold: '18', op: '1', value: '36', salt: decimal(field.salt), siblings: field.siblings.map(decimal), dirs: field.dirs.map(dir => (dir ? '1' : '0')),
      ...overrides,
    }
    return snarkjs.groth16.fullProve(input, join(KEYS, 'field_predicate', 'field_predicate.wasm'), join(KEYS, 'field_predicate', 'field_predicate.zkey'), undefined, undefined, { singleThread: true })
  }

  beforeAll(async () => {
    ({ proof, publicSignals } = await prove(passport))
  })

  const sponsor = (overrides: { proof?: unknown; publicSignals?: string[]; payloadHash?: string } = {}) => ({
    circuitId: 'field_predicate', proofJson: JSON.stringify(overrides.proof ?? proof), publicSignalsJson: JSON.stringify(overrides.publicSignals ?? publicSignals),
    payloadHash: overrides.payloadHash ?? passport.payloadHash,
  })
  const withSignal = (index: number, value: string) => publicSignals.map((signal, i) => (i === index ? value : signal))

  test('a tampered proof, a changed public input or threshold: 400 INVALID_PROOF', async () => {
    const bent = { ...proof, pi_a: [proof.pi_b[0][0], ...proof.pi_a.slice(1)] }
    await refused('sponsorAttestation', sponsor({ proof: bent }), 400, 'INVALID_PROOF')
    await refused('sponsorAttestation', sponsor({ publicSignals: withSignal(5, '17') }), 400, 'INVALID_PROOF')
    await refused('sponsorAttestation', sponsor({ publicSignals: withSignal(6, '0') }), 400, 'INVALID_PROOF')
    await refused('sponsorAttestation', sponsor({ publicSignals: withSignal(3, '1') }), 400, 'INVALID_PROOF')
  })

  test('malformed proofs: 400 with the reason', async () => {
    await refused('sponsorAttestation', { ...sponsor(), circuitId: 'field_guess' }, 400, 'UNKNOWN_CIRCUIT')
    await refused('sponsorAttestation', sponsor({ proof: { pi_a: [] } }), 400, 'INVALID_PROOF_FORMAT')
    await refused('sponsorAttestation', sponsor({ publicSignals: publicSignals.slice(1) }), 400, 'INVALID_PUBLIC_SIGNALS')
    await refused('sponsorAttestation', { ...sponsor(), proofJson: '{not json' }, 400, 'INVALID_JSON')
  })

  test('a valid proof bound to another root, document or attester: refused', async () => {
    const otherSalts = (await alice.post(`${CHAINB}/prepareDocumentProof`, { documentJson: JSON.stringify(PASSPORT), proofFieldsJson: JSON.stringify(FIELDS) })).data
    expect(otherSalts.payloadHash).toBe(passport.payloadHash)
    const againstOtherRoot = await prove(otherSalts)
    await refused('sponsorAttestation', sponsor(againstOtherRoot), 409, 'CONTENT_ROOT_MISMATCH')
    await refused('sponsorAttestation', sponsor({ payloadHash: amended.payloadHash }), 400, 'PAYLOAD_MISMATCH')
    const other = client(app.url, (await issueTestKey({ units: 100 })).key)
    const answer = await other.post(`${CHAINB}/sponsorAttestation`, sponsor())
    expect(answer.data.error.code).toBe('ATTESTER_MISMATCH')
    expect(answer.charged).toBe('0')
  })

  test('chain B itself refuses a recordAttestations call whose proof does not verify', async () => {
    const adapter = chainBAdapter()
    const call = { circuit: 'recordAttestations', args: { claims: [{ circuit: 'field_predicate', proof, publicSignals: withSignal(5, '17'), payloadHash: passport.payloadHash }] } }
    await expect(adapter.port.submit(sponsoredCall(adapter as never, 'user:someone', call, 'tampered-proof-0001'))).rejects.toMatchObject({ status: 400, code: 'INVALID_PROOF' })
  })

  test('the same claim twice: recorded once, then 409 ALREADY_PROVEN', async () => {
    const accepted = await alice.post(`${CHAINB}/sponsorAttestation`, sponsor())
    expect((await settledJob(alice, accepted.data.jobId)).status).toBe('confirmed')
    await refused('sponsorAttestation', sponsor(), 409, 'ALREADY_PROVEN')
    await refused('issueFieldPredicateAttestation', { ...age(), predicate: 'greaterOrEqual', threshold: '18' }, 409, 'ALREADY_PROVEN')
  })
})
