import cds from '@sap/cds'
import { runningDevnet } from '../support/chain-a.ts'
import { newestObservedPayment, paymentFor, paymentHeader, post, PurchaseServers, type ObservedPayment } from '../support/purchases.ts'
import { stopAndWait, type RunningServer } from '../support/server.ts'

// Purchases across gateway processes on one database and one chain (the devnet of this test
// process, reached over its Blockfrost-compatible API): the same payment sent to two instances at
// once buys one key; a payment left at settlement_pending when its server stopped is resumed by
// the next server, and credited once; whoever rebuilds the payment from the chain gets nothing.
process.env.DEVNET_WALLETS = '6'
cds.test(__dirname + '/../..')

const QUOTE_SECRET = 'the quote secret these gateway instances share, long enough'
/** The loopback address the observer sends from (its own quotes count there). */
const OBSERVER = '127.0.0.77'
let servers: PurchaseServers

beforeAll(() => {
  servers = new PurchaseServers({ GATEWAY_LANE_SECRET: QUOTE_SECRET })
})

afterAll(async () => {
  await servers.stopAll()
  delete process.env.DEVNET_WALLETS
})

test('the same payment sent to two instances at once buys one key, credited once', async () => {
  const devnet = runningDevnet()
  const [first, second] = [await servers.serve(), await servers.serve()]
  const signature = await paymentFor(first, 'wallet-1')
  const early = await Promise.all([first, second, first, second].map(server => post(server, '/keys', undefined, signature)))
  for (const answer of early) expect([200, 402, 409]).toContain(answer.status)
  devnet.produceBlock()
  devnet.produceBlock()
  const late = await Promise.all([first, second, first, second].map(server => post(server, '/keys', undefined, signature)))
  const bought = [...early, ...late].filter(answer => answer.status === 200)
  expect(bought).toHaveLength(1)
  for (const answer of late.filter(answer => answer.status !== 200)) expect(answer.body.error.code).toBe('PAYMENT_ALREADY_CREDITED')

  const ledger = await fetch(`${second.url}/me/ledger`, { headers: { authorization: `Bearer ${bought[0].body.key}` } }).then(response => response.json())
  expect(ledger.value.filter((entry: any) => entry.kind === 'credit')).toEqual([expect.objectContaining({ units: 10000, reference: `payment:${bought[0].body.purchase.transaction}` })])
  for (const server of [first, second]) await stopAndWait(server)
}, 120_000)

test('a payment pending when its server stops is resumed by the next server and credited once', async () => {
  const devnet = runningDevnet()
  const before = await servers.serve()
  const signature = await paymentFor(before, 'wallet-2')
  const pending = await post(before, '/keys', undefined, signature)
  expect(pending.body.error.code).toBe('SETTLEMENT_PENDING')
  await stopAndWait(before)

  devnet.produceBlock()
  devnet.produceBlock()
  const after = await servers.serve()
  const bought = await post(after, '/keys', undefined, signature)
  expect(bought.body).toMatchObject({ key: expect.stringMatching(/^cag_/), unitsLeft: 10000, purchase: { transaction: pending.body.transaction } })
  expect(bought.status).toBe(200)
  const again = await post(after, '/keys', undefined, signature)
  expect(again.body.error.code).toBe('PAYMENT_ALREADY_CREDITED')
  await stopAndWait(after)
}, 120_000)

/**
 * The PAYMENT-SIGNATURE headers an observer makes of a payment it read on chain: its own quote's
 * requirements naming the buyer's quote, and requirements made of what the chain shows alone.
 */
async function observerHeaders(server: RunningServer, seen: ObservedPayment): Promise<Record<string, string>[]> {
  const own = await post(server, '/keys', { pack: 'starter' }, {}, OBSERVER)
  expect(own.body.error.code).toBe('PAYMENT_REQUIRED')
  const accepted = own.body.accepts[0]
  const payload = { transaction: seen.transaction, nonce: seen.nonce }
  const buyersQuote = { quoteId: seen.quoteId, memo: `x402 quote ${seen.quoteId}`, nonce: seen.nonce }
  const fromChainAlone = { scheme: 'exact', network: accepted.network, asset: 'lovelace', amount: accepted.amount, payTo: accepted.payTo, maxTimeoutSeconds: accepted.maxTimeoutSeconds, extra: buyersQuote }
  return [
    paymentHeader({ x402Version: 2, resource: own.body.resource, accepted: { ...accepted, extra: { ...accepted.extra, ...buyersQuote } }, payload }),
    paymentHeader({ x402Version: 2, resource: own.body.resource, accepted: fromChainAlone, payload }),
  ]
}

const observe = (server: RunningServer, headers: Record<string, string>[]) =>
  Array.from({ length: 5 }, (_, i) => post(server, '/keys', undefined, headers[i % headers.length], OBSERVER))

function expectNothingFor(observers: { status: number; body: any }[]) {
  for (const answer of observers) {
    expect(answer.body.key).toBeUndefined()
    expect(answer.body.error).toMatchObject({ code: 'QUOTE_TAMPERED', reason: 'quote_tampered' })
    expect(answer.status).toBe(402)
  }
}

test('an observer who rebuilds the payment from the chain gets nothing, racing the buyer before and after a restart; the buyer resumes on the next server and gets the key', async () => {
  const devnet = runningDevnet()
  const before = await servers.serve()
  const signature = await paymentFor(before, 'wallet-3')
  const pending = await post(before, '/keys', undefined, signature)
  expect(pending.body.error.code).toBe('SETTLEMENT_PENDING')
  devnet.produceBlock()
  devnet.produceBlock()

  const seen = await newestObservedPayment()
  expect(seen.txHash).toBe(pending.body.transaction)
  const stolen = await observerHeaders(before, seen)
  expectNothingFor(await Promise.all(observe(before, stolen)))
  await stopAndWait(before)

  const after = await servers.serve()
  expectNothingFor(await Promise.all(observe(after, stolen)))
  const [bought, ...observers] = await Promise.all([post(after, '/keys', undefined, signature), ...observe(after, stolen)])
  expectNothingFor(observers)
  expect(bought.body).toMatchObject({ key: expect.stringMatching(/^cag_/), unitsLeft: 10000, purchase: { transaction: seen.txHash } })
  expect(bought.status).toBe(200)

  const again = await post(after, '/keys', undefined, signature)
  expect(again.body.error.code).toBe('PAYMENT_ALREADY_CREDITED')
  const ledger = await fetch(`${after.url}/me/ledger`, { headers: { authorization: `Bearer ${bought.body.key}` } }).then(response => response.json())
  expect(ledger.value.filter((entry: any) => entry.kind === 'credit')).toEqual([expect.objectContaining({ units: 10000, reference: `payment:${seen.txHash}` })])
  await stopAndWait(after)
}, 180_000)

test('a quote is paid only at a gateway holding the secret it was made under: another secret refuses it as tampered', async () => {
  const [home, foreign] = await Promise.all([servers.serve(), servers.serve({ GATEWAY_LANE_SECRET: 'the secret of another gateway, just as long as ours' })])
  const signature = await paymentFor(home, 'wallet-5')
  const refused = await post(foreign, '/keys', undefined, signature)
  expect(refused.body.error).toMatchObject({ code: 'QUOTE_TAMPERED', reason: 'quote_tampered' })
  expect(refused.status).toBe(402)
  const taken = await post(home, '/keys', undefined, signature)
  expect(taken.body.error.code).toBe('SETTLEMENT_PENDING')
  for (const server of [home, foreign]) await stopAndWait(server)
}, 120_000)
