import cds from '@sap/cds'
import { runningDevnet } from '../support/chain-a.ts'
import { signWith, witnessSetOf } from '../support/sign.ts'
import { ADA, buildTx } from '../support/devnet.ts'
import { runExpiryJobs } from '../support/expiry.ts'
import { SIGN, TX, buildTransfer } from './support.ts'

// The expiry job runs only when a test runs it, so reads before it show the state as it stands.
process.env.CHAIN_A_EXPIRY_INTERVAL_MS = String(3600_000)
const { POST, GET, PATCH, DELETE: DEL, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }
defaults.validateStatus = () => true

let devnet: ReturnType<typeof runningDevnet>
let wallet: ReturnType<ReturnType<typeof runningDevnet>['walletKeys']>
let stranger: ReturnType<ReturnType<typeof runningDevnet>['walletKeys']>
let other: string
const builds: string[] = []

afterAll(() => {
  delete process.env.CHAIN_A_EXPIRY_INTERVAL_MS
})

beforeAll(() => {
  devnet = runningDevnet()
  wallet = devnet.walletKeys('wallet-2')
  stranger = devnet.walletKeys('wallet-3')
  other = devnet.wallets()[0].address
})

// Builds that were not submitted give their outputs back for the next test.
afterEach(async () => {
  for (const buildId of builds.splice(0)) await POST(`${TX}/CancelBuild`, { buildId })
})

async function newRequest(data: Record<string, unknown> = {}, lovelace = '2000000') {
  const build = await buildTransfer(POST, wallet.address, other, lovelace)
  builds.push(build.ID)
  const request = await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID, ...data })
  expect(request.status).toBe(200)
  return { build, request: request.data }
}

/** What a refused action must leave alone: the request, its build and the audit log. */
async function stateOf(request: { ID: string; build_ID: string }) {
  const row = (await POST(`${SIGN}/GetSigningRequest`, { signingRequestId: request.ID })).data
  const build = (await POST(`${TX}/GetBuildStatus`, { buildId: request.build_ID })).data
  const log = (await POST(`${SIGN}/GetAuditLog`, {})).data
  return { status: row.status, signedTxCbor: row.signedTxCbor, verification: row.verification, updatedAt: row.updatedAt, build: build.status, auditEntries: log.entries.length }
}

async function expectRefused(response: { status: number; data: any }, status: number, code: string) {
  expect(response.data.error).toMatchObject({ code, message: expect.any(String) })
  expect(response.status).toBe(status)
}

/** A request that expires in a second, and the moment after. */
async function expiredRequest() {
  const created = await newRequest({ expiresInSeconds: 1 })
  await new Promise(resolve => setTimeout(resolve, Date.parse(created.request.expiresAt) - Date.now() + 50))
  return created
}

describe('creating', () => {
  test('one open request per build: the same signer type gets it again, another one 409 SIGNING_REQUEST_OPEN', async () => {
    const { build, request } = await newRequest({ signerType: 'browser-wallet' })
    const again = await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID, signerType: 'browser-wallet' })
    expect(again.data.ID).toBe(request.ID)
    const cli = await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID, signerType: 'cardano-cli' })
    await expectRefused(cli, 409, 'SIGNING_REQUEST_OPEN')
    expect(cli.data.error.message).toContain(request.ID)
    const listed = (await POST(`${SIGN}/ListPendingRequests`, { address: wallet.address })).data.value
    expect(listed.filter((r: any) => r.build_ID === build.ID).map((r: any) => r.ID)).toEqual([request.ID])

    await POST(`${SIGN}/CancelSigningRequest`, { signingRequestId: request.ID })
    const next = await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID, signerType: 'cardano-cli' })
    expect(next.data).toMatchObject({ status: 'pending', signerType: 'cardano-cli' })
    expect(next.data.ID).not.toBe(request.ID)
  })

  test('only a built build: unknown 404 BUILD_NOT_FOUND, cancelled 409 INVALID_BUILD_STATE; unknown signer type 400', async () => {
    await expectRefused(await POST(`${SIGN}/CreateSigningRequest`, { buildId: cds.utils.uuid() }), 404, 'BUILD_NOT_FOUND')
    const build = await buildTransfer(POST, wallet.address, other)
    await POST(`${TX}/CancelBuild`, { buildId: build.ID })
    await expectRefused(await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID }), 409, 'INVALID_BUILD_STATE')
    const unknownType = await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID, signerType: 'hardware-wallet' })
    await expectRefused(unknownType, 400, 'UNKNOWN_SIGNER_TYPE')
    expect(unknownType.data.error.target).toBe('signerType')
    await expectRefused(await POST(`${SIGN}/CreateSigningRequest`, {}), 400, 'MISSING_PARAMETER')
    await expectRefused(await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID, expiresInSeconds: 0 }), 400, 'INVALID_EXPIRY')
    await expectRefused(await POST(`${SIGN}/GetSigningRequest`, { signingRequestId: cds.utils.uuid() }), 404, 'SIGNING_REQUEST_NOT_FOUND')
    await expectRefused(await POST(`${SIGN}/ListPendingRequests`, { address: 'addr_test1nope' }), 400, 'INVALID_ADDRESS')
  })

  test('the expiry is 30 minutes by default, as asked, and never beyond the build\'s validity', async () => {
    const { request } = await newRequest({ expiresInSeconds: 90 })
    expect(Date.parse(request.expiresAt) - Date.parse(request.createdAt)).toBe(90_000)
    const long = await newRequest({ expiresInSeconds: 30 * 86400 })
    expect(long.request.expiresAt).toBe(long.build.expiresAt)
  })
})

describe('expiry', () => {
  test('a request whose time has run out is expired before the expiry job records it: its build is built again, every later action answers 410', async () => {
    const { build, request } = await expiredRequest()
    const row = (await POST(`${SIGN}/GetSigningRequest`, { signingRequestId: request.ID })).data
    expect(row.status).toBe('expired')
    expect((await GET(`${SIGN}/SigningRequests?$filter=ID eq ${request.ID} and status eq 'expired'`)).data.value).toHaveLength(1)
    expect((await POST(`${TX}/GetBuildStatus`, { buildId: build.ID })).data.status).toBe('built')
    const signed = witnessSetOf(request.unsignedTxCbor, wallet.payment)
    for (const [action, data] of [
      ['VerifySignature', { signedTxCbor: signed }], ['SubmitVerifiedTransaction', { signedTxCbor: signed }], ['CancelSigningRequest', {}],
    ] as const) {
      const response = await POST(`${SIGN}/${action}`, { signingRequestId: request.ID, ...data })
      await expectRefused(response, 410, 'SIGNING_REQUEST_EXPIRED')
    }
    expect((await POST(`${SIGN}/ListPendingRequests`, {})).data.value.map((r: any) => r.ID)).not.toContain(request.ID)
    const fresh = await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID })
    expect(fresh.data).toMatchObject({ status: 'pending', build_ID: build.ID })
    expect(fresh.data.ID).not.toBe(request.ID)
  })

  test('the expiry job records an expiry once, as system, however often it runs; the build is handed back', async () => {
    const { build, request } = await expiredRequest()
    await runExpiryJobs()
    await runExpiryJobs()
    const { SigningRequests, SigningAuditLog } = cds.entities('chainasign')
    const { TransactionBuilds } = cds.entities('chainatx')
    expect((await cds.tx(() => SELECT.one.from(SigningRequests, request.ID))).status).toBe('expired')
    expect((await cds.tx(() => SELECT.one.from(TransactionBuilds, build.ID))).status).toBe('built')
    const entries = await cds.tx(() => SELECT.from(SigningAuditLog).where({ signingRequest_ID: request.ID }).orderBy('sequence'))
    expect(entries.map((e: any) => [e.kind, e.actor])).toEqual([['created', 'alice'], ['expired', 'system']])
    expect((await POST(`${SIGN}/GetAuditLog`, {})).data.valid).toBe(true)
  })
})

describe('cancelling', () => {
  test('a pending request is cancelled once; its build can be signed again; later actions answer 409', async () => {
    const { build, request } = await newRequest()
    const cancelled = await POST(`${SIGN}/CancelSigningRequest`, { signingRequestId: request.ID })
    expect(cancelled.data).toMatchObject({ ID: request.ID, status: 'cancelled' })
    expect((await POST(`${TX}/GetBuildStatus`, { buildId: build.ID })).data.status).toBe('built')
    const before = await stateOf(request)
    await expectRefused(await POST(`${SIGN}/CancelSigningRequest`, { signingRequestId: request.ID }), 409, 'INVALID_REQUEST_STATE')
    const signed = witnessSetOf(request.unsignedTxCbor, wallet.payment)
    await expectRefused(await POST(`${SIGN}/VerifySignature`, { signingRequestId: request.ID, signedTxCbor: signed }), 409, 'INVALID_REQUEST_STATE')
    await expectRefused(await POST(`${SIGN}/SubmitVerifiedTransaction`, { signingRequestId: request.ID, signedTxCbor: signed }), 409, 'INVALID_REQUEST_STATE')
    expect(await stateOf(request)).toEqual(before)
    expect((await POST(`${SIGN}/GetAuditLog`, { signingRequestId: request.ID })).data.entries.map((e: any) => e.kind)).toEqual(['created', 'cancelled'])
  })

  test('a verified request can be cancelled too', async () => {
    const { request } = await newRequest()
    await POST(`${SIGN}/VerifySignature`, { signingRequestId: request.ID, signedTxCbor: witnessSetOf(request.unsignedTxCbor, wallet.payment) })
    expect((await POST(`${SIGN}/CancelSigningRequest`, { signingRequestId: request.ID })).data.status).toBe('cancelled')
  })
})

describe('signatures that do not verify', () => {
  test('a witness over another body: VerifySignature stores failed with the invalid signature and the missing signer', async () => {
    const { build, request } = await newRequest()
    const { build: another } = await newRequest({}, '2100000')
    const response = await POST(`${SIGN}/VerifySignature`, { signingRequestId: request.ID, signedTxCbor: witnessSetOf(another.unsignedTxCbor, wallet.payment) })
    const payer = wallet.payment.to_public().hash().to_hex()
    expect(response.data).toMatchObject({
      status: 'failed', valid: false, txHash: build.txHash, witnessCount: 1, signerKeyHashes: [], invalidSignatures: [payer],
      missingSigners: [{ keyHash: payer, neededFor: expect.stringMatching(/^input [0-9a-f]{64}#\d+$/) }],
    })
    const row = (await POST(`${SIGN}/GetSigningRequest`, { signingRequestId: request.ID })).data
    expect(row).toMatchObject({ status: 'failed', failureCode: 'SIGNATURE_INVALID', failureReason: expect.stringContaining(`the signature of ${payer} does not verify`) })
    expect(JSON.parse(row.verification)).toMatchObject({ valid: false, invalidSignatures: [payer] })
    expect((await POST(`${TX}/GetBuildStatus`, { buildId: build.ID })).data.status).toBe('built')
    expect((await POST(`${SIGN}/GetAuditLog`, { signingRequestId: request.ID })).data.entries.map((e: any) => e.kind)).toEqual(['created', 'signed', 'failed'])
    await expectRefused(await POST(`${SIGN}/SubmitVerifiedTransaction`, { signingRequestId: request.ID }), 409, 'INVALID_REQUEST_STATE')
  })

  test('a missing signer: a valid signature of another key does not cover the inputs', async () => {
    const { request } = await newRequest()
    const response = await POST(`${SIGN}/VerifySignature`, { signingRequestId: request.ID, signedTxCbor: witnessSetOf(request.unsignedTxCbor, stranger.payment) })
    expect(response.data).toMatchObject({
      status: 'failed', valid: false, signerKeyHashes: [stranger.payment.to_public().hash().to_hex()], invalidSignatures: [],
      missingSigners: [{ keyHash: wallet.payment.to_public().hash().to_hex() }],
    })
  })

  test('submitting what does not verify answers 400 SIGNATURE_INVALID and changes nothing', async () => {
    const { request } = await newRequest()
    const { build: another } = await newRequest({}, '2200000')
    const before = await stateOf(request)
    for (const signedTxCbor of [witnessSetOf(another.unsignedTxCbor, wallet.payment), witnessSetOf(request.unsignedTxCbor, stranger.payment)]) {
      const response = await POST(`${SIGN}/SubmitVerifiedTransaction`, { signingRequestId: request.ID, signedTxCbor })
      await expectRefused(response, 400, 'SIGNATURE_INVALID')
    }
    expect(await stateOf(request)).toEqual(before)
    expect(before).toMatchObject({ status: 'pending', build: 'signing' })
  })

  test('malformed answers, another body, another signer type: 400 with their codes, nothing changed', async () => {
    const { request } = await newRequest()
    const { build: another } = await newRequest({}, '2300000')
    const cli = await newRequest({ signerType: 'cardano-cli' }, '2400000')
    const before = [await stateOf(request), await stateOf(cli.request)]
    const cases: [string, Record<string, unknown>, string][] = [
      [request.ID, { signedTxCbor: 'not-cbor' }, 'MALFORMED_CBOR'],
      [request.ID, { signedTxCbor: '8201' }, 'MALFORMED_CBOR'],
      [request.ID, { signedTxCbor: '01' }, 'MALFORMED_WITNESS_SET'],
      [request.ID, { signedTxCbor: 'a1' + '00' }, 'MALFORMED_CBOR'],
      [request.ID, { signedTxCbor: signWith(another.unsignedTxCbor, wallet.payment) }, 'WITNESS_BODY_MISMATCH'],
      [request.ID, {}, 'MISSING_PARAMETER'],
      [request.ID, { signedTxCbor: witnessSetOf(request.unsignedTxCbor, wallet.payment), signerType: 'cardano-cli' }, 'SIGNER_TYPE_MISMATCH'],
      [request.ID, { signedTxCbor: witnessSetOf(request.unsignedTxCbor, wallet.payment), signerType: 'quill' }, 'UNKNOWN_SIGNER_TYPE'],
      [cli.request.ID, { signedTxCbor: '{"type": "Tx ConwayEra", ' }, 'MALFORMED_ENVELOPE'],
      [cli.request.ID, { signedTxCbor: JSON.stringify({ type: 'TxSigningKeyShelley_ed25519', cborHex: '5820' + '00'.repeat(32) }) }, 'MALFORMED_ENVELOPE'],
    ]
    for (const action of ['VerifySignature', 'SubmitVerifiedTransaction']) {
      for (const [signingRequestId, data, code] of cases) {
        const response = await POST(`${SIGN}/${action}`, { signingRequestId, ...data })
        expect([action, code, response.status, response.data.error?.code]).toEqual([action, code, 400, code])
      }
    }
    expect([await stateOf(request), await stateOf(cli.request)]).toEqual(before)
  })
})

describe('submitting', () => {
  test('a second submission answers 409 TX_ALREADY_SUBMITTED', async () => {
    const { build, request } = await newRequest()
    await POST(`${SIGN}/VerifySignature`, { signingRequestId: request.ID, signedTxCbor: witnessSetOf(request.unsignedTxCbor, wallet.payment) })
    expect((await POST(`${SIGN}/SubmitVerifiedTransaction`, { signingRequestId: request.ID })).data.status).toBe('submitted')
    const before = await stateOf(request)
    await expectRefused(await POST(`${SIGN}/SubmitVerifiedTransaction`, { signingRequestId: request.ID }), 409, 'TX_ALREADY_SUBMITTED')
    await expectRefused(await POST(`${SIGN}/CancelSigningRequest`, { signingRequestId: request.ID }), 409, 'TX_ALREADY_SUBMITTED')
    await expectRefused(await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID }), 409, 'TX_ALREADY_SUBMITTED')
    expect(await stateOf(request)).toEqual(before)
    devnet.produceBlock()
  })

  test('a transaction submitted around the signing service: the transaction service\'s 409 applies, the request stays verified', async () => {
    const { build, request } = await newRequest()
    const signed = witnessSetOf(request.unsignedTxCbor, wallet.payment)
    await POST(`${SIGN}/VerifySignature`, { signingRequestId: request.ID, signedTxCbor: signed })
    const verified = (await POST(`${SIGN}/GetSigningRequest`, { signingRequestId: request.ID })).data
    expect((await POST(`${TX}/SubmitSignedTransaction`, { signedTxCbor: verified.signedTxCbor, buildId: build.ID })).data.status).toBe('submitted')
    const before = await stateOf(request)
    await expectRefused(await POST(`${SIGN}/SubmitVerifiedTransaction`, { signingRequestId: request.ID }), 409, 'TX_ALREADY_SUBMITTED')
    expect(await stateOf(request)).toEqual(before)
    expect(before.status).toBe('verified')
    devnet.produceBlock()
  })

  test('a ledger rejection answers 400 TX_REJECTED; request, build and submission record the failure', async () => {
    const { build, request } = await newRequest()
    await POST(`${SIGN}/VerifySignature`, { signingRequestId: request.ID, signedTxCbor: witnessSetOf(request.unsignedTxCbor, wallet.payment) })
    // Someone spends the build's input first.
    const input = (await GET(`${TX}/BuildInputs?$filter=build_ID eq ${build.ID}`)).data.value[0]
    const output = devnet.ledger.unspentAt(wallet.address).find(o => o.ref === `${input.txHash}#${input.outputIndex}`)!
    devnet.submit(buildTx({ inputs: [output], outputs: [{ address: other, coin: 3n * ADA }], signers: [wallet.payment] }))
    devnet.produceBlock()

    const response = await POST(`${SIGN}/SubmitVerifiedTransaction`, { signingRequestId: request.ID })
    await expectRefused(response, 400, 'TX_REJECTED')
    expect(response.data.error.message).toMatch(/BadInputsUTxO/)
    const row = (await POST(`${SIGN}/GetSigningRequest`, { signingRequestId: request.ID })).data
    expect(row).toMatchObject({ status: 'failed', failureCode: 'TX_REJECTED', failureReason: expect.stringMatching(/BadInputsUTxO/) })
    expect((await POST(`${TX}/GetBuildStatus`, { buildId: build.ID })).data.status).toBe('failed')
    const submission = (await GET(`${TX}/TransactionSubmissions?$filter=txHash eq '${build.txHash}'`)).data.value[0]
    expect(submission).toMatchObject({ status: 'failed', errorCode: 'TX_REJECTED' })
    expect((await GET(`${SIGN}/VerifiedTransactions?$filter=txHash eq '${build.txHash}'`)).data.value).toEqual([])
    const log = (await POST(`${SIGN}/GetAuditLog`, { signingRequestId: request.ID })).data
    expect(log.entries.map((e: any) => e.kind)).toEqual(['created', 'signed', 'verified', 'failed'])
    expect(JSON.parse(log.entries[3].details)).toMatchObject({ code: 'TX_REJECTED' })
  })
})

describe('what the signing service asks of builds', () => {
  test('is served over no protocol: no route claims, releases or reads a build, and $metadata does not show it', async () => {
    const { build } = await newRequest()
    const data = { buildId: build.ID, signingRequestId: cds.utils.uuid(), until: new Date(Date.now() + 600_000).toISOString() }
    for (const path of ['/odata/v4/chain-a-build-signing/ReleaseBuild', `${TX}/ReleaseBuild`, `${TX}/ClaimBuildForSigning`, `${SIGN}/ReleaseBuild`]) {
      expect([path, (await POST(path, data)).status]).toEqual([path, 404])
    }
    expect((await POST(`${TX}/GetBuildStatus`, { buildId: build.ID })).data.status).toBe('signing')
    for (const service of [TX, SIGN]) expect((await GET(`${service}/$metadata`)).data).not.toMatch(/ClaimBuildForSigning|ReleaseBuild|SigningFactsOf/)
  })
})

describe('entity sets are read-only', () => {
  test.each([
    ['POST', () => POST(`${SIGN}/SigningRequests`, { signerType: 'hsm' })],
    ['PATCH', () => PATCH(`${SIGN}/SigningRequests(${cds.utils.uuid()})`, { status: 'verified' })],
    ['POST', () => POST(`${SIGN}/VerifiedTransactions`, { txHash: 'ab'.repeat(32) })],
    ['DELETE', () => DEL(`${SIGN}/HsmConfigurations('default')`)],
  ])('%s answers 405', async (_method, send) => {
    const response = await send()
    expect(response.status).toBe(405)
    expect(response.data.error.code).toBe('ENTITY_IS_READ_ONLY')
  })
})
