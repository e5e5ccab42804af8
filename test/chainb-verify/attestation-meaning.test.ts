import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import * as snarkjs from 'snarkjs'
import type { ChainADevnet } from '../../devnet/chain-a/index.ts'
import type { VaultCall } from '../../srv/chains/chain-b/port.ts'
import { callDigest, signDigest, vaultKeyFromSeed, type VaultKey } from '../../srv/chains/chain-b/vault.ts'
import { prepareDocument } from '../../srv/chains/chain-b/zk/content.ts'
import { proofFieldsParam } from '../../srv/chainb-params/documents.ts'
import { documentComparisonClaim, fieldPredicateClaim, type ClaimContext } from '../../srv/chainb/claims.ts'
import { client, type Client } from '../chainb/attest.ts'
import { startStandaloneChainB, type StandaloneChainB } from '../chainb/support.ts'
import { startDevnet } from '../support/devnet.ts'
import { startGateways, type Gateways } from '../support/lane-gateways.ts'

/**
 * An attestation's verdict is true of the document it names, asked of gateway and devnet
 * processes of their own: a content root is computed by the service from the document (never taken
 * on the caller's word), anchors are scoped by attester (nobody squats another's hash), a root
 * anchored by anyone else is not taken as the document's by the free lane, and vacuous claims are
 * refused on every path and never VALID.
 */

const root = join(__dirname, '..', '..')
const KEYS = join(root, 'zk', 'keys')
const CHAINB = '/api/v1/chainb'
const VERIFY = '/api/v1/verify'
const FIELDS = ['total', 'currency']
const small = { id: 'INV-500', total: 500, currency: 'EUR' }
const large = { id: 'INV-500', total: 5000, currency: 'EUR' }
const SEED = 'ab'.repeat(32)

let chainA: ChainADevnet
let chainB: StandaloneChainB
let gateways: Gateways
let owner: Client
let squatter: Client
let anyone: Client

async function issueKey(units: number): Promise<string> {
  const { stdout } = await promisify(execFile)('npm', ['run', '-s', 'gateway', '--', 'keys', 'issue', '--units', String(units), '--quiet'], { cwd: root, env: gateways.env })
  return stdout.trim().split('\n').pop()!
}

/** Follows a job to its end, producing blocks while it waits for confirmations. */
async function settled(caller: Client, jobId: string) {
  for (let i = 0; i < 600; i++) {
    const job = (await caller.post(`${CHAINB}/getJobStatus`, { jobId })).data
    if (job.status === 'confirmed' || job.status === 'failed') return job
    if (job.status === 'submitted') await chainB.produce(1)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  throw new Error(`job ${jobId} did not end`)
}

const prepare = async (caller: Client, document: object) =>
  (await caller.post(`${CHAINB}/prepareDocumentProof`, { documentJson: JSON.stringify(document), proofFieldsJson: JSON.stringify(FIELDS), saltSeed: SEED })).data

async function anchorWithDocument(caller: Client, document: object) {
  const prepared = await prepare(caller, document)
  const accepted = await caller.post(`${CHAINB}/anchorDocument`, { sha256: prepared.payloadHash, documentJson: JSON.stringify(document), proofFieldsJson: JSON.stringify(FIELDS), saltSeed: SEED })
  expect(accepted.status).toBe(200)
  expect((await settled(caller, accepted.data.jobId)).status).toBe('confirmed')
  return prepared
}

const witness = (prepared: any, path: string) => {
  const field = prepared.fields.find((candidate: any) => candidate.field === path)
  return { payloadHash: prepared.payloadHash, fieldKey: field.fieldKey, value: field.value, scale: field.scale, fieldSalt: field.salt, siblingsJson: JSON.stringify(field.siblings), dirsJson: JSON.stringify(field.dirs) }
}

/** A sponsored vault call signed by an attester and a sponsor of its own, straight to the devnet (not through the service). */
async function submitOutside(call: VaultCall, attester: VaultKey, sponsor: VaultKey, nonce: string) {
  const { vaultAddress } = await chainB.status()
  const digest = callDigest(vaultAddress, call, nonce)
  const response = await fetch(`${chainB.url}/api/v4/submit`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ contractAddress: vaultAddress, call, nonce, attesterKey: attester.publicKey, signature: signDigest(attester, digest), sponsorKey: sponsor.publicKey, sponsorSignature: signDigest(sponsor, digest) }),
  })
  expect(response.status).toBe(200)
  await chainB.produce(1)
}

const prove = async (input: Record<string, unknown>, circuit: string) =>
  snarkjs.groth16.fullProve(input as any, join(KEYS, circuit, `${circuit}.wasm`), join(KEYS, circuit, `${circuit}.zkey`))

beforeAll(async () => {
  chainA = await startDevnet()
  chainB = await startStandaloneChainB()
  gateways = await startGateways(1, chainA, {
    GATEWAY_RATE_PER_SECOND: '10000', GATEWAY_BURST: '10000', CHAIN_B_NETWORK: 'devnet', CHAIN_B_INDEXER_URL: chainB.indexerUrl,
    CHAIN_B_JOBS_RUNNER: 'true', CHAIN_B_JOBS_POLL_MS: '25', CHAIN_B_JOBS_RETRY_MS: '100', CHAIN_B_TIMEOUT_MS: '5000',
    CHAIN_B_VERIFY_RATE_PER_SECOND: '10000', CHAIN_B_VERIFY_BURST: '10000',
  })
  const url = gateways.servers[0].url
  owner = client(url, await issueKey(5000))
  squatter = client(url, await issueKey(5000))
  anyone = client(url)
}, 240_000)

afterAll(async () => {
  // snarkjs proves on a curve with worker threads of its own: end them, or this file's process stays up.
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128?.terminate()
  await gateways?.stop()
  await chainB?.stop()
  await chainA?.stop()
})

test('a content root is computed from the document: another document\'s root, or a root alone, is refused uncharged', async () => {
  const prepared500 = await prepare(owner, small)
  const prepared5000 = await prepare(owner, large)
  const otherDocument = await owner.post(`${CHAINB}/anchorDocument`, { sha256: prepared500.payloadHash, documentJson: JSON.stringify(large), proofFieldsJson: JSON.stringify(FIELDS), saltSeed: SEED })
  expect(otherDocument.status).toBe(422)
  expect(otherDocument.data.error).toMatchObject({ code: 'DOCUMENT_HASH_MISMATCH', target: 'documentJson' })
  expect(otherDocument.charged).toBe('0')
  const rootAlone = await owner.post(`${CHAINB}/anchorDocument`, { sha256: prepared500.payloadHash, contentRoot: prepared5000.contentRoot, schemaId: prepared5000.schemaId })
  expect(rootAlone.status).toBe(400)
  expect(rootAlone.data.error.code).toBe('DOCUMENT_REQUIRED')
  expect(rootAlone.charged).toBe('0')
  const wrongRoot = await owner.post(`${CHAINB}/anchorDocument`, { sha256: prepared500.payloadHash, documentJson: JSON.stringify(small), proofFieldsJson: JSON.stringify(FIELDS), saltSeed: SEED, contentRoot: prepared5000.contentRoot })
  expect(wrongRoot.status).toBe(422)
  expect(wrongRoot.data.error.code).toBe('CONTENT_ROOT_MISMATCH')
  // The same field twice (a root where one key answers both ways) cannot be made.
  const twice = await owner.post(`${CHAINB}/anchorDocument`, { sha256: prepared500.payloadHash, documentJson: JSON.stringify(small), proofFieldsJson: JSON.stringify(['total', 'total']), saltSeed: SEED })
  expect(twice.data.error.code).toBe('DUPLICATE_FIELD')

  // Anchored with its own root, the 500 document cannot be proven to hold a total of 1000 or more.
  const anchored = await anchorWithDocument(owner, small)
  const claim = await owner.post(`${CHAINB}/issueFieldPredicateAttestation`, { ...witness(anchored, 'total'), predicate: 'greaterOrEqual', threshold: '1000' })
  expect(claim.data.error.code).toBe('CLAIM_FALSE')
  expect(claim.charged).toBe('0')
  const verdict = await anyone.get(`${VERIFY}/verifyPredicateState(payloadHash='${anchored.payloadHash}',predicate='greaterOrEqual',fieldKey='total',threshold='1000')`)
  expect(verdict.data).toMatchObject({ verified: false, code: 'NOT_PROVEN' })
}, 180_000)

test('a root anchored outside the service for a document it is not the root of: the free lane never answers VALID', async () => {
  // Someone with an attester and a sponsor of their own anchors the 500 document's hash with the 5000 document's root…
  const attester = vaultKeyFromSeed(Buffer.alloc(32, 41))
  const sponsor = vaultKeyFromSeed(Buffer.alloc(32, 42))
  await fetch(`${chainB.url}/api/v4/faucet`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ publicKey: sponsor.publicKey, amount: '1000000000000000000' }) })
  await chainB.produce(1)
  const specs = proofFieldsParam(FIELDS)
  const forged = prepareDocument(large, specs, SEED)
  const hash500 = prepareDocument({ ...small, id: 'INV-OUTSIDE' }, specs, SEED).payloadHash
  await submitOutside({ circuit: 'attest', args: { payloadHash: hash500, metadataHash: '00'.repeat(32), contentRoot: forged.contentRoot, schemaId: forged.schemaId, fieldCount: 2 } }, attester, sponsor, 'outside-anchor')
  // …and records a true proof about that root: "total >= 1000".
  const total = forged.fields.find(field => field.field === 'total')!
  const state = { documents: { [hash500]: { [attester.id]: { metadataHash: '00'.repeat(32), attester: attester.id, height: 1, txHash: '00'.repeat(32), contentRoot: forged.contentRoot, schemaId: forged.schemaId, fieldCount: 2 } } }, commitments: {}, attestations: {} }
  const context: ClaimContext = { state, attesterId: attester.id }
  const claim = fieldPredicateClaim({ payloadHash: hash500, fieldKey: total.fieldKey, value: total.value, scale: total.scale, fieldSalt: total.salt, siblings: total.siblings, dirs: total.dirs, predicate: 'greaterOrEqual', threshold: '1000' }, context)
  const { proof, publicSignals } = await prove(claim.input, 'field_predicate')
  await submitOutside({ circuit: 'recordAttestations', args: { claims: [{ circuit: 'field_predicate', proof, publicSignals, payloadHash: hash500 }] } }, attester, sponsor, 'outside-claim')

  const predicate = await anyone.get(`${VERIFY}/verifyPredicateState(payloadHash='${hash500}',predicate='greaterOrEqual',fieldKey='total',threshold='1000')`)
  expect(predicate.data).toMatchObject({ verified: false, proven: true, code: 'ROOT_NOT_VOUCHED' })
  expect(predicate.charged).toBe('0')
  const raw = await anyone.post(`${VERIFY}/verifyProof`, { circuitId: 'field_predicate', proofJson: JSON.stringify(proof), publicSignalsJson: JSON.stringify(publicSignals) })
  expect(raw.data).toMatchObject({ verified: false, code: 'ROOT_NOT_VOUCHED', recorded: true, attesterId: attester.id })
  const state500 = await anyone.get(`${VERIFY}/verifyAttestationState(payloadHash='${hash500}',contentRoot='${forged.contentRoot}')`)
  expect(state500.data).toMatchObject({ verified: false, code: 'ROOT_NOT_VOUCHED', rootVouched: false, rootVouchedBy: sponsor.id })
}, 180_000)

test('nobody squats a hash: another key\'s earlier anchor neither blocks the owner\'s nor lends it a root', async () => {
  const document = { id: 'INV-SQUAT', total: 2500, currency: 'EUR' }
  const prepared = await prepare(owner, document)
  // The squatter knows the hash, not the document: it may anchor the hash under its own attester, without a root.
  const early = await squatter.post(`${CHAINB}/anchorDocument`, { sha256: prepared.payloadHash })
  expect((await settled(squatter, early.data.jobId)).status).toBe('confirmed')
  const withRoot = await squatter.post(`${CHAINB}/anchorDocument`, { sha256: prepared.payloadHash, contentRoot: prepared.contentRoot, schemaId: prepared.schemaId })
  expect(withRoot.data.error.code).toBe('DOCUMENT_REQUIRED')

  await anchorWithDocument(owner, document)
  const claim = await owner.post(`${CHAINB}/issueFieldPredicateAttestation`, { ...witness(prepared, 'total'), predicate: 'greaterOrEqual', threshold: '1000' })
  expect(claim.status).toBe(200)
  expect((await settled(owner, claim.data.jobId)).status).toBe('confirmed')
  const ownerId = (await owner.get(`${CHAINB}/getAttesterIdentity()`)).data.attesterId
  const squatterId = (await squatter.get(`${CHAINB}/getAttesterIdentity()`)).data.attesterId
  const verdict = await anyone.get(`${VERIFY}/verifyPredicateState(payloadHash='${prepared.payloadHash}',predicate='greaterOrEqual',fieldKey='total',threshold='1000',attesterId='${ownerId}')`)
  expect(verdict.data).toMatchObject({ verified: true, code: 'VALID', attesterId: ownerId, rootVouchedBy: expect.stringMatching(/^[0-9a-f]{64}$/) })
  const bySquatter = await anyone.get(`${VERIFY}/verifyPredicateState(payloadHash='${prepared.payloadHash}',predicate='greaterOrEqual',fieldKey='total',threshold='1000',attesterId='${squatterId}')`)
  expect(bySquatter.data).toMatchObject({ verified: false, code: 'NOT_PROVEN' })
  const anchors = await anyone.get(`${VERIFY}/verifyDocument(sha256='${prepared.payloadHash}')`)
  expect(anchors.data).toMatchObject({ verified: true, anchorCount: 2, attesterId: squatterId })
  const owners = await anyone.get(`${VERIFY}/verifyDocument(sha256='${prepared.payloadHash}',attesterId='${ownerId}')`)
  expect(owners.data).toMatchObject({ verified: true, attesterId: ownerId, contentRoot: prepared.contentRoot })
}, 180_000)

test('one rule set: vacuous caller-built claims are refused uncharged on the sponsored path, and never VALID on the free lane', async () => {
  const first = await anchorWithDocument(owner, { id: 'INV-A', total: 100, currency: 'EUR' })
  const second = await anchorWithDocument(owner, { id: 'INV-A', total: 200, currency: 'EUR' })
  const ownerId = (await owner.get(`${CHAINB}/getAttesterIdentity()`)).data.attesterId
  const state = (payloadHash: string, prepared: any) => ({ [payloadHash]: { [ownerId]: { metadataHash: '', attester: ownerId, height: 1, txHash: '', contentRoot: prepared.contentRoot, schemaId: prepared.schemaId, fieldCount: 2 } } })
  const context: ClaimContext = { state: { documents: { ...state(first.payloadHash, first), ...state(second.payloadHash, second) }, commitments: {}, attestations: {} }, attesterId: ownerId }
  const openings = { payloadHashA: first.payloadHash, payloadHashB: second.payloadHash, openingAJson: JSON.stringify(first.opening), openingBJson: JSON.stringify(second.opening) }
  const integrity = documentComparisonClaim('integrity', { ...openings, allowedMask: 1 }, context)
  const diff = documentComparisonClaim('diff', { ...openings, k: 1 }, context)
  for (const [input, name] of [[{ ...integrity.input, mask: String(0xffff) }, 'every slot may differ'], [{ ...diff.input, k: '0' }, 'k = 0']] as const) {
    const { proof, publicSignals } = await prove(input, 'document_compare')
    const sponsored = await owner.post(`${CHAINB}/sponsorAttestation`, {
      circuitId: 'document_compare', proofJson: JSON.stringify(proof), publicSignalsJson: JSON.stringify(publicSignals), payloadHash: first.payloadHash, payloadHashB: second.payloadHash,
    })
    expect([name, sponsored.status, sponsored.data.error?.code, sponsored.charged]).toEqual([name, 422, 'VACUOUS_CLAIM', '0'])
    const raw = await anyone.post(`${VERIFY}/verifyProof`, { circuitId: 'document_compare', proofJson: JSON.stringify(proof), publicSignalsJson: JSON.stringify(publicSignals) })
    expect([name, raw.data.verified, raw.data.code]).toEqual([name, false, 'VACUOUS_CLAIM'])
  }
}, 300_000)
