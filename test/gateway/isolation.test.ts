import cds from '@sap/cds'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { runningDevnet } from '../support/chain-a.ts'
import { bearer, issueTestKey } from '../support/gateway.ts'
import { signWith, witnessSetOf } from '../support/sign.ts'
import { ADA, buildTx, largestUtxo } from '../support/devnet.ts'

// Tenancy through the hosted gateway (DESIGN 5): two keys on one deployment. Key B gets nothing of
// key A's: no row of any owned entity set, a 404 for every id of A's (the same as for an id that
// does not exist), and no change to A's records from any action it calls with A's ids.
process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_RATE_PER_SECOND = '100000'
process.env.GATEWAY_BURST = '100000'
const app = cds.test(__dirname + '/../..')
const { POST, GET, defaults } = app
defaults.validateStatus = () => true

afterAll(() => {
  for (const name of ['GATEWAY_ENABLED', 'GATEWAY_RATE_PER_SECOND', 'GATEWAY_BURST']) delete process.env[name]
})

const TX = '/odata/v4/chaina-transaction'
const SIGN = '/odata/v4/chaina-sign'
const uuid = () => cds.utils.uuid()
const randomHash = () => 'cd'.repeat(32)

interface Caller { id: string; key: string; owner: string }
const get = (caller: Caller, path: string) => GET(path, bearer(caller.key))
const post = (caller: Caller, path: string, data: object) => POST(path, data, bearer(caller.key))

let devnet: ReturnType<typeof runningDevnet>
let wallet: ReturnType<ReturnType<typeof runningDevnet>['walletKeys']>
let recipient: string
let lone: string
let A: Caller
let B: Caller

/** What A has: a built mint (with assets and metadata), a pending, a verified and a submitted request, a failed build. */
const a: Record<string, any> = {}
/** B's own records, so B's reads are not empty. */
const b: Record<string, any> = {}

async function ok(response: { status: number; data: any }) {
  if (response.status >= 300) throw new Error(`expected success, got ${response.status} ${JSON.stringify(response.data)}`)
  return response.data
}

const transfer = async (caller: Caller, lovelaceAmount: string, senderAddress = wallet.address) =>
  ok(await post(caller, `${TX}/BuildSimpleAdaTransaction`, { senderAddress, recipientAddress: recipient, lovelaceAmount }))

/** A native-token mint with CIP-25 metadata: a build with inputs, outputs, assets and metadata. */
async function mint(caller: Caller, name: string) {
  const keyHash = wallet.payment.to_public().hash().to_hex()
  const policyId = CSL.NativeScript.new_script_pubkey(CSL.ScriptPubkey.new(CSL.Ed25519KeyHash.from_hex(keyHash))).hash().to_hex()
  return ok(await post(caller, `${TX}/BuildTokenMintTransaction`, {
    senderAddress: wallet.address, mintActionsJson: JSON.stringify([{ assetName: name, quantity: '10' }]),
    mintingPolicyScript: JSON.stringify({ type: 'sig', keyHash }), metadataJson: JSON.stringify({ 721: { [policyId]: { [name]: { name } } } }),
  }))
}

const requestFor = async (caller: Caller, build: any) => ok(await post(caller, `${SIGN}/CreateSigningRequest`, { buildId: build.ID }))
const verify = async (caller: Caller, request: any) =>
  ok(await post(caller, `${SIGN}/VerifySignature`, { signingRequestId: request.ID, signedTxCbor: witnessSetOf(request.unsignedTxCbor, wallet.payment) }))

/** Everything of an owner's in the database (and how many rows every table has), to prove a call changed nothing. */
async function recordsOf(owner: string) {
  const tx = cds.entities('chainatx')
  const sign = cds.entities('chainasign')
  const sorted = (rows: any[]) => rows.map(row => JSON.stringify(row)).sort()
  return cds.tx(async () => {
    const builds = await SELECT.from(tx.TransactionBuilds).where({ owner })
    const buildIds = builds.map((build: any) => build.ID)
    const records: Record<string, string[]> = { TransactionBuilds: sorted(builds) }
    for (const name of ['BuildInputs', 'BuildOutputs', 'BuildAssets', 'BuildMetadata']) records[name] = sorted(await SELECT.from(tx[name]).where({ build_ID: { in: buildIds } }))
    for (const entity of [tx.TransactionSubmissions, tx.SpendLocks, sign.SigningRequests, sign.SigningAuditLog, sign.VerifiedTransactions]) {
      records[entity.name.split('.').pop()!] = sorted(await SELECT.from(entity).where({ owner }))
    }
    const counts: Record<string, number> = {}
    for (const entity of [...Object.values(tx), ...Object.values(sign)] as any[]) {
      if (entity.kind === 'entity' && !entity.query) counts[entity.name] = Number((await SELECT.one.from(entity).columns('count(*) as n')).n)
    }
    return { records, counts }
  })
}

/** Ids and hashes that only A's records carry. */
const markersOfA = () => [A.owner, ...Object.values(a).flatMap((record: any) => [record.ID, record.txHash]).filter(Boolean)]

beforeAll(async () => {
  devnet = runningDevnet()
  wallet = devnet.walletKeys('wallet-1')
  recipient = devnet.wallets()[1].address
  // Enough separate outputs for both keys' builds, and an address with a single output.
  devnet.submit(buildTx({ inputs: [largestUtxo(devnet, wallet.address)], outputs: Array.from({ length: 12 }, () => ({ address: wallet.address, coin: 40n * ADA })), signers: [wallet.payment] }))
  lone = CSL.EnterpriseAddress.new(0, CSL.Credential.from_keyhash(CSL.PrivateKey.generate_ed25519().to_public().hash())).to_address().to_bech32()
  const funder = devnet.walletKeys('wallet-4')
  devnet.submit(buildTx({ inputs: [largestUtxo(devnet, funder.address)], outputs: [{ address: lone, coin: 20n * ADA }], signers: [funder.payment] }))
  devnet.produceBlock()

  const [keyA, keyB] = [await issueTestKey({ units: 100_000 }), await issueTestKey({ units: 100_000 })]
  A = { ...keyA, owner: `key:${keyA.id}` }
  B = { ...keyB, owner: `key:${keyB.id}` }

  a.built = await mint(A, 'CoinOfA')
  a.pendingBuild = await transfer(A, '2100000')
  a.pending = await requestFor(A, a.pendingBuild)
  a.verifiedBuild = await transfer(A, '2200000')
  a.verified = await requestFor(A, a.verifiedBuild)
  await verify(A, a.verified)
  a.submittedBuild = await transfer(A, '2300000')
  a.submittedRequest = await requestFor(A, a.submittedBuild)
  await verify(A, a.submittedRequest)
  a.submission = await ok(await post(A, `${SIGN}/SubmitVerifiedTransaction`, { signingRequestId: a.submittedRequest.ID }))
  a.failed = await transfer(A, '2400000')
  const rejected = await post(A, `${TX}/SubmitSignedTransaction`, { signedTxCbor: a.failed.unsignedTxCbor, buildId: a.failed.ID })
  expect(rejected.data.error.code).toBe('TX_REJECTED')
  a.failedSubmission = (await get(A, `${TX}/TransactionSubmissions?$filter=txHash eq '${a.failed.txHash}'`)).data.value[0]
  a.audit = (await get(A, `${SIGN}/SigningAuditLog?$filter=signingRequest_ID eq ${a.submittedRequest.ID}&$top=1`)).data.value[0]
  a.verifiedTransaction = (await get(A, `${SIGN}/VerifiedTransactions?$filter=txHash eq '${a.submittedBuild.txHash}'`)).data.value[0]
  a.asset = (await get(A, `${TX}/BuildAssets?$filter=build_ID eq ${a.built.ID} and role eq 'mint'`)).data.value[0]

  b.built = await mint(B, 'CoinOfB')
  b.submittedBuild = await transfer(B, '2500000')
  b.request = await requestFor(B, b.submittedBuild)
  await verify(B, b.request)
  b.submission = await ok(await post(B, `${SIGN}/SubmitVerifiedTransaction`, { signingRequestId: b.request.ID }))
  b.pending = await requestFor(B, await transfer(B, '2600000'))
})

describe('entity sets', () => {
  // [what, A's, an id that does not exist]
  const keyed: [string, () => string, () => string][] = [
    ['TransactionBuilds', () => `${TX}/TransactionBuilds(${a.built.ID})`, () => `${TX}/TransactionBuilds(${uuid()})`],
    ['TransactionBuilds, navigation to inputs', () => `${TX}/TransactionBuilds(${a.built.ID})/inputs`, () => `${TX}/TransactionBuilds(${uuid()})/inputs`],
    ['TransactionBuilds, with $expand', () => `${TX}/TransactionBuilds(${a.built.ID})?$expand=inputs,outputs,assets,metadata,submissions`, () => `${TX}/TransactionBuilds(${uuid()})?$expand=inputs,outputs,assets,metadata,submissions`],
    ['TransactionSubmissions', () => `${TX}/TransactionSubmissions(${a.submission.ID})`, () => `${TX}/TransactionSubmissions(${uuid()})`],
    ['TransactionSubmissions, navigation to the build', () => `${TX}/TransactionSubmissions(${a.submission.ID})/build`, () => `${TX}/TransactionSubmissions(${uuid()})/build`],
    ['BuildInputs', () => `${TX}/BuildInputs(build_ID=${a.built.ID},inputIndex=0)`, () => `${TX}/BuildInputs(build_ID=${uuid()},inputIndex=0)`],
    ['BuildOutputs', () => `${TX}/BuildOutputs(build_ID=${a.built.ID},outputIndex=0)`, () => `${TX}/BuildOutputs(build_ID=${uuid()},outputIndex=0)`],
    ['BuildAssets', () => `${TX}/BuildAssets(build_ID=${a.built.ID},role='mint',position=0,unit='${a.asset.unit}')`, () => `${TX}/BuildAssets(build_ID=${uuid()},role='mint',position=0,unit='${a.asset.unit}')`],
    ['BuildMetadata', () => `${TX}/BuildMetadata(build_ID=${a.built.ID},label='721')`, () => `${TX}/BuildMetadata(build_ID=${uuid()},label='721')`],
    ['SigningRequests', () => `${SIGN}/SigningRequests(${a.pending.ID})`, () => `${SIGN}/SigningRequests(${uuid()})`],
    ['SigningRequests, navigation to the audit entries', () => `${SIGN}/SigningRequests(${a.submittedRequest.ID})/auditEntries`, () => `${SIGN}/SigningRequests(${uuid()})/auditEntries`],
    ['SigningAuditLog', () => `${SIGN}/SigningAuditLog(${a.audit.sequence})`, () => `${SIGN}/SigningAuditLog(999999)`],
    ['SigningAuditLog, navigation to the request', () => `${SIGN}/SigningAuditLog(${a.audit.sequence})/signingRequest`, () => `${SIGN}/SigningAuditLog(999999)/signingRequest`],
    ['VerifiedTransactions', () => `${SIGN}/VerifiedTransactions(${a.verifiedTransaction.ID})`, () => `${SIGN}/VerifiedTransactions(${uuid()})`],
  ]

  test.each(keyed)('%s: A\'s key answers B 404, the same as an id that does not exist', async (_what, ofA, unknown) => {
    expect((await get(A, ofA())).status).toBe(200)
    const [theirs, none] = [await get(B, ofA()), await get(B, unknown())]
    expect(theirs.data).toEqual(none.data)
    expect(theirs.status).toBe(404)
    expect(none.status).toBe(404)
  })

  // [what, path, what of B's own the answer must hold (none: an empty answer)]
  const collections: [string, string, (() => string) | null][] = [
    ['TransactionBuilds with everything expanded', `${TX}/TransactionBuilds?$count=true&$expand=inputs,outputs,assets,metadata,submissions`, () => b.built.ID],
    ['TransactionSubmissions with their builds', `${TX}/TransactionSubmissions?$count=true&$expand=build`, () => b.submission.ID],
    ['BuildInputs', `${TX}/BuildInputs?$count=true&$expand=build($expand=submissions)`, () => b.built.ID],
    ['BuildOutputs', `${TX}/BuildOutputs?$count=true&$expand=build`, () => b.built.ID],
    ['BuildAssets', `${TX}/BuildAssets?$count=true&$expand=build`, () => b.built.ID],
    ['BuildMetadata', `${TX}/BuildMetadata?$count=true&$expand=build`, () => b.built.ID],
    ['SigningRequests with their audit entries', `${SIGN}/SigningRequests?$count=true&$expand=auditEntries`, () => b.request.ID],
    ['SigningAuditLog with the requests', `${SIGN}/SigningAuditLog?$count=true&$expand=signingRequest`, () => b.request.ID],
    ['VerifiedTransactions with the requests', `${SIGN}/VerifiedTransactions?$count=true&$expand=signingRequest($expand=auditEntries)`, () => b.submittedBuild.txHash],
    ['TransactionBuilds filtered by A\'s id', `${TX}/TransactionBuilds?$count=true&$filter=ID eq {built}`, null],
    ['SigningRequests filtered by a state only A has', `${SIGN}/SigningRequests?$count=true&$filter=status eq 'verified'`, null],
  ]

  test.each(collections)('%s: B sees its own rows and none of A\'s, in $count and $expand too', async (_what, template, ownOfB) => {
    const path = template.replace('{built}', a.built.ID)
    const seenByA = JSON.stringify((await get(A, path)).data)
    expect(markersOfA().some(marker => seenByA.includes(marker))).toBe(true)
    const response = await get(B, path)
    expect(response.status).toBe(200)
    const seenByB = JSON.stringify(response.data)
    for (const marker of markersOfA()) expect([marker, seenByB.includes(marker)]).toEqual([marker, false])
    expect(response.data['@odata.count']).toBe(response.data.value.length)
    if (ownOfB) expect(seenByB).toContain(ownOfB())
    else expect(response.data.value).toEqual([])
  })

  test.each([
    ['TransactionBuilds', TX], ['TransactionSubmissions', TX], ['BuildInputs', TX], ['BuildOutputs', TX], ['BuildAssets', TX], ['BuildMetadata', TX],
    ['SigningRequests', SIGN], ['SigningAuditLog', SIGN], ['VerifiedTransactions', SIGN],
  ])('%s/$count counts only the caller\'s rows', async (set, service) => {
    for (const caller of [A, B]) {
      const response = await get(caller, `${service}/${set}/$count`)
      expect([caller.owner, Number(response.data)]).toEqual([caller.owner, (await recordsOf(caller.owner)).records[set].length])
    }
  })
})

describe('actions with A\'s ids answer B as for ids that do not exist, and change nothing', () => {
  // [action, service, with A's id, with an id that does not exist]
  const actions: [string, string, () => object, () => object][] = [
    ['GetBuildStatus', TX, () => ({ buildId: a.built.ID }), () => ({ buildId: uuid() })],
    ['CancelBuild', TX, () => ({ buildId: a.built.ID }), () => ({ buildId: uuid() })],
    ['CancelBuild', TX, () => ({ buildId: a.pendingBuild.ID }), () => ({ buildId: uuid() })],
    ['RebuildTransaction', TX, () => ({ buildId: a.failed.ID }), () => ({ buildId: uuid() })],
    ['SubmitSignedTransaction', TX, () => ({ buildId: a.built.ID, signedTxCbor: signWith(a.built.unsignedTxCbor, wallet.payment) }),
      () => ({ buildId: uuid(), signedTxCbor: signWith(a.built.unsignedTxCbor, wallet.payment) })],
    ['GetTransactionStatus', TX, () => ({ txHash: a.submittedBuild.txHash }), () => ({ txHash: randomHash() })],
    ['CreateSigningRequest', SIGN, () => ({ buildId: a.built.ID }), () => ({ buildId: uuid() })],
    ['CreateSigningRequest', SIGN, () => ({ buildId: a.pendingBuild.ID }), () => ({ buildId: uuid() })],
    ['GetSigningRequest', SIGN, () => ({ signingRequestId: a.pending.ID }), () => ({ signingRequestId: uuid() })],
    ['VerifySignature', SIGN, () => ({ signingRequestId: a.pending.ID, signedTxCbor: witnessSetOf(a.pending.unsignedTxCbor, wallet.payment) }),
      () => ({ signingRequestId: uuid(), signedTxCbor: witnessSetOf(a.pending.unsignedTxCbor, wallet.payment) })],
    ['SubmitVerifiedTransaction', SIGN, () => ({ signingRequestId: a.verified.ID }), () => ({ signingRequestId: uuid() })],
    ['SubmitVerifiedTransaction', SIGN, () => ({ signingRequestId: a.pending.ID, signedTxCbor: witnessSetOf(a.pending.unsignedTxCbor, wallet.payment) }),
      () => ({ signingRequestId: uuid(), signedTxCbor: witnessSetOf(a.pending.unsignedTxCbor, wallet.payment) })],
    ['CancelSigningRequest', SIGN, () => ({ signingRequestId: a.pending.ID }), () => ({ signingRequestId: uuid() })],
    ['CancelSigningRequest', SIGN, () => ({ signingRequestId: a.verified.ID }), () => ({ signingRequestId: uuid() })],
    ['GetAuditLog', SIGN, () => ({ signingRequestId: a.submittedRequest.ID }), () => ({ signingRequestId: uuid() })],
  ]

  test.each(actions)('%s (%#)', async (action, service, withIdOfA, withUnknownId) => {
    const before = await recordsOf(A.owner)
    const [theirs, none] = [await post(B, `${service}/${action}`, withIdOfA()), await post(B, `${service}/${action}`, withUnknownId())]
    if (action === 'GetAuditLog') {
      expect([theirs.data.entries, none.data.entries]).toEqual([[], []])
      expect([theirs.status, none.status]).toEqual([200, 200])
    } else {
      expect(theirs.data.error.code).toBe(none.data.error.code)
      expect(theirs.data.error.code).toMatch(/_NOT_FOUND$/)
      expect([theirs.status, none.status]).toEqual([404, 404])
    }
    expect(await recordsOf(A.owner)).toEqual(before)
  })

  test('ListPendingRequests and GetAuditLog answer B its own requests and entries only', async () => {
    const before = await recordsOf(A.owner)
    for (const data of [{}, { address: wallet.address }]) {
      const listed = (await post(B, `${SIGN}/ListPendingRequests`, data)).data.value
      expect(listed.map((request: any) => request.ID)).toEqual([b.pending.ID])
    }
    const log = (await post(B, `${SIGN}/GetAuditLog`, {})).data
    expect(log.valid).toBe(true)
    expect(new Set(log.entries.map((entry: any) => entry.signingRequestId))).toEqual(new Set([b.request.ID, b.pending.ID]))
    expect(new Set(log.entries.map((entry: any) => entry.actor))).toEqual(new Set([B.owner]))
    const mine = (await post(A, `${SIGN}/GetAuditLog`, {})).data
    expect(mine.entries.every((entry: any) => entry.actor === A.owner)).toBe(true)
    // The whole chain is verified for both, whoever's entries it holds.
    expect(mine.entries.length + log.entries.length).toBe(before.counts['chainasign.SigningAuditLog'])
    expect(await recordsOf(A.owner)).toEqual(before)
  })
})

describe('submissions belong to their owner', () => {
  test('B submitting the transaction of A\'s failed submission gets its own answer; A\'s submission stays as it was', async () => {
    const before = await recordsOf(A.owner)
    const response = await post(B, `${TX}/SubmitSignedTransaction`, { signedTxCbor: a.failed.unsignedTxCbor })
    expect(response.data.error.code).toBe('TX_REJECTED')
    expect((await recordsOf(A.owner)).records).toEqual(before.records)
    const ofB = (await get(B, `${TX}/TransactionSubmissions?$filter=txHash eq '${a.failed.txHash}'`)).data.value
    expect(ofB).toEqual([expect.objectContaining({ owner: B.owner, status: 'failed', build_ID: null })])
    expect(ofB[0].ID).not.toBe(a.failedSubmission.ID)
  })

  test('A\'s pending submission does not make B\'s submission of the same transaction a 409', async () => {
    const before = await recordsOf(A.owner)
    const response = await post(B, `${TX}/SubmitSignedTransaction`, { signedTxCbor: signWith(a.submittedBuild.unsignedTxCbor, wallet.payment) })
    expect(response.data.error).toMatchObject({ code: 'TX_REJECTED', message: expect.stringContaining('DuplicateTransaction') })
    expect((await recordsOf(A.owner)).records).toEqual(before.records)
    const status = await post(B, `${TX}/GetTransactionStatus`, { txHash: a.submittedBuild.txHash })
    expect(status.data.submissionId).not.toBe(a.submission.ID)
  })
})

describe('spend locks', () => {
  test('a pending build keeps its outputs from its owner\'s next build only: another key builds from the same sender', async () => {
    const first = await transfer(A, '3000000', lone)
    const again = await post(A, `${TX}/BuildSimpleAdaTransaction`, { senderAddress: lone, recipientAddress: recipient, lovelaceAmount: '3100000' })
    expect(again.data.error.code).toBe('INSUFFICIENT_FUNDS')
    const other = await transfer(B, '3200000', lone)
    expect(other.status).toBe('built')
    const inputs = async (caller: Caller, build: any) =>
      (await get(caller, `${TX}/BuildInputs?$filter=build_ID eq ${build.ID}`)).data.value.map((input: any) => `${input.txHash}#${input.outputIndex}`)
    expect(await inputs(B, other)).toEqual(await inputs(A, first))
  })
})

test('a rotated key keeps its records: the owner is the key, not its secret', async () => {
  const rotation = await fetch(`${(app as any).url}/me/rotate`, { method: 'POST', headers: { authorization: `Bearer ${A.key}` } })
  const { key } = await rotation.json()
  const response = await GET(`${TX}/TransactionBuilds(${a.built.ID})`, bearer(key))
  expect(response.data.owner).toBe(A.owner)
  expect(response.status).toBe(200)
  A.key = key
})
