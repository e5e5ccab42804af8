import cds from '@sap/cds'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { runningDevnet } from '../support/chain-a.ts'
import { witnessSetOf } from '../support/sign.ts'
import { createSoftHsmToken, generateEd25519KeyPair, SOFTHSM_MODULE, type SoftHsmToken } from '../support/softhsm.ts'
import { ADA, buildTx, largestUtxo } from '../support/devnet.ts'
import { enterpriseAddress } from '../../srv/chains/chain-a/signing/hsm.ts'
import { issueGrant } from '../../srv/gateway/accounts.ts'
import { closeHsmSigner } from '../../srv/chaina-sign/hsm.ts'
import { SIGN, TX, buildTransfer, expectOnChain } from './support.ts'

// A self-hosted instance with an HSM whose key only role `admin` (alice) may use; the PIN comes from the environment.
const KEY_LABEL = 'cardano-payment'
const PIN = '246810'
Object.assign(process.env, { HSM_PKCS11_MODULE: SOFTHSM_MODULE, HSM_SLOT: '0', HSM_KEY_LABEL: KEY_LABEL, HSM_REQUIRES_ROLE: 'admin', HSM_PIN: PIN, HSM_LABEL: 'softhsm' })

const { POST, GET, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }
defaults.validateStatus = () => true

let token: SoftHsmToken
let devnet: ReturnType<typeof runningDevnet>
let funder: ReturnType<ReturnType<typeof runningDevnet>['walletKeys']>
let keyHash: string
let hsmAddress: string
let other: string

beforeAll(() => {
  token = createSoftHsmToken('signing-service', PIN)
  const publicKey = CSL.PublicKey.from_bytes(generateEd25519KeyPair(token, KEY_LABEL, '01'))
  keyHash = publicKey.hash().to_hex()
  hsmAddress = enterpriseAddress(publicKey, 0)
  devnet = runningDevnet()
  funder = devnet.walletKeys('wallet-1')
  other = devnet.wallets()[1].address
  // A test wallet funds the HSM key's enterprise address with a few outputs.
  devnet.submit(buildTx({ inputs: [largestUtxo(devnet, funder.address)], outputs: [1, 2, 3].map(() => ({ address: hsmAddress, coin: 50n * ADA })), signers: [funder.payment] }))
  devnet.produceBlock()
})

afterAll(async () => {
  await closeHsmSigner()
  token?.cleanup()
  for (const name of ['HSM_PKCS11_MODULE', 'HSM_SLOT', 'HSM_KEY_LABEL', 'HSM_REQUIRES_ROLE', 'HSM_PIN', 'HSM_LABEL']) delete process.env[name]
})

test('HsmConfigurations answers the configuration and the key\'s address, never the PIN', async () => {
  const response = await GET(`${SIGN}/HsmConfigurations?$filter=status eq 'connected'`)
  expect(response.data.value).toEqual([{
    label: 'softhsm', modulePath: SOFTHSM_MODULE, slot: 'index 0', keyLabel: KEY_LABEL, keyId: null, requiredRole: 'admin', status: 'connected',
    publicKeyHash: keyHash, address: hsmAddress, network: 'devnet', errorCode: null, errorMessage: null, checkedAt: expect.any(String),
  }])
  expect(JSON.stringify(response.data)).not.toContain(PIN)
})

test('SignWithHsm signs in the token and answers the verified request; it is submitted and confirmed', async () => {
  const build = await buildTransfer(POST, hsmAddress, other, '7000000')
  const signed = await POST(`${SIGN}/SignWithHsm`, { buildId: build.ID })
  expect(signed.data).toMatchObject({ build_ID: build.ID, signerType: 'hsm', signerInfo: `hsm ${KEY_LABEL}`, status: 'verified', txHash: build.txHash, requestedBy: 'alice' })
  expect(JSON.parse(signed.data.verification)).toEqual({ valid: true, witnessCount: 1, signerKeyHashes: [keyHash], missingSigners: [], invalidSignatures: [], problems: [] })
  expect((await POST(`${SIGN}/SignWithHsm`, { buildId: build.ID })).data).toMatchObject({ ID: signed.data.ID, status: 'verified' })

  const submission = await POST(`${SIGN}/SubmitVerifiedTransaction`, { signingRequestId: signed.data.ID })
  expect(submission.data).toMatchObject({ txHash: build.txHash, status: 'submitted' })
  expect((await GET(`${SIGN}/VerifiedTransactions?$filter=txHash eq '${build.txHash}'`)).data.value).toEqual([expect.objectContaining({ signerType: 'hsm', signerKeyHashes: JSON.stringify([keyHash]) })])
  await expectOnChain(POST, GET, devnet, build.txHash, build.ID)

  const log = (await POST(`${SIGN}/GetAuditLog`, { signingRequestId: signed.data.ID })).data
  expect(log.entries.map((entry: any) => entry.kind)).toEqual(['created', 'signed', 'verified', 'submitted'])
  expect(JSON.parse(log.entries[1].details)).toMatchObject({ keyLabel: KEY_LABEL, publicKeyHash: keyHash, witnessCount: 1 })
})

test('a build the HSM key does not own: the request fails with the missing signer', async () => {
  const build = await buildTransfer(POST, funder.address, other)
  const response = await POST(`${SIGN}/SignWithHsm`, { buildId: build.ID })
  expect(response.data).toMatchObject({ status: 'failed', failureCode: 'SIGNATURE_INVALID', failureReason: expect.stringContaining(funder.payment.to_public().hash().to_hex()) })
  expect(JSON.parse(response.data.verification)).toMatchObject({ signerKeyHashes: [keyHash] })
  expect((await POST(`${TX}/GetBuildStatus`, { buildId: build.ID })).data.status).toBe('built')
  await POST(`${TX}/CancelBuild`, { buildId: build.ID })
})

test('only the configured role may sign, and no product grant may', async () => {
  const build = await buildTransfer(POST, hsmAddress, other)
  const byBob = await POST(`${SIGN}/SignWithHsm`, { buildId: build.ID }, { auth: { username: 'bob', password: '' } })
  expect(byBob.data.error).toMatchObject({ code: 'HSM_FORBIDDEN', message: expect.stringContaining("'admin'") })
  expect(byBob.status).toBe(403)
  const grant = await issueGrant({ product: 'chain-a' })
  const byGrant = await POST(`${SIGN}/SignWithHsm`, { buildId: build.ID }, { auth: undefined, headers: { 'x-agent-token': grant.token } })
  expect(byGrant.data.error.code).toBe('GRANT_FORBIDDEN')
  expect(byGrant.status).toBe(403)
  expect((await POST(`${SIGN}/ListPendingRequests`, {}, { auth: undefined, headers: { 'x-agent-token': grant.token } })).status).toBe(200)
  expect((await POST(`${TX}/GetBuildStatus`, { buildId: build.ID })).data.status).toBe('built')
  await POST(`${TX}/CancelBuild`, { buildId: build.ID })
})

test('an HSM request takes no signature from outside; another signer\'s open request keeps the HSM away', async () => {
  const build = await buildTransfer(POST, hsmAddress, other)
  const request = (await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID, signerType: 'hsm' })).data
  const outside = await POST(`${SIGN}/VerifySignature`, { signingRequestId: request.ID, signedTxCbor: witnessSetOf(request.unsignedTxCbor, funder.payment) })
  expect(outside.data.error.code).toBe('SIGNER_TYPE_MISMATCH')
  await POST(`${SIGN}/CancelSigningRequest`, { signingRequestId: request.ID })

  await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID, signerType: 'browser-wallet' })
  const response = await POST(`${SIGN}/SignWithHsm`, { buildId: build.ID })
  expect(response.data.error.code).toBe('SIGNING_REQUEST_OPEN')
  expect(response.status).toBe(409)
  await POST(`${TX}/CancelBuild`, { buildId: build.ID })
})

test('a key the token does not hold: 503 HSM_KEY_NOT_FOUND, and no request is left behind', async () => {
  const build = await buildTransfer(POST, hsmAddress, other)
  process.env.HSM_KEY_LABEL = 'no-such-key'
  try {
    const response = await POST(`${SIGN}/SignWithHsm`, { buildId: build.ID })
    expect(response.data.error.code).toBe('HSM_KEY_NOT_FOUND')
    expect(response.status).toBe(503)
    expect((await GET(`${SIGN}/HsmConfigurations`)).data.value).toEqual([expect.objectContaining({ keyLabel: 'no-such-key', status: 'unavailable', errorCode: 'HSM_KEY_NOT_FOUND' })])
  } finally {
    process.env.HSM_KEY_LABEL = KEY_LABEL
  }
  expect((await POST(`${TX}/GetBuildStatus`, { buildId: build.ID })).data.status).toBe('built')
  expect((await GET(`${SIGN}/SigningRequests?$filter=build_ID eq ${build.ID}`)).data.value).toEqual([])
  expect((await POST(`${SIGN}/SignWithHsm`, { buildId: build.ID })).data.status).toBe('verified')
  await POST(`${TX}/CancelBuild`, { buildId: build.ID })
})
