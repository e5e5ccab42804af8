import cds from '@sap/cds'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http'
import { runningDevnet } from '../support/chain-a.ts'
import { bearer, issueTestKey, ledgerOf } from '../support/gateway.ts'
import { signWith } from '../support/sign.ts'
import { CardanoExactClient } from '../../srv/chains/chain-a/payments/exact-client.ts'
import { forgetExpiredLaneRecords } from '../../srv/key-lanes/lane-records.ts'

process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_RATE_PER_SECOND = '100000'
process.env.GATEWAY_BURST = '100000'
process.env.GATEWAY_X402_SETTLE_WAIT_MS = '300'
process.env.GATEWAY_X402_CONFIRMATIONS = '1'
// This file's quotes all come from one address; the limits on quotes are tested in purchase-quotes.test.ts.
process.env.GATEWAY_X402_QUOTES_PER_MINUTE = '10000'
process.env.GATEWAY_X402_PAYER_QUOTES_PER_MINUTE = '10000'
const { POST, GET, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true

const ENV = ['GATEWAY_ENABLED', 'GATEWAY_RATE_PER_SECOND', 'GATEWAY_BURST', 'GATEWAY_X402_SETTLE_WAIT_MS', 'GATEWAY_X402_CONFIRMATIONS', 'GATEWAY_X402_QUOTES_PER_MINUTE', 'GATEWAY_X402_PAYER_QUOTES_PER_MINUTE']
afterAll(() => {
  for (const name of ENV) delete process.env[name]
})

type Response = { status: number; data: any; headers: Record<string, string> }
const header = (response: Response) => (name: string) => response.headers[name.toLowerCase()] ?? null

/** A client of the public x402 library, with our Cardano exact scheme registered and a devnet wallet's keys as its signer. */
function payingClient(wallet: string) {
  const keys = runningDevnet().walletKeys(wallet)
  const client = new x402Client().setSpendControls(false).register('cardano:*', new CardanoExactClient(async (unsignedTxHex: string) => signWith(unsignedTxHex, keys.payment)))
  return new x402HTTPClient(client)
}

/** Asks for a quote and answers the PAYMENT-SIGNATURE header the x402 client makes for it. */
async function quoteAndPay(path: '/keys' | '/topup', wallet: string, extraHeaders: object = {}, pack = 'starter') {
  const payer = runningDevnet().walletKeys(wallet).address
  const quote: Response = await POST(path, { pack, payer }, { headers: { ...extraHeaders } })
  expect(quote.data.error?.code).toBe('PAYMENT_REQUIRED')
  expect(quote.status).toBe(402)
  const http = payingClient(wallet)
  const required = http.getPaymentRequiredResponse(header(quote))
  const payload = await http.createPaymentPayload(required)
  return { quote, required, payload, signature: http.encodePaymentSignatureHeader(payload) }
}

test('POST /keys without payment answers 402 with x402 version 2 requirements in PAYMENT-REQUIRED, mirrored in the body, charging nothing', async () => {
  const answer: Response = await POST('/keys', { pack: 'starter' })
  expect(answer.data.error).toMatchObject({ code: 'PAYMENT_REQUIRED', reason: 'payment_required' })
  expect(answer.status).toBe(402)
  expect(answer.headers['x-access-units-charged']).toBe('0')
  const required = decodePaymentRequiredHeader(answer.headers['payment-required'])
  expect(required).toMatchObject({ x402Version: 2, error: 'payment_required', resource: { url: expect.stringMatching(/\/keys$/), mimeType: 'application/json' } })
  expect(required.accepts).toHaveLength(1)
  const [accepts] = required.accepts
  expect(accepts).toMatchObject({ scheme: 'exact', network: 'cardano:devnet', asset: 'lovelace', amount: '5000000', payTo: runningDevnet().wallets().at(-1)!.address, maxTimeoutSeconds: 600 })
  expect(accepts.extra).toMatchObject({
    quoteId: expect.any(String), lane: 'keys', pack: 'starter', units: 10000, lovelace: '5000000', payTo: accepts.payTo, network: 'cardano:devnet', expiresAt: expect.any(String),
    mac: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), confirmationPolicy: { l1Confirmations: 1 },
  })
  expect(answer.data.accepts).toEqual(required.accepts)
})

test('an unknown pack, a payer on another network and a body that is not an object answer 400 with their codes', async () => {
  const unknown: Response = await POST('/keys', { pack: 'gold' })
  expect(unknown.data.error.code).toBe('UNKNOWN_PACK')
  expect(unknown.status).toBe(400)
  // Refused before the database sees them (PostgreSQL takes no NUL in text).
  for (const pack of ['\u0000', 'x'.repeat(200), 'a b', 7, null]) {
    const refused: Response = await POST('/keys', { pack })
    expect(refused.data.error).toMatchObject({ code: 'INVALID_PACK', target: 'pack' })
    expect(refused.status).toBe(400)
  }
  const mainnet = 'addr1q9d34spgg2kdy47n82e7x9pdd6vql6d2engxmpj20jmhuc2047yqd4xnh7u6u5jp4t0q3fkxzckph4tgnzvamlu7k5psuahzcp'
  const wrongNetwork: Response = await POST('/keys', { pack: 'starter', payer: mainnet })
  expect(wrongNetwork.data.error.target).toBe('payer')
  expect(wrongNetwork.status).toBe(400)
  for (const body of [[], 'starter', 42, null]) {
    const answer: Response = await POST('/keys', JSON.stringify(body), { headers: { 'content-type': 'application/json' } })
    expect(answer.status === 400 || answer.status === 402).toBe(true)
  }
})

test('a purchase with the public x402 client: settlement_pending until the payment is a block deep, then the key once, bound to the payer, credited once', async () => {
  const devnet = runningDevnet()
  const { signature, required } = await quoteAndPay('/keys', 'wallet-1')
  const quoteId = required.accepts[0].extra.quoteId as string

  const pending: Response = await POST('/keys', undefined, { headers: signature })
  expect(pending.data).toMatchObject({ error: { code: 'SETTLEMENT_PENDING', reason: 'settlement_pending' }, pending: true, transaction: expect.stringMatching(/^[0-9a-f]{64}$/) })
  expect(pending.status).toBe(402)
  expect(decodePaymentRequiredHeader(pending.headers['payment-required']).error).toBe('settlement_pending')
  const txHash = pending.data.transaction

  devnet.produceBlock()
  devnet.produceBlock()
  const bought: Response = await POST('/keys', undefined, { headers: signature })
  expect(bought.data).toMatchObject({
    key: expect.stringMatching(/^cag_/), unitsLeft: 10000, boundAddress: devnet.walletKeys('wallet-1').address,
    purchase: { quoteId, pack: 'starter', units: 10000, lovelace: '5000000', transaction: txHash },
    configuration: { mcpServers: { 'chain-a': { command: 'npx', env: { CHAIN_ACCESS_API_KEY: expect.stringMatching(/^cag_/) } }, 'chain-b': expect.any(Object) } },
    curl: expect.stringContaining('Authorization: Bearer cag_'),
  })
  expect(bought.status).toBe(200)
  const settled = decodePaymentResponseHeader(bought.headers['payment-response'])
  expect(settled).toMatchObject({ success: true, network: 'cardano:devnet', transaction: txHash, payer: devnet.walletKeys('wallet-1').address, extra: { status: 'confirmed' } })

  const me: Response = await GET('/me', bearer(bought.data.key))
  expect(me.data).toMatchObject({ unitsLeft: 10000, boundAddress: devnet.walletKeys('wallet-1').address })
  const credits = (await ledgerOf(bought.data.id)).filter(entry => entry.kind === 'credit')
  expect(credits).toEqual([expect.objectContaining({ units: 10000, reference: `payment:${txHash}` })])

  const again: Response = await POST('/keys', undefined, { headers: signature })
  expect(again.data.error).toMatchObject({ code: 'PAYMENT_ALREADY_CREDITED', keyId: bought.data.id })
  expect(again.data.key).toBeUndefined()
  expect(again.status).toBe(409)
})

test('POST /topup buys a pack for the calling key: the ledger shows the credit with its transaction hash', async () => {
  const devnet = runningDevnet()
  const { id, key } = await issueTestKey({ units: 50 })
  const unpaid: Response = await POST('/topup', { pack: 'starter' })
  expect(unpaid.data.error.code).toBe('KEY_MISSING')
  const { signature } = await quoteAndPay('/topup', 'wallet-2', { authorization: `Bearer ${key}` })
  const pending: Response = await POST('/topup', undefined, { headers: { ...signature, authorization: `Bearer ${key}` } })
  expect(pending.data.error.code).toBe('SETTLEMENT_PENDING')
  devnet.produceBlock()
  devnet.produceBlock()
  const topped: Response = await POST('/topup', undefined, { headers: { ...signature, authorization: `Bearer ${key}` } })
  expect(topped.data).toMatchObject({ id, credited: 10000, unitsLeft: 10050, purchase: { transaction: pending.data.transaction } })
  expect(topped.headers['x-access-units-left']).toBe('10050')
  expect((await ledgerOf(id)).filter(entry => entry.kind === 'credit').map(entry => entry.reference)).toContain(`payment:${pending.data.transaction}`)

  const { key: otherKey } = await issueTestKey({ units: 50 })
  const stolen: Response = await POST('/topup', undefined, { headers: { ...signature, authorization: `Bearer ${otherKey}` } })
  expect(stolen.data.error.code).toBe('QUOTE_UNKNOWN')
  expect(stolen.status).toBe(402)
})

/** The payload with its transaction replaced by `signedTxHex`. */
function withTransaction(payload: any, signedTxHex: string) {
  return { ...payload, payload: { ...payload.payload, transaction: Buffer.from(signedTxHex, 'hex').toString('base64') } }
}

const encoded = (payload: unknown) => ({ 'PAYMENT-SIGNATURE': Buffer.from(JSON.stringify(payload)).toString('base64') })

test('a payment for another quote, a replayed payment, a wrong network and a malformed header are refused, and nothing is credited', async () => {
  const devnet = runningDevnet()
  const first = await quoteAndPay('/keys', 'wallet-3')
  const second = await quoteAndPay('/keys', 'wallet-3')

  // The first quote's payment presented for the second quote: its memo names the first.
  const crossed = { ...second.payload, payload: first.payload.payload }
  const forOther: Response = await POST('/keys', undefined, { headers: encoded(crossed) })
  expect(forOther.data.error).toMatchObject({ code: 'PAYMENT_INVALID', reason: 'quote_mismatch' })
  expect(forOther.status).toBe(402)

  const wrongNetwork: Response = await POST('/keys', undefined, { headers: encoded({ ...first.payload, accepted: { ...first.payload.accepted, network: 'cardano:mainnet' } }) })
  expect(wrongNetwork.data.error).toMatchObject({ code: 'PAYMENT_NETWORK_MISMATCH', reason: 'network_mismatch' })

  for (const garbage of ['%%%', Buffer.from('[1,2]').toString('base64'), Buffer.from('{"x402Version":1}').toString('base64'), Buffer.from('null').toString('base64')]) {
    const malformed: Response = await POST('/keys', undefined, { headers: { 'PAYMENT-SIGNATURE': garbage } })
    expect(malformed.data.error.code).toBe('PAYMENT_SIGNATURE_MALFORMED')
    expect(malformed.status).toBe(400)
  }

  // The first payment settles the first quote; replayed for the second, it is refused.
  await POST('/keys', undefined, { headers: first.signature })
  devnet.produceBlock()
  devnet.produceBlock()
  const bought: Response = await POST('/keys', undefined, { headers: first.signature })
  expect(bought.status).toBe(200)
  const replay: Response = await POST('/keys', undefined, { headers: encoded({ ...second.payload, payload: first.payload.payload }) })
  expect(replay.data.error.reason).toMatch(/quote_mismatch|input_spent|payment_already_used/)
  expect(replay.status).toBe(402)
})

test('a payment of less than the amount, or to another address, is refused with its reason', async () => {
  const devnet = runningDevnet()
  const { payload } = await quoteAndPay('/keys', 'wallet-2')
  const prepared = CSL.FixedTransaction.from_hex(payload.accepted.extra.transaction as string)
  const body = prepared.body()
  const outputs = body.outputs()
  const payTo = payload.accepted.payTo
  for (const [reason, change] of [['insufficient_amount', (output: CSL.TransactionOutput) => CSL.TransactionOutput.new(output.address(), CSL.Value.new(CSL.BigNum.from_str('4000000')))],
    ['wrong_recipient', (output: CSL.TransactionOutput) => CSL.TransactionOutput.new(CSL.Address.from_bech32(devnet.wallets()[0].address), output.amount())]] as const) {
    const changed = CSL.TransactionOutputs.new()
    for (let i = 0; i < outputs.len(); i++) {
      const output = outputs.get(i)
      changed.add(output.address().to_bech32() === payTo ? change(output) : output)
    }
    const tampered = CSL.TransactionBody.new_tx_body(body.inputs(), changed, body.fee())
    tampered.set_ttl(body.ttl_bignum()!)
    tampered.set_auxiliary_data_hash(body.auxiliary_data_hash()!)
    const tx = CSL.Transaction.new(tampered, CSL.TransactionWitnessSet.new(), prepared.auxiliary_data())
    const signed = signWith(CSL.FixedTransaction.from_bytes(tx.to_bytes()).to_hex(), devnet.walletKeys('wallet-2').payment)
    const answer: Response = await POST('/keys', undefined, { headers: encoded(withTransaction(payload, signed)) })
    expect(answer.data.error).toMatchObject({ code: 'PAYMENT_INVALID', reason })
    expect(answer.status).toBe(402)
  }
})

test('the same payment sent five times at once buys one key', async () => {
  const devnet = runningDevnet()
  const { signature } = await quoteAndPay('/keys', 'wallet-1')
  const first: Response[] = await Promise.all(Array.from({ length: 5 }, () => POST('/keys', undefined, { headers: signature })))
  for (const answer of first) expect([402, 200, 409]).toContain(answer.status)
  devnet.produceBlock()
  devnet.produceBlock()
  const answers: Response[] = await Promise.all(Array.from({ length: 5 }, () => POST('/keys', undefined, { headers: signature })))
  const keys = [...first, ...answers].filter(answer => answer.status === 200)
  expect(keys).toHaveLength(1)
  expect(answers.filter(answer => answer.status === 409)).toHaveLength(answers.length - (answers.includes(keys[0]) ? 1 : 0))
  const credits = (await ledgerOf(keys[0].data.id)).filter(entry => entry.kind === 'credit')
  expect(credits).toHaveLength(1)
})

test('a payment presented with a changed term of its quote (cheaper, more units, another lane) is refused before anything is verified or stored', async () => {
  const { Purchases } = cds.entities('gateway')
  const rows = async () => (await cds.tx(() => SELECT.from(Purchases).columns('ID'))).length
  const before = await rows()
  const { payload } = await quoteAndPay('/keys', 'wallet-3')
  const changed = (extra: object) => ({ ...payload, accepted: { ...payload.accepted, extra: { ...payload.accepted.extra, ...extra } } })
  for (const extra of [{ lovelace: '1000000' }, { units: 10_000_000 }, { lane: 'topup' }, { expiresAt: new Date(Date.now() + 86_400_000).toISOString() }, { mac: 'A'.repeat(43) }, { mac: undefined }, { quoteId: cds.utils.uuid() }]) {
    const answer: Response = await POST('/keys', undefined, { headers: encoded(changed(extra)) })
    expect(answer.data.error).toMatchObject({ code: 'QUOTE_TAMPERED', reason: 'quote_tampered' })
    expect(answer.data.accepts).toBeUndefined()
    expect(answer.status).toBe(402)
  }
  expect(await rows()).toBe(before)
})

test('a top-up quote presented to POST /keys is not for that lane', async () => {
  const { key } = await issueTestKey({ units: 50 })
  const { signature } = await quoteAndPay('/topup', 'wallet-3', { authorization: `Bearer ${key}` })
  const answer: Response = await POST('/keys', undefined, { headers: signature })
  expect(answer.data.error).toMatchObject({ code: 'QUOTE_UNKNOWN', reason: 'quote_unknown' })
  expect(answer.status).toBe(402)
})

test('purchases the chain refused and ended sessions are forgotten a day after they expired; payments in flight and paid purchases stay', async () => {
  const { Purchases, WalletSessions } = cds.entities('gateway')
  const old = new Date(Date.now() - 2 * 86_400_000).toISOString()
  const purchase = (status: string) => ({
    ID: cds.utils.uuid(), lane: 'keys', pack_name: 'starter', units: 10000, lovelace: 5000000, payTo: 'addr_test1', network: 'cardano:devnet',
    status, txHash: cds.utils.uuid().replace(/-/g, '').repeat(2), createdAt: old, expiresAt: old,
  })
  const refused = purchase('rejected')
  const inFlight = purchase('submitted')
  await cds.tx(() => INSERT.into(Purchases).entries([refused, inFlight]))
  const paidBefore = await cds.tx(() => SELECT.from(Purchases).columns('ID').where({ status: 'credited' }))
  await cds.tx(() => UPDATE(Purchases).set({ expiresAt: old }).where({ status: 'credited' }))
  const session = { ID: cds.utils.uuid(), tokenHash: 'f'.repeat(64), address: 'addr_test1', createdAt: old, expiresAt: old }
  await cds.tx(() => INSERT.into(WalletSessions).entries(session))
  await cds.tx(() => forgetExpiredLaneRecords())
  expect(await cds.tx(() => SELECT.one.from(Purchases).where({ ID: refused.ID }))).toBeFalsy()
  expect(await cds.tx(() => SELECT.one.from(WalletSessions).where({ ID: session.ID }))).toBeFalsy()
  expect(await cds.tx(() => SELECT.one.from(Purchases).columns('status').where({ ID: inFlight.ID }))).toEqual({ status: 'submitted' })
  expect(await cds.tx(() => SELECT.from(Purchases).columns('ID').where({ status: 'credited' }))).toEqual(paidBefore)
  expect(paidBefore.length).toBeGreaterThan(0)
})
