import cds from '@sap/cds'
import { runningDevnet } from '../support/chain-a.ts'
import { witnessSetOf } from '../support/sign.ts'
import { balanceOf, bearer, issueTestKey, settled } from '../support/gateway.ts'
import { ADA, buildTx } from '../support/devnet.ts'
import { READ, SIGN, TX } from './support.ts'

process.env.GATEWAY_ENABLED = 'true'
const { POST, GET, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true

let devnet: ReturnType<typeof runningDevnet>
let wallet: ReturnType<ReturnType<typeof runningDevnet>['walletKeys']>
let other: string

beforeAll(() => {
  devnet = runningDevnet()
  wallet = devnet.walletKeys('wallet-2')
  other = devnet.wallets()[0].address
})
afterAll(() => {
  delete process.env.GATEWAY_ENABLED
})

/** Calls with the key and checks what the gateway charged for it. */
function caller(key: string) {
  return async (path: string, data: object | undefined, charged: number) => {
    const response = data === undefined ? await GET(path, bearer(key)) : await POST(path, data, bearer(key))
    expect([path, response.headers['x-access-units-charged']]).toEqual([path, String(charged)])
    return response
  }
}

test('a browser-wallet flow is charged by the price table: build 10, signing request 5, verification 5, submit 20, reads 2 and 1', async () => {
  const { id, key } = await issueTestKey({ units: 1000 })
  const call = caller(key)
  const build = (await call(`${TX}/BuildSimpleAdaTransaction`, { senderAddress: wallet.address, recipientAddress: other, lovelaceAmount: '2000000' }, 10)).data
  const request = (await call(`${SIGN}/CreateSigningRequest`, { buildId: build.ID }, 5)).data
  expect(request).toMatchObject({ status: 'pending', requestedBy: `key:${id}` })
  const verification = (await call(`${SIGN}/VerifySignature`, { signingRequestId: request.ID, signedTxCbor: witnessSetOf(request.unsignedTxCbor, wallet.payment) }, 5)).data
  expect(verification.valid).toBe(true)
  expect((await call(`${SIGN}/GetSigningRequest`, { signingRequestId: request.ID }, 2)).data.status).toBe('verified')
  const submission = await call(`${SIGN}/SubmitVerifiedTransaction`, { signingRequestId: request.ID }, 20)
  expect(submission.data).toMatchObject({ txHash: build.txHash, status: 'submitted' })
  expect(submission.headers['x-access-units-left']).toBe(String(1000 - 10 - 5 - 5 - 2 - 20))
  devnet.produceBlock()
  expect((await call(`${TX}/GetTransactionStatus`, { txHash: build.txHash }, 2)).data.status).toBe('confirmed')
  expect((await call(`${SIGN}/SigningRequests(${request.ID})`, undefined, 1)).data.status).toBe('submitted')
  expect((await call(`${READ}/Transactions('${build.txHash}')`, undefined, 1)).status).toBe(200)
  const log = (await call(`${SIGN}/GetAuditLog`, { signingRequestId: request.ID }, 2)).data
  expect(log.entries.map((entry: any) => [entry.kind, entry.actor])).toEqual(['created', 'signed', 'verified', 'submitted'].map(kind => [kind, `key:${id}`]))
  await settled(id)
  expect(await balanceOf(id)).toBe(1000 - 10 - 5 - 5 - 2 - 20 - 2 - 1 - 1 - 2)
})

test('a submission the ledger rejects is refunded', async () => {
  const { id, key } = await issueTestKey({ units: 100 })
  const call = caller(key)
  const build = (await call(`${TX}/BuildSimpleAdaTransaction`, { senderAddress: wallet.address, recipientAddress: other, lovelaceAmount: '2000000' }, 10)).data
  const request = (await call(`${SIGN}/CreateSigningRequest`, { buildId: build.ID }, 5)).data
  await call(`${SIGN}/VerifySignature`, { signingRequestId: request.ID, signedTxCbor: witnessSetOf(request.unsignedTxCbor, wallet.payment) }, 5)
  const input = (await call(`${TX}/BuildInputs?$filter=build_ID eq ${build.ID}`, undefined, 1)).data.value[0]
  const output = devnet.ledger.unspentAt(wallet.address).find(o => o.ref === `${input.txHash}#${input.outputIndex}`)!
  devnet.submit(buildTx({ inputs: [output], outputs: [{ address: other, coin: 3n * ADA }], signers: [wallet.payment] }))
  devnet.produceBlock()

  const rejected = await call(`${SIGN}/SubmitVerifiedTransaction`, { signingRequestId: request.ID }, 0)
  expect(rejected.data.error.code).toBe('TX_REJECTED')
  expect(rejected.status).toBe(400)
  expect(rejected.headers['x-access-units-left']).toBe(String(100 - 10 - 5 - 5 - 1))
  await settled(id)
  expect(await balanceOf(id)).toBe(100 - 10 - 5 - 5 - 1)
  expect((await call(`${SIGN}/GetSigningRequest`, { signingRequestId: request.ID }, 2)).data).toMatchObject({ status: 'failed', failureCode: 'TX_REJECTED' })
})

test('SignWithHsm is closed on the hosted API (403, not charged); policy writes are not forwarded', async () => {
  const { id, key } = await issueTestKey({ units: 50 })
  const hsm = await POST(`${SIGN}/SignWithHsm`, { buildId: cds.utils.uuid() }, bearer(key))
  expect(hsm.data.error.code).toBe('OPERATION_CLOSED')
  expect(hsm.status).toBe(403)
  expect(hsm.headers['x-access-units-charged']).toBe('0')
  const write = await POST(`${SIGN}/SigningPolicies`, { name: 'open-door', rules: '{}' }, bearer(key))
  expect(write.status).toBe(403)
  expect(write.headers['x-access-units-charged']).toBe('0')
  const policies = await GET(`${SIGN}/SigningPolicies`, bearer(key))
  expect(policies.data.value.map((policy: any) => policy.name)).not.toContain('open-door')
  expect(policies.headers['x-access-units-charged']).toBe('1')
  await settled(id)
  expect(await balanceOf(id)).toBe(50 - 1)
})

test('what the signing service asks of builds (claim, release, signing facts) is no route: 403, not charged, nothing claimed', async () => {
  const { id, key } = await issueTestKey({ units: 50 })
  const build = (await POST(`${TX}/BuildSimpleAdaTransaction`, { senderAddress: wallet.address, recipientAddress: other, lovelaceAmount: '2000000' }, bearer(key))).data
  const claim = { buildId: build.ID, signingRequestId: cds.utils.uuid(), until: new Date(Date.now() + 600_000).toISOString() }
  for (const path of ['/odata/v4/chain-a-build-signing/ClaimBuildForSigning', `${TX}/ClaimBuildForSigning`, `${TX}/ReleaseBuild`, `${SIGN}/ClaimBuildForSigning`]) {
    const response = await POST(path, claim, bearer(key))
    expect([path, response.status, response.data.error?.code, response.headers['x-access-units-charged']]).toEqual([path, 403, 'ROUTE_NOT_FORWARDED', '0'])
  }
  expect((await POST(`${TX}/GetBuildStatus`, { buildId: build.ID }, bearer(key))).data.status).toBe('built')
  await POST(`${TX}/CancelBuild`, { buildId: build.ID }, bearer(key))
  await settled(id)
})
