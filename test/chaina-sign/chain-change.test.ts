import cds from '@sap/cds'
import { chainA } from '../../srv/chains/chain-a/index.ts'
import { stableErrorCodes } from '../../srv/lib/error-codes.ts'
import { ADA, buildTx, largestUtxo } from '../support/devnet.ts'
import { runningDevnet } from '../support/chain-a.ts'
import { expiryJobs } from '../support/expiry.ts'
import { witnessSetOf } from '../support/sign.ts'
import { SIGN, buildTransfer } from './support.ts'

// The upstream becomes another chain (a devnet restarted from the same seed, another network): the
// transaction service forgets the former chain's builds at start; signing requests, verified
// transactions and the audit log stay, and say what happened.
const { POST, GET, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }
defaults.validateStatus = () => true

const FORMER_START = '2001-01-01T00:00:00.000Z'
let devnet: ReturnType<typeof runningDevnet>
let wallet: ReturnType<ReturnType<typeof runningDevnet>['walletKeys']>
let other: string

beforeAll(async () => {
  devnet = runningDevnet()
  wallet = devnet.walletKeys('wallet-3')
  other = devnet.wallets()[0].address
  devnet.submit(buildTx({ inputs: [largestUtxo(devnet, wallet.address)], outputs: Array.from({ length: 8 }, () => ({ address: wallet.address, coin: 40n * ADA })), signers: [wallet.payment] }))
  devnet.produceBlock()
  await expiryJobs()
})

const ok = (response: { status: number; data: any }) => {
  if (response.status >= 300) throw new Error(`expected success, got ${response.status} ${JSON.stringify(response.data)}`)
  return response.data
}

async function signedRequest() {
  const build = await buildTransfer(POST, wallet.address, other)
  const request = ok(await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID }))
  ok(await POST(`${SIGN}/VerifySignature`, { signingRequestId: request.ID, signedTxCbor: witnessSetOf(request.unsignedTxCbor, wallet.payment) }))
  return { build, request }
}

/** A verified transaction as another owner, or the same one on a former chain, may hold the same hash. */
const verifiedTransaction = (txHash: string, row: Record<string, unknown>) =>
  cds.tx(() => INSERT.into(cds.entities('chainasign').VerifiedTransactions).entries({ ID: cds.utils.uuid(), txHash, signerType: 'browser-wallet', ...row }))

test('the same transaction hash verified on a former chain and by another owner: the submission is recorded as a transaction of its own', async () => {
  const { build, request } = await signedRequest()
  const current = { network: request.network, networkMagic: request.networkMagic, systemStart: request.systemStart }
  await verifiedTransaction(build.txHash, { owner: 'alice', ...current, systemStart: FORMER_START, chainState: 'former' })
  await verifiedTransaction(build.txHash, { owner: 'bob', ...current })

  const submission = await POST(`${SIGN}/SubmitVerifiedTransaction`, { signingRequestId: request.ID })
  expect(submission.data).toMatchObject({ txHash: build.txHash, status: 'submitted' })
  const rows = (await GET(`${SIGN}/VerifiedTransactions?$filter=txHash eq '${build.txHash}'&$orderby=chainState,owner`)).data.value
  expect(rows.map((row: any) => [row.owner, row.chainState, row.systemStart, row.signingRequest_ID])).toEqual([
    ['alice', 'current', request.systemStart, request.ID],
    ['bob', 'current', request.systemStart, null],
    ['alice', 'former', FORMER_START, null],
  ])
})

test('one verified transaction per owner, chain and hash: the database refuses a second, and that answers 409 CONFLICT, never 500', async () => {
  const { build, request } = await signedRequest()
  const row = { owner: 'alice', network: request.network, networkMagic: request.networkMagic, systemStart: request.systemStart }
  await verifiedTransaction(build.txHash, row)
  const refusal = await verifiedTransaction(build.txHash, row).then(() => undefined, (error: unknown) => error)
  expect(refusal).toBeDefined()
  let answered: any
  stableErrorCodes(refusal, { method: 'POST', originalUrl: `${SIGN}/SubmitVerifiedTransaction` }, undefined, (error: unknown) => (answered = error))
  expect(answered).toMatchObject({ status: 409, code: 'CONFLICT' })
  ok(await POST(`${SIGN}/CancelSigningRequest`, { signingRequestId: request.ID }))
})

// Last: it removes every build.
test('after a reset, open requests of the former chain are expired (BUILD_FORGOTTEN, audited as system), the rest is marked former', async () => {
  const { NetworkParametersCache, TransactionBuilds } = cds.entities('chainatx')
  // As if the chain the builds are made on had started in 2001: what follows is made on it.
  await cds.tx(() => UPDATE(NetworkParametersCache).set({ systemStart: FORMER_START }))
  const pending = ok(await POST(`${SIGN}/CreateSigningRequest`, { buildId: (await buildTransfer(POST, wallet.address, other)).ID }))
  expect(pending.systemStart).toBe(FORMER_START)
  const { build: submittedBuild, request: submitted } = await signedRequest()
  ok(await POST(`${SIGN}/SubmitVerifiedTransaction`, { signingRequestId: submitted.ID }))
  // A request made before requests recorded their chain.
  const legacy = ok(await POST(`${SIGN}/CreateSigningRequest`, { buildId: (await buildTransfer(POST, wallet.address, other, '2100000')).ID }))
  await cds.tx(() => UPDATE(cds.entities('chainasign').SigningRequests, legacy.ID).set({ networkMagic: null, systemStart: null }))

  await (await chainA()).verifyUpstream()

  expect(await cds.tx(() => SELECT.from(TransactionBuilds))).toEqual([])
  const expired = ok(await POST(`${SIGN}/GetSigningRequest`, { signingRequestId: pending.ID }))
  expect(expired).toMatchObject({
    status: 'expired', chainState: 'former', systemStart: FORMER_START, failureCode: 'BUILD_FORGOTTEN',
    failureReason: expect.stringContaining('a chain the upstream no longer serves'),
  })
  expect(ok(await POST(`${SIGN}/GetSigningRequest`, { signingRequestId: submitted.ID }))).toMatchObject({ status: 'submitted', chainState: 'former', failureCode: null })
  expect(ok(await POST(`${SIGN}/GetSigningRequest`, { signingRequestId: legacy.ID }))).toMatchObject({ status: 'expired', chainState: 'former', failureCode: 'BUILD_FORGOTTEN' })
  const [verified] = (await GET(`${SIGN}/VerifiedTransactions?$filter=txHash eq '${submittedBuild.txHash}'`)).data.value
  expect(verified).toMatchObject({ chainState: 'former', systemStart: FORMER_START })

  const log = ok(await POST(`${SIGN}/GetAuditLog`, { signingRequestId: pending.ID }))
  expect(log.valid).toBe(true)
  expect(log.entries.map((entry: any) => [entry.kind, entry.actor])).toEqual([['created', 'alice'], ['expired', 'system']])
  expect(JSON.parse(log.entries[1].details)).toMatchObject({ code: 'BUILD_FORGOTTEN', reason: 'build forgotten: the upstream is another chain' })
  const again = await POST(`${SIGN}/CancelSigningRequest`, { signingRequestId: pending.ID })
  expect(again.data.error).toMatchObject({ code: 'SIGNING_REQUEST_EXPIRED', message: expect.stringContaining('no longer serves') })
  expect(again.status).toBe(410)

  // The new chain's records are current.
  const fresh = ok(await POST(`${SIGN}/CreateSigningRequest`, { buildId: (await buildTransfer(POST, wallet.address, other)).ID }))
  expect(fresh).toMatchObject({ status: 'pending', chainState: 'current' })
  expect(fresh.systemStart).not.toBe(FORMER_START)
})
