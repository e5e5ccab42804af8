import cds from '@sap/cds'
import { runningDevnet } from '../support/chain-a.ts'
import { signWith, witnessSetOf } from '../support/sign.ts'
import { SIGN, TX, buildTransfer, expectOnChain } from './support.ts'

const { POST, GET, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }
defaults.validateStatus = () => true

let devnet: ReturnType<typeof runningDevnet>
let wallet: ReturnType<ReturnType<typeof runningDevnet>['walletKeys']>
let other: string
const submittedByCli: string[] = []

beforeAll(() => {
  devnet = runningDevnet()
  wallet = devnet.walletKeys('wallet-1')
  other = devnet.wallets()[1].address
})

/** Verifies and submits a request whose signer answered, and follows the transaction onto the chain. */
async function verifySubmitConfirm(request: any, build: any, signedTxCbor: string) {
  const verification = await POST(`${SIGN}/VerifySignature`, { signingRequestId: request.ID, signedTxCbor })
  expect(verification.data).toEqual({
    '@odata.context': expect.any(String), signingRequestId: request.ID, status: 'verified', valid: true, txHash: build.txHash, witnessCount: 1,
    signerKeyHashes: [wallet.payment.to_public().hash().to_hex()], missingSigners: [], invalidSignatures: [], problems: [],
  })
  expect((await POST(`${SIGN}/GetSigningRequest`, { signingRequestId: request.ID })).data).toMatchObject({ status: 'verified', verifiedAt: expect.any(String) })

  const submission = await POST(`${SIGN}/SubmitVerifiedTransaction`, { signingRequestId: request.ID })
  expect(submission.data).toMatchObject({ txHash: build.txHash, status: 'submitted', build_ID: build.ID, ID: expect.any(String) })
  const submitted = (await POST(`${SIGN}/GetSigningRequest`, { signingRequestId: request.ID })).data
  expect(submitted).toMatchObject({ status: 'submitted', submission_ID: submission.data.ID, submittedAt: expect.any(String) })
  const [verified] = (await GET(`${SIGN}/VerifiedTransactions?$filter=txHash eq '${build.txHash}'`)).data.value
  expect(verified).toMatchObject({
    ID: expect.any(String), txHash: build.txHash, signingRequest_ID: request.ID, build_ID: build.ID, signerType: request.signerType, submission_ID: submission.data.ID,
    verifiedAt: submitted.verifiedAt, submittedAt: submitted.submittedAt, network: 'devnet', networkMagic: submitted.networkMagic,
    systemStart: submitted.systemStart, chainState: 'current',
  })
  expect(submitted).toMatchObject({ networkMagic: expect.any(Number), systemStart: expect.any(String), chainState: 'current' })
  expect((await GET(`${SIGN}/VerifiedTransactions(${verified.ID})`)).data.txHash).toBe(build.txHash)
  expect(JSON.parse(verified.signerKeyHashes)).toEqual([wallet.payment.to_public().hash().to_hex()])

  await expectOnChain(POST, GET, devnet, build.txHash, build.ID)
  const log = (await POST(`${SIGN}/GetAuditLog`, { signingRequestId: request.ID })).data
  expect(log.valid).toBe(true)
  expect(log.entries.map((entry: any) => entry.kind)).toEqual(['created', 'signed', 'verified', 'submitted'])
}

describe('browser-wallet', () => {
  test('a CIP-30 witness set is merged into the original body, verified, submitted and confirmed', async () => {
    const build = await buildTransfer(POST, wallet.address, other)
    const created = await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID, signerType: 'browser-wallet', signerInfo: 'eternl' })
    expect(created.data).toMatchObject({
      status: 'pending', signerType: 'browser-wallet', signerInfo: 'eternl', build_ID: build.ID, txHash: build.txHash, unsignedTxCbor: build.unsignedTxCbor,
      senderAddress: wallet.address, network: 'devnet', requestedBy: 'alice', cardanoCliCommand: null,
    })
    expect(Date.parse(created.data.expiresAt) - Date.parse(created.data.createdAt)).toBe(1800_000)
    expect((await POST(`${TX}/GetBuildStatus`, { buildId: build.ID })).data.status).toBe('signing')
    await verifySubmitConfirm(created.data, build, witnessSetOf(created.data.unsignedTxCbor, wallet.payment))
  })

  test('a whole signed transaction is accepted as well, and submitted straight from pending', async () => {
    const build = await buildTransfer(POST, wallet.address, other, '3000000')
    const request = (await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID })).data
    expect(request.signerType).toBe('browser-wallet')
    const submission = await POST(`${SIGN}/SubmitVerifiedTransaction`, { signingRequestId: request.ID, signedTxCbor: signWith(request.unsignedTxCbor, wallet.payment), signerType: 'browser-wallet' })
    expect(submission.data).toMatchObject({ txHash: build.txHash, status: 'submitted' })
    await expectOnChain(POST, GET, devnet, build.txHash, build.ID)
  })
})

describe('cardano-cli', () => {
  test('the answer carries the exact sign command and the unsigned transaction as a text envelope', async () => {
    const build = await buildTransfer(POST, wallet.address, other)
    const request = (await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID, signerType: 'cardano-cli' })).data
    expect(request.cardanoCliCommand).toBe('cardano-cli conway transaction sign --tx-file tx.unsigned --signing-key-file payment.skey --testnet-magic 42 --out-file tx.signed')
    expect(request.cardanoCliEnvelope).toBe(`{\n    "type": "Tx ConwayEra",\n    "description": "Ledger Cddl Format",\n    "cborHex": "${build.unsignedTxCbor}"\n}\n`)
    expect(request.cardanoCliScript).toBe([
      "cat > tx.unsigned <<'EOF'", request.cardanoCliEnvelope.trimEnd(), 'EOF', request.cardanoCliCommand, 'jq -r .cborHex tx.signed',
    ].join('\n') + '\n')
    await POST(`${SIGN}/CancelSigningRequest`, { signingRequestId: request.ID })
  })

  test('the signed file as cardano-cli writes it is verified, submitted and confirmed', async () => {
    const build = await buildTransfer(POST, wallet.address, other, '4000000')
    const request = (await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID, signerType: 'cardano-cli', signerInfo: 'offline laptop' })).data
    submittedByCli.push(request.ID)
    const signedFile = JSON.stringify({ type: 'Tx ConwayEra', description: 'Ledger Cddl Format', cborHex: signWith(request.unsignedTxCbor, wallet.payment) }, null, 4) + '\n'
    await verifySubmitConfirm(request, build, signedFile)
  })

  test('the cborHex of the signed file alone is accepted too', async () => {
    const build = await buildTransfer(POST, wallet.address, other, '1500000')
    const request = (await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID, signerType: 'cardano-cli' })).data
    const verification = await POST(`${SIGN}/VerifySignature`, { signingRequestId: request.ID, signedTxCbor: signWith(request.unsignedTxCbor, wallet.payment), signerType: 'cardano-cli' })
    expect(verification.data).toMatchObject({ valid: true, status: 'verified' })
    expect((await POST(`${SIGN}/SubmitVerifiedTransaction`, { signingRequestId: request.ID })).data.status).toBe('submitted')
    submittedByCli.push(request.ID)
    devnet.produceBlock()
  })
})

describe('entity sets', () => {
  test('answer the OData query options', async () => {
    for (const set of ['SigningRequests', 'SigningAuditLog', 'VerifiedTransactions', 'SigningPolicies', 'HsmConfigurations']) {
      const response = await GET(`${SIGN}/${set}?$top=2&$skip=0&$count=true`)
      expect([set, response.status]).toEqual([set, 200])
    }
    const mine = submittedByCli.map(id => `ID eq ${id}`).join(' or ')
    const submitted = await GET(`${SIGN}/SigningRequests?$filter=status eq 'submitted' and signerType eq 'cardano-cli' and (${mine})&$select=ID,txHash,status&$orderby=createdAt desc&$count=true`)
    expect(submitted.data['@odata.count']).toBe(2)
    expect(submitted.data.value.map((r: any) => r.ID)).toEqual([...submittedByCli].reverse())
    expect(submitted.data.value[0]).toEqual({ ID: submittedByCli[1], txHash: expect.stringMatching(/^[0-9a-f]{64}$/), status: 'submitted' })
    const withLog = await GET(`${SIGN}/SigningRequests?$filter=status eq 'submitted'&$expand=auditEntries($orderby=sequence;$select=kind)&$top=1`)
    expect(withLog.data.value[0].auditEntries.map((entry: any) => entry.kind)).toEqual(['created', 'signed', 'verified', 'submitted'])
    const policies = await GET(`${SIGN}/SigningPolicies?$filter=active eq true`)
    expect(policies.data.value).toEqual([expect.objectContaining({ name: 'permissive', rules: '{}', active: true })])
    expect((await GET(`${SIGN}/HsmConfigurations`)).data.value).toEqual([])
  })
})
