import { freshClientAddress, sendFrom, type Reply } from '../support/gateway.ts'
import { freshWallet, payTo, signedChallenge, signIn, startGateways, type Gateways, type Wallet } from '../support/lane-gateways.ts'
import { startDevnet } from '../support/devnet.ts'
import type { ChainADevnet } from '../../devnet/chain-a/index.ts'

/**
 * A wallet's free units, against gateway processes of their own (two instances on one database)
 * and a chain-A devnet this file runs: given once per payment key and once per stake key, only to
 * addresses the chain knows (or that hold the minimum balance), within a daily budget that holds
 * across instances. A sign-in without free units still signs in, and is told why and how to get units.
 */

let devnet: ChainADevnet
/** The default rules (history or 5 ADA), 100 units a wallet, a budget far away. */
let gateways: Gateways
/** Every address qualifies; 100 units a wallet, 250 a day: two wallets. */
let budgeted: Gateways

beforeAll(async () => {
  devnet = await startDevnet()
  gateways = await startGateways(2, devnet, { GATEWAY_WALLET_FREE_UNITS: '100' })
  budgeted = await startGateways(2, devnet, { GATEWAY_WALLET_FREE_UNITS: '100', GATEWAY_WALLET_FREE_MIN_LOVELACE: '0', GATEWAY_WALLET_FREE_DAILY_UNITS: '250' })
}, 360_000)

afterAll(async () => {
  await gateways?.stop()
  await budgeted?.stop()
  await devnet?.stop()
}, 120_000)

const url = (group: Gateways, i = 0) => group.servers[i % group.servers.length].url

/** Signs in (expecting 200) and answers the body. */
async function signedIn(reply: Promise<Reply>) {
  const answer = await reply
  expect(answer.body.error).toBeUndefined()
  expect(answer.status).toBe(200)
  return answer.body
}

const noFreeUnits = (code: string) => ({
  units: 0, code, reason: expect.any(String),
  getUnits: { voucher: expect.stringContaining('/vouchers/redeem'), purchase: expect.stringContaining('/keys') },
})

test('an address the chain does not know signs in without free units: told why and how to get units, and its session works', async () => {
  const wallet = freshWallet()
  const from = freshClientAddress()
  const body = await signedIn(signIn(url(gateways), from, wallet))
  expect(body.key).toBeUndefined()
  expect(body).toMatchObject({ address: wallet.address, keys: [], session: { token: expect.stringMatching(/^cgs_/) }, freeUnits: noFreeUnits('FREE_UNITS_NOT_ELIGIBLE') })
  expect(body.freeUnits.reason).toMatch(/5000000 lovelace/)
  expect(body.freeUnits.getUnits.purchase).toContain(wallet.address)

  const keys = await sendFrom(url(gateways, 1), 'GET', '/auth/keys', { from, token: body.session.token })
  expect(keys.body).toEqual({ address: wallet.address, keys: [] })
})

test('free units go once per payment key and once per stake key: other addresses of the same keys get none', async () => {
  const wallet = freshWallet()
  const otherStake = freshWallet(wallet.payment)
  const otherPayment = freshWallet(undefined, wallet.stake)
  payTo(devnet, [wallet.address, wallet.enterpriseAddress, otherStake.address, otherPayment.address])
  const from = freshClientAddress()

  const first = await signedIn(signIn(url(gateways), from, wallet))
  expect(first).toMatchObject({ key: expect.stringMatching(/^cag_/), plan: 'trial', unitsLeft: 100, boundAddress: wallet.address, freeUnits: { units: 100 } })

  const related: [string, typeof wallet][] = [
    [wallet.enterpriseAddress, wallet], [otherStake.address, otherStake], [wallet.stakeAddress, wallet], [otherPayment.address, otherPayment],
  ]
  for (const [i, [address, signer]] of related.entries()) {
    const answer = await signedIn(signIn(url(gateways, i + 1), from, signer, address))
    expect([address, answer.key]).toEqual([address, undefined])
    expect(answer).toMatchObject({ address, keys: [], freeUnits: noFreeUnits('FREE_UNITS_ALREADY_GIVEN') })
  }
  const again = await signedIn(signIn(url(gateways), from, wallet))
  expect(again).toMatchObject({ keys: [expect.objectContaining({ id: first.id, unitsLeft: 100 })], freeUnits: noFreeUnits('FREE_UNITS_ALREADY_GIVEN') })
})

/** Signs in as every address at once, spread over both instances (challenges first, then all verifies together). */
async function signInAtOnce(group: Gateways, signers: [Wallet, string][]) {
  const from = freshClientAddress()
  const bodies = await Promise.all(signers.map(([signer, address], i) => signedChallenge(url(group, i), from, signer, address)))
  const answers = await Promise.all(bodies.map((body, i) => sendFrom(url(group, i), 'POST', '/auth/verify', { from, body })))
  expect(answers.map(answer => answer.status)).toEqual(answers.map(() => 200))
  return answers.map(answer => answer.body)
}

test('addresses sharing a payment key, or a stake key, signing in at once at both instances: one of them gets the free units', async () => {
  const wallet = freshWallet()
  const samePayment: [Wallet, string][] = [
    [wallet, wallet.address], [wallet, wallet.enterpriseAddress],
    ...[freshWallet(wallet.payment), freshWallet(wallet.payment), freshWallet(wallet.payment)].map(other => [other, other.address] as [Wallet, string]),
  ]
  const staker = freshWallet()
  const sameStake: [Wallet, string][] = [
    [staker, staker.stakeAddress],
    ...[staker, freshWallet(undefined, staker.stake), freshWallet(undefined, staker.stake)].map(other => [other, other.address] as [Wallet, string]),
  ]
  payTo(devnet, [...samePayment, ...sameStake].map(([, address]) => address).filter(address => !address.startsWith('stake')))

  for (const group of [samePayment, sameStake]) {
    const answers = await signInAtOnce(gateways, group)
    const given = answers.filter(answer => answer.key)
    expect(given.map(answer => answer.freeUnits)).toEqual([{ units: 100 }])
    expect(answers.filter(answer => !answer.key).map(answer => answer.freeUnits.code)).toEqual(Array(group.length - 1).fill('FREE_UNITS_ALREADY_GIVEN'))
  }
})

test('the daily budget holds across instances: of five new wallets signing in at once at both, two get free units', async () => {
  const answers = await signInAtOnce(budgeted, Array.from({ length: 5 }, () => freshWallet()).map(wallet => [wallet, wallet.address]))
  expect(answers.filter(answer => answer.key).map(answer => answer.unitsLeft)).toEqual([100, 100])
  expect(answers.filter(answer => !answer.key).map(answer => answer.freeUnits.code)).toEqual(Array(3).fill('FREE_UNITS_BUDGET_SPENT'))

  const late = await signedIn(signIn(url(budgeted, 1), freshClientAddress(), freshWallet()))
  expect(late).toMatchObject({ keys: [], freeUnits: noFreeUnits('FREE_UNITS_BUDGET_SPENT') })
})
