import cds from '@sap/cds'
import { runningDevnet } from '../support/chain-a.ts'
import { witnessSetOf } from '../support/sign.ts'
import { SIGN, TX, buildTransfer } from './support.ts'

const { POST, GET, PATCH, DELETE: DEL, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }
defaults.validateStatus = () => true

const bob = { auth: { username: 'bob', password: '' } }
let devnet: ReturnType<typeof runningDevnet>
let wallet: ReturnType<ReturnType<typeof runningDevnet>['walletKeys']>
let other: string
const policies: string[] = []
const builds: string[] = []

beforeAll(() => {
  devnet = runningDevnet()
  wallet = devnet.walletKeys('wallet-3')
  other = devnet.wallets()[0].address
})

afterEach(async () => {
  for (const name of policies.splice(0)) await DEL(`${SIGN}/SigningPolicies('${name}')`)
  for (const buildId of builds.splice(0)) await POST(`${TX}/CancelBuild`, { buildId })
})

async function addPolicy(name: string, rules: object, active = true) {
  const response = await POST(`${SIGN}/SigningPolicies`, { name, rules: JSON.stringify(rules), active })
  expect(response.status).toBe(201)
  policies.push(name)
}

async function transfer(lovelace = '2000000') {
  const build = await buildTransfer(POST, wallet.address, other, lovelace)
  builds.push(build.ID)
  return build
}

const refusals = async () => (await POST(`${SIGN}/GetAuditLog`, {})).data.entries.filter((entry: any) => entry.kind === 'policy-refused')

function expectRefusal(response: { status: number; data: any }, policy: string, rule: string) {
  expect(response.data.error).toMatchObject({ code: 'POLICY_REFUSED', target: policy, message: expect.stringContaining(`signing policy '${policy}'`) })
  expect(response.data.error.message).toContain(rule === 'maxLovelacePerTx' ? 'more than the limit' : 'is not allowed')
  expect(response.status).toBe(403)
}

describe('managing policies', () => {
  test('the seeded default policy allows everything', async () => {
    const seeded = (await GET(`${SIGN}/SigningPolicies('permissive')`)).data
    expect(seeded).toMatchObject({ name: 'permissive', rules: '{}', active: true })
  })

  test('only admins write policies; rules must be a valid rule set', async () => {
    const byBob = await POST(`${SIGN}/SigningPolicies`, { name: 'bobs', rules: '{}' }, bob)
    expect(byBob.status).toBe(403)
    expect((await GET(`${SIGN}/SigningPolicies`, bob)).status).toBe(200)
    expect((await PATCH(`${SIGN}/SigningPolicies('permissive')`, { active: false }, bob)).status).toBe(403)
    for (const rules of ['not json', '[]', JSON.stringify({ maxLovelace: 5 }), JSON.stringify({ maxLovelacePerTx: '-1' }), JSON.stringify({ allowedSignerTypes: 'hsm' })]) {
      const response = await POST(`${SIGN}/SigningPolicies`, { name: 'broken', rules })
      expect([rules, response.status, response.data.error?.code]).toEqual([rules, 400, 'INVALID_POLICY'])
    }
    await addPolicy('audited', { maxLovelacePerTx: '5000000' })
    const written = (await GET(`${SIGN}/SigningPolicies('audited')`)).data
    expect(written).toMatchObject({ active: true, modifiedBy: 'alice', modifiedAt: expect.any(String) })
    expect((await PATCH(`${SIGN}/SigningPolicies('audited')`, { rules: '{"maxExpirySeconds": 0}' })).data.error.code).toBe('INVALID_POLICY')
  })
})

describe('at CreateSigningRequest', () => {
  test('a low maxLovelacePerTx refuses with 403 POLICY_REFUSED naming the policy; the build stays built; the refusal is audited', async () => {
    await addPolicy('small-payments', { maxLovelacePerTx: '1000000' })
    const build = await transfer('2000000')
    const before = (await refusals()).length
    const response = await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID })
    expectRefusal(response, 'small-payments', 'maxLovelacePerTx')
    expect((await POST(`${TX}/GetBuildStatus`, { buildId: build.ID })).data.status).toBe('built')
    expect((await POST(`${SIGN}/ListPendingRequests`, { address: wallet.address })).data.value.filter((r: any) => r.build_ID === build.ID)).toEqual([])
    const audited = await refusals()
    expect(audited).toHaveLength(before + 1)
    expect(JSON.parse(audited.at(-1).details)).toEqual({
      stage: 'create', buildId: build.ID, signerType: 'browser-wallet', policy: 'small-payments', rule: 'maxLovelacePerTx', message: expect.stringContaining('2000000'),
    })
    expect(audited.at(-1).actor).toBe('alice')
    expect((await POST(`${SIGN}/GetAuditLog`, {})).data.valid).toBe(true)
  })

  test('a disallowed signer type is refused; an allowed one is not; an inactive policy does not apply', async () => {
    await addPolicy('wallets-only', { allowedSignerTypes: ['browser-wallet'] })
    const build = await transfer()
    expectRefusal(await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID, signerType: 'cardano-cli' }), 'wallets-only', 'allowedSignerTypes')
    expect((await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID, signerType: 'browser-wallet' })).data.status).toBe('pending')

    const second = await transfer('2100000')
    await PATCH(`${SIGN}/SigningPolicies('wallets-only')`, { active: false })
    expect((await POST(`${SIGN}/CreateSigningRequest`, { buildId: second.ID, signerType: 'cardano-cli' })).data.status).toBe('pending')
  })

  test('a request open longer than maxExpirySeconds is refused', async () => {
    await addPolicy('short-lived', { maxExpirySeconds: 600 })
    const build = await transfer()
    const response = await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID })
    expect(response.data.error).toMatchObject({ code: 'POLICY_REFUSED', target: 'short-lived', message: expect.stringContaining('1800 s') })
    expect((await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID, expiresInSeconds: 600 })).data.status).toBe('pending')
  })
})

describe('at SubmitVerifiedTransaction', () => {
  test('a policy changed after the request was created refuses the submission; the request stays verified; the refusal is audited', async () => {
    await addPolicy('limit', { maxLovelacePerTx: '10000000' })
    const build = await transfer('3000000')
    const request = (await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID })).data
    await POST(`${SIGN}/VerifySignature`, { signingRequestId: request.ID, signedTxCbor: witnessSetOf(request.unsignedTxCbor, wallet.payment) })

    await PATCH(`${SIGN}/SigningPolicies('limit')`, { rules: JSON.stringify({ maxLovelacePerTx: '2500000' }) })
    const refused = await POST(`${SIGN}/SubmitVerifiedTransaction`, { signingRequestId: request.ID })
    expectRefusal(refused, 'limit', 'maxLovelacePerTx')
    expect((await POST(`${SIGN}/GetSigningRequest`, { signingRequestId: request.ID })).data.status).toBe('verified')
    expect((await GET(`${TX}/TransactionSubmissions?$filter=txHash eq '${build.txHash}'`)).data.value).toEqual([])
    const log = (await POST(`${SIGN}/GetAuditLog`, { signingRequestId: request.ID })).data
    expect(log.entries.map((entry: any) => entry.kind)).toEqual(['created', 'signed', 'verified', 'policy-refused'])
    expect(JSON.parse(log.entries[3].details)).toMatchObject({ stage: 'submit', policy: 'limit', rule: 'maxLovelacePerTx' })

    await PATCH(`${SIGN}/SigningPolicies('limit')`, { rules: JSON.stringify({ maxLovelacePerTx: '3000000' }) })
    expect((await POST(`${SIGN}/SubmitVerifiedTransaction`, { signingRequestId: request.ID })).data.status).toBe('submitted')
    devnet.produceBlock()
  })

  test('a signer type disallowed since creation is refused before anything is verified', async () => {
    const build = await transfer()
    const request = (await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID, signerType: 'cardano-cli' })).data
    await addPolicy('no-cli', { allowedSignerTypes: ['browser-wallet', 'hsm'] })
    const signed = witnessSetOf(request.unsignedTxCbor, wallet.payment)
    expectRefusal(await POST(`${SIGN}/SubmitVerifiedTransaction`, { signingRequestId: request.ID, signedTxCbor: signed }), 'no-cli', 'allowedSignerTypes')
    const row = (await POST(`${SIGN}/GetSigningRequest`, { signingRequestId: request.ID })).data
    expect(row).toMatchObject({ status: 'pending', signedTxCbor: null })
  })
})
