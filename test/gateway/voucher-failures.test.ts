import { freshClientAddress, sendFrom } from '../support/gateway.ts'
import { startGateways, voucherCodes, type Gateways } from '../support/lane-gateways.ts'
import { startDevnet } from '../support/devnet.ts'
import type { ChainADevnet } from '../../devnet/chain-a/index.ts'
import { newVoucherCode } from '../../srv/key-lanes/voucher-codes.ts'

/**
 * Failed voucher attempts against a gateway process of its own (2 failures allowed per caller):
 * the code is tried first, so a valid code always redeems, whoever failed before from the same
 * address; only unknown, used-up, revoked and expired codes count, never a mistyped code or a
 * race lost for a code's last use; past the limit, the caller's failing attempts answer 429.
 */

let devnet: ChainADevnet
let gateway: Gateways
let codes: string[]

beforeAll(async () => {
  devnet = await startDevnet()
  gateway = await startGateways(1, devnet, { GATEWAY_VOUCHER_FAILURES: '2' })
  codes = await voucherCodes(gateway, 30, 8)
}, 240_000)

afterAll(async () => {
  await gateway?.stop()
  await devnet?.stop()
}, 120_000)

const redeem = (from: string, code: string, key?: string) => sendFrom(gateway.servers[0].url, 'POST', '/vouchers/redeem', { from, body: { code }, token: key })
const statuses = async (from: string, codesToTry: string[], key?: string) => {
  const answers = []
  for (const code of codesToTry) answers.push(await redeem(from, code, key))
  return answers.map(answer => [answer.status, answer.body.error?.code ?? 'OK'])
}
const unknownCodes = (count: number) => Array.from({ length: count }, newVoucherCode)

const NOT_REDEEMABLE = [404, 'VOUCHER_NOT_REDEEMABLE']
const LIMITED = [429, 'TOO_MANY_FAILED_ATTEMPTS']

test('a valid code redeems from an address where another client failed past the limit', async () => {
  const from = freshClientAddress()
  expect(await statuses(from, unknownCodes(3))).toEqual([NOT_REDEEMABLE, NOT_REDEEMABLE, LIMITED])
  const redeemed = await redeem(from, codes[0])
  expect(redeemed.body).toMatchObject({ key: expect.stringMatching(/^cag_/), unitsLeft: 30 })
  expect(redeemed.status).toBe(200)
  expect(await statuses(from, unknownCodes(1))).toEqual([LIMITED])
})

test('losing a race for a code\'s last use is no failed attempt', async () => {
  const from = freshClientAddress()
  const answers = await Promise.all(Array.from({ length: 4 }, () => redeem(from, codes[1])))
  expect(answers.map(answer => answer.status).sort()).toEqual([200, 404, 404, 404])
  expect(await statuses(from, unknownCodes(3))).toEqual([NOT_REDEEMABLE, NOT_REDEEMABLE, LIMITED])
})

test('a mistyped code is told at once and counts nothing', async () => {
  const from = freshClientAddress()
  const typo = (code: string) => (code[0] === '0' ? '1' : '0') + code.slice(1)
  const typos = await statuses(from, codes.slice(2, 5).map(typo))
  expect(typos).toEqual(Array(3).fill([400, 'VOUCHER_MALFORMED']))
  expect(await statuses(from, unknownCodes(3))).toEqual([NOT_REDEEMABLE, NOT_REDEEMABLE, LIMITED])
})

test('a key is limited by its own failures, from any address, and past its limit still redeems a valid code', async () => {
  const { key } = (await redeem(freshClientAddress(), codes[5])).body
  for (const expected of [NOT_REDEEMABLE, NOT_REDEEMABLE, LIMITED]) expect(await statuses(freshClientAddress(), unknownCodes(1), key)).toEqual([expected])
  const topUp = await redeem(freshClientAddress(), codes[6], key)
  expect(topUp.body).toMatchObject({ credited: 30, unitsLeft: 60 })
  expect(topUp.status).toBe(200)
})
