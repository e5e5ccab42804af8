import cds from '@sap/cds'
import { runningDevnet } from '../support/chain-a.ts'
import { witnessSetOf } from '../support/sign.ts'
import { ADA, buildTx, largestUtxo } from '../support/devnet.ts'
import { issueGrant } from '../../srv/gateway/accounts.ts'
import { SIGN, TX } from './support.ts'

// Tenancy self-hosted (DESIGN 5): the owner is the user (mocked alice and bob here, JWT users in
// production) or the grant of an x-agent-token. An operator (role admin: alice) sees and acts on
// everyone's records; bob and a grant only on their own.
const { POST, GET, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true

interface Caller { name: string; owner: string; config: () => object }
const user = (name: string): Caller => ({ name, owner: name, config: () => ({ auth: { username: name, password: '' } }) })
const alice = user('alice')
const bob = user('bob')
let grant: Caller
const callers = () => [alice, bob, grant]

let devnet: ReturnType<typeof runningDevnet>
let wallet: ReturnType<ReturnType<typeof runningDevnet>['walletKeys']>
let recipient: string
/** Each caller's build with a pending request, and a submitted one (with its verified transaction). */
const records: Record<string, { pending: any; request: any; submittedBuild: any; submitted: any; submission: any }> = {}

const get = (caller: Caller, path: string) => GET(path, caller.config())
const post = (caller: Caller, path: string, data: object) => POST(path, data, caller.config())

async function ok(response: { status: number; data: any }) {
  if (response.status >= 300) throw new Error(`expected success, got ${response.status} ${JSON.stringify(response.data)}`)
  return response.data
}

const transfer = async (caller: Caller, lovelaceAmount: string) =>
  ok(await post(caller, `${TX}/BuildSimpleAdaTransaction`, { senderAddress: wallet.address, recipientAddress: recipient, lovelaceAmount }))

beforeAll(async () => {
  devnet = runningDevnet()
  wallet = devnet.walletKeys('wallet-2')
  recipient = devnet.wallets()[0].address
  devnet.submit(buildTx({ inputs: [largestUtxo(devnet, wallet.address)], outputs: Array.from({ length: 12 }, () => ({ address: wallet.address, coin: 40n * ADA })), signers: [wallet.payment] }))
  devnet.produceBlock()
  const issued = await issueGrant({ product: 'chain-a' })
  grant = { name: 'a grant', owner: `grant:${issued.id}`, config: () => ({ headers: { 'x-agent-token': issued.token } }) }

  let lovelace = 2_000_000
  for (const caller of callers()) {
    const pending = await transfer(caller, String(lovelace++))
    const request = await ok(await post(caller, `${SIGN}/CreateSigningRequest`, { buildId: pending.ID }))
    const submittedBuild = await transfer(caller, String(lovelace++))
    const submitted = await ok(await post(caller, `${SIGN}/CreateSigningRequest`, { buildId: submittedBuild.ID }))
    const signedTxCbor = witnessSetOf(submitted.unsignedTxCbor, wallet.payment)
    const submission = await ok(await post(caller, `${SIGN}/SubmitVerifiedTransaction`, { signingRequestId: submitted.ID, signedTxCbor }))
    records[caller.owner] = { pending, request, submittedBuild, submitted, submission }
  }
})

/** The owners whose rows an answer holds. */
const ownersIn = (rows: any[]) => new Set(rows.map(row => row.owner ?? row.build?.owner))

describe('entity sets', () => {
  test.each([
    [`${TX}/TransactionBuilds`], [`${TX}/TransactionSubmissions`], [`${TX}/BuildInputs?$expand=build`], [`${TX}/BuildOutputs?$expand=build`],
    [`${SIGN}/SigningRequests`], [`${SIGN}/SigningAuditLog`], [`${SIGN}/VerifiedTransactions`],
  ])('%s: the operator reads everyone\'s rows, bob and a grant only their own', async path => {
    const everyone = new Set(callers().map(caller => caller.owner))
    expect(ownersIn((await get(alice, path)).data.value)).toEqual(everyone)
    for (const caller of [bob, grant]) {
      const response = await get(caller, path)
      expect([caller.name, ownersIn(response.data.value)]).toEqual([caller.name, new Set([caller.owner])])
    }
  })

  test('another owner\'s key answers 404 to bob, and the row to the operator', async () => {
    const ofGrant = records[grant.owner]
    const [verified] = (await get(alice, `${SIGN}/VerifiedTransactions?$filter=txHash eq '${ofGrant.submittedBuild.txHash}'`)).data.value
    for (const path of [`${TX}/TransactionBuilds(${ofGrant.pending.ID})`, `${TX}/TransactionSubmissions(${ofGrant.submission.ID})`, `${SIGN}/SigningRequests(${ofGrant.request.ID})`,
      `${SIGN}/VerifiedTransactions(${verified.ID})`]) {
      expect([path, (await get(bob, path)).status, (await get(alice, path)).status]).toEqual([path, 404, 200])
    }
  })

  test('writes to the owned entity sets still answer 405, whoever asks', async () => {
    for (const caller of [alice, bob]) {
      const response = await POST(`${SIGN}/SigningRequests`, { signerType: 'hsm' }, caller.config())
      expect([caller.name, response.status, response.data.error.code]).toEqual([caller.name, 405, 'ENTITY_IS_READ_ONLY'])
    }
  })
})

describe('actions', () => {
  // [action, service, data with the id of a record of the grant's]
  const lookups: [string, string, () => object][] = [
    ['GetBuildStatus', TX, () => ({ buildId: records[grant.owner].pending.ID })],
    ['GetTransactionStatus', TX, () => ({ txHash: records[grant.owner].submittedBuild.txHash })],
    ['GetSigningRequest', SIGN, () => ({ signingRequestId: records[grant.owner].request.ID })],
  ]

  test.each(lookups)('%s: bob gets 404 for the grant\'s id, the operator its record', async (action, service, data) => {
    expect((await post(bob, `${service}/${action}`, data())).status).toBe(404)
    expect((await post(alice, `${service}/${action}`, data())).status).toBe(200)
  })

  test('ListPendingRequests and GetAuditLog: the operator gets everyone\'s, bob and a grant their own', async () => {
    const owners = async (caller: Caller) => {
      const pending = (await post(caller, `${SIGN}/ListPendingRequests`, {})).data.value
      const log = (await post(caller, `${SIGN}/GetAuditLog`, {})).data
      expect(log.valid).toBe(true)
      const requestOwners = new Map(callers().flatMap(c => [records[c.owner].request, records[c.owner].submitted]).map(request => [request.ID, request.owner]))
      return { pending: ownersIn(pending), audited: new Set(log.entries.map((entry: any) => requestOwners.get(entry.signingRequestId))) }
    }
    const everyone = new Set(callers().map(caller => caller.owner))
    expect(await owners(alice)).toEqual({ pending: everyone, audited: everyone })
    for (const caller of [bob, grant]) expect(await owners(caller)).toEqual({ pending: new Set([caller.owner]), audited: new Set([caller.owner]) })
  })

  test('what the operator does to bob\'s build stays bob\'s: the request, its audit entries, the build\'s state', async () => {
    const build = await transfer(bob, '3000000')
    const request = await ok(await post(alice, `${SIGN}/CreateSigningRequest`, { buildId: build.ID }))
    expect(request).toMatchObject({ owner: 'bob', requestedBy: 'alice' })
    const seenByBob = await ok(await post(bob, `${SIGN}/GetSigningRequest`, { signingRequestId: request.ID }))
    expect(seenByBob.ID).toBe(request.ID)
    const log = (await post(bob, `${SIGN}/GetAuditLog`, { signingRequestId: request.ID })).data
    expect(log.entries.map((entry: any) => [entry.kind, entry.actor])).toEqual([['created', 'alice']])
    expect((await post(grant, `${SIGN}/GetAuditLog`, { signingRequestId: request.ID })).data.entries).toEqual([])
    expect((await ok(await post(alice, `${TX}/CancelBuild`, { buildId: build.ID }))).status).toBe('cancelled')
    expect((await ok(await post(bob, `${TX}/GetBuildStatus`, { buildId: build.ID }))).status).toBe('cancelled')
  })
})

describe('framework behaviour the tenancy relies on', () => {
  test('an INSERT that leaves the owner out gets the user of its transaction (@cds.on.insert: $user)', async () => {
    const { TransactionSubmissions } = cds.entities('chainatx')
    const ID = cds.utils.uuid()
    await cds.tx({ user: new cds.User('carol') }, () => INSERT.into(TransactionSubmissions).entries({ ID, txHash: 'ef'.repeat(32) }))
    expect(await cds.tx(() => SELECT.one.from(TransactionSubmissions).columns('owner').where({ ID }))).toEqual({ owner: 'carol' })
  })

  test('$expand answers only the caller\'s rows, even along a link to another owner\'s', async () => {
    // CAP applies @restrict to a read's target and its navigation path, not to what it expands:
    // a submission of the grant's that names bob's build must not show up in either direction.
    const { TransactionSubmissions } = cds.entities('chainatx')
    const ID = cds.utils.uuid()
    const bobsBuild = records[bob.owner].pending
    await cds.tx(() => INSERT.into(TransactionSubmissions).entries({ ID, owner: grant.owner, build_ID: bobsBuild.ID, txHash: 'fe'.repeat(32) }))
    try {
      const bobs = (await get(bob, `${TX}/TransactionBuilds(${bobsBuild.ID})?$expand=submissions`)).data
      expect(bobs.submissions).toEqual([])
      const grants = (await get(grant, `${TX}/TransactionSubmissions(${ID})?$expand=build`)).data
      expect(grants).toMatchObject({ ID, build_ID: bobsBuild.ID, build: null })
      const nested = (await get(grant, `${TX}/TransactionSubmissions?$filter=ID eq ${ID}&$expand=build($expand=inputs,submissions)`)).data.value
      expect(nested).toEqual([expect.objectContaining({ ID, build: null })])
      const operator = (await get(alice, `${TX}/TransactionBuilds(${bobsBuild.ID})?$expand=submissions`)).data
      expect(operator.submissions.map((submission: any) => submission.ID)).toEqual([ID])
    } finally {
      await cds.tx(() => DELETE.from(TransactionSubmissions).where({ ID }))
    }
  })
})
