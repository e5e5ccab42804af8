import cds from '@sap/cds'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { chainA } from '../../srv/chains/chain-a/index.ts'
import { runningDevnet } from '../support/chain-a.ts'
import { signWith } from '../support/sign.ts'
import { ADA, buildTx, largestUtxo } from '../support/devnet.ts'
import { issueGrant } from '../../srv/gateway/accounts.ts'
import { runExpiryJobs } from '../support/expiry.ts'

// Spend locks keep one owner's concurrent builds from selecting the same outputs, for as long as
// signing needs (CHAIN_A_SPEND_LOCK_S), and never keep another owner from building.
const { POST, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true

const TX = '/odata/v4/chaina-transaction'
const SIGN = '/odata/v4/chaina-sign'
const bob = { auth: { username: 'bob', password: '' } }
let grant: object
let devnet: ReturnType<typeof runningDevnet>
let recipient: string

beforeAll(async () => {
  devnet = runningDevnet()
  recipient = devnet.wallets()[0].address
  const issued = await issueGrant({ product: 'chain-a' })
  grant = { headers: { 'x-agent-token': issued.token } }
})
// The option CHAIN_A_SPEND_LOCK_S sets at start, changed on the running chain-a service.
afterEach(async () => {
  delete (await chainA()).options.spendLockSeconds
})

/** A new address holding a single output (and its key). */
function loneOutput() {
  const key = CSL.PrivateKey.generate_ed25519()
  const address = CSL.EnterpriseAddress.new(0, CSL.Credential.from_keyhash(key.to_public().hash())).to_address().to_bech32()
  const funder = devnet.walletKeys('wallet-3')
  devnet.submit(buildTx({ inputs: [largestUtxo(devnet, funder.address)], outputs: [{ address, coin: 30n * ADA }], signers: [funder.payment] }))
  devnet.produceBlock()
  return { key, address }
}

const build = (senderAddress: string, as: object = bob, lovelaceAmount = '2000000') =>
  POST(`${TX}/BuildSimpleAdaTransaction`, { senderAddress, recipientAddress: recipient, lovelaceAmount }, as)

async function built(senderAddress: string, as: object = bob, lovelaceAmount = '2000000') {
  const response = await build(senderAddress, as, lovelaceAmount)
  if (response.status !== 200) throw new Error(`build failed: ${JSON.stringify(response.data)}`)
  return response.data
}

const locksOf = (buildId: string) => cds.tx(() => SELECT.from(cds.entities('chainatx').SpendLocks).where({ build_ID: buildId }))
const pause = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))
const seconds = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 1000

async function expectNoFunds(senderAddress: string, as: object = bob) {
  const response = await build(senderAddress, as, '2100000')
  expect(response.data.error.code).toBe('INSUFFICIENT_FUNDS')
}

describe('how long a build locks what it spends', () => {
  test('900 seconds by default, for the build\'s owner', async () => {
    const lone = loneOutput()
    const first = await built(lone.address)
    const [lock] = await locksOf(first.ID)
    expect(lock).toMatchObject({ owner: 'bob', address: lone.address })
    expect(seconds(first.createdAt, lock.expiresAt)).toBeGreaterThanOrEqual(899)
    expect(seconds(first.createdAt, lock.expiresAt)).toBeLessThanOrEqual(901)
    expect(Date.parse(lock.expiresAt)).toBeLessThan(Date.parse(first.expiresAt))
    await expectNoFunds(lone.address)
  })

  test('CHAIN_A_SPEND_LOCK_S: the lock lapses after it, and the owner\'s next build may take the output', async () => {
    (await chainA()).options.spendLockSeconds = 1
    const lone = loneOutput()
    const first = await built(lone.address)
    await expectNoFunds(lone.address)
    await pause(1200)
    const next = await built(lone.address, bob, '2200000')
    const inputsOf = async (b: any) => (await cds.tx(() => SELECT.from(cds.entities('chainatx').BuildInputs).where({ build_ID: b.ID }))).map((i: any) => `${i.txHash}#${i.outputIndex}`)
    expect(await inputsOf(next)).toEqual(await inputsOf(first))
    expect((await POST(`${TX}/GetBuildStatus`, { buildId: first.ID }, bob)).data.status).toBe('built')
  })

  test('never beyond the build\'s validity', async () => {
    (await chainA()).options.spendLockSeconds = 30 * 86400
    const first = await built(loneOutput().address)
    expect((await locksOf(first.ID)).map((lock: any) => lock.expiresAt)).toEqual([first.expiresAt])
  })
})

describe('a signing request', () => {
  test('extends the build\'s locks to its own expiry', async () => {
    (await chainA()).options.spendLockSeconds = 1
    const lone = loneOutput()
    const first = await built(lone.address)
    const request = (await POST(`${SIGN}/CreateSigningRequest`, { buildId: first.ID, expiresInSeconds: 600 }, bob)).data
    expect((await locksOf(first.ID)).map((lock: any) => lock.expiresAt)).toEqual([request.expiresAt])
    await pause(1200)
    await expectNoFunds(lone.address)
  })

  test('takes a lapsed lock again, until it expires, never beyond the build\'s validity', async () => {
    (await chainA()).options.spendLockSeconds = 1
    const lone = loneOutput()
    const first = await built(lone.address)
    await pause(1200)
    const request = (await POST(`${SIGN}/CreateSigningRequest`, { buildId: first.ID, expiresInSeconds: 30 * 86400 }, bob)).data
    expect(request.expiresAt).toBe(first.expiresAt)
    expect(await locksOf(first.ID)).toEqual([expect.objectContaining({ owner: 'bob', expiresAt: first.expiresAt })])
    await expectNoFunds(lone.address)
  })
})

describe('locks are released', () => {
  test('when the build is cancelled', async () => {
    const lone = loneOutput()
    const first = await built(lone.address)
    expect((await POST(`${TX}/CancelBuild`, { buildId: first.ID }, bob)).data.status).toBe('cancelled')
    expect(await locksOf(first.ID)).toEqual([])
    await built(lone.address)
  })

  test('when the build expires: they hold no longer at once, and the expiry job removes them', async () => {
    const lone = loneOutput()
    const first = await built(lone.address)
    await cds.tx(() => UPDATE(cds.entities('chainatx').TransactionBuilds, first.ID).set({ expiresAt: new Date(Date.now() - 1000).toISOString() }))
    expect((await POST(`${TX}/GetBuildStatus`, { buildId: first.ID }, bob)).data.status).toBe('expired')
    const next = await built(lone.address)
    expect(await locksOf(first.ID)).toEqual([])
    expect(await locksOf(next.ID)).toEqual([expect.objectContaining({ owner: 'bob', address: lone.address })])
    await runExpiryJobs()
    expect((await cds.tx(() => SELECT.one.from(cds.entities('chainatx').TransactionBuilds, first.ID))).status).toBe('expired')
    expect(await locksOf(next.ID)).toHaveLength(1)
  })
})

describe('other owners', () => {
  test('build from the outputs the owner\'s pending builds hold', async () => {
    const lone = loneOutput()
    await built(lone.address)
    await expectNoFunds(lone.address)
    expect((await build(lone.address, grant)).data.status).toBe('built')
  })

  test('do not select what a submitted build spends: the ledger took it until it is confirmed, or the build\'s validity ends', async () => {
    const lone = loneOutput()
    const first = await built(lone.address)
    const submitted = await POST(`${TX}/SubmitSignedTransaction`, { signedTxCbor: signWith(first.unsignedTxCbor, lone.key), buildId: first.ID }, bob)
    expect(submitted.data.status).toBe('submitted')
    expect((await locksOf(first.ID)).map((lock: any) => lock.expiresAt)).toEqual([first.expiresAt])
    await expectNoFunds(lone.address, grant)
    devnet.produceBlock()
    expect((await POST(`${TX}/GetTransactionStatus`, { txHash: first.txHash }, bob)).data.status).toBe('confirmed')
    expect(await locksOf(first.ID)).toEqual([])
  })
})
