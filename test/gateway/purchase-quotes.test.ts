import cds from '@sap/cds'
import { runningDevnet } from '../support/chain-a.ts'
import { freshClientAddress } from '../support/gateway.ts'
import { post, PurchaseServers } from '../support/purchases.ts'
import type { RunningServer } from '../support/server.ts'

// Quotes of the purchase lane against a server process of its own: a quote is answered, not
// stored; each client address has a budget of quotes, smaller for quotes that name a payer (those
// read the chain and build a transaction); the payer's outputs are read once for quotes asked at once.
cds.test(__dirname + '/../..')

const QUOTES_PER_MINUTE = 4
const PAYER_QUOTES_PER_MINUTE = 2
let servers: PurchaseServers
let server: RunningServer

beforeAll(async () => {
  servers = new PurchaseServers({ GATEWAY_X402_QUOTES_PER_MINUTE: String(QUOTES_PER_MINUTE), GATEWAY_X402_PAYER_QUOTES_PER_MINUTE: String(PAYER_QUOTES_PER_MINUTE) })
  server = await servers.serve()
}, 120_000)

afterAll(() => servers.stopAll())

const payer = (wallet = 'wallet-2') => runningDevnet().walletKeys(wallet).address

/** Quotes from one client address until one is refused (at most `most`): the answers in order. */
async function quoteUntilRefused(from: string, body: object, most: number) {
  const answers = []
  for (let i = 0; i < most; i++) {
    const answer = await post(server, '/keys', body, {}, from)
    answers.push(answer)
    if (answer.status !== 402) break
  }
  return answers
}

test('a quote is answered, not stored: quotes from many clients, with and without a payer, leave no purchase row', async () => {
  const before = await servers.purchaseRows()
  const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => post(server, '/keys', i % 2 ? { pack: 'starter', payer: payer() } : { pack: 'starter' }, {}, freshClientAddress())))
  expect(await servers.purchaseRows()).toBe(before)
  for (const answer of answers) expect(answer.body.error.code).toBe('PAYMENT_REQUIRED')
})

test('quotes are limited per client address: past its budget 429 RATE_LIMITED with Retry-After, while another address is still quoted', async () => {
  const from = freshClientAddress()
  const answers = await quoteUntilRefused(from, { pack: 'starter' }, QUOTES_PER_MINUTE + 20)
  const refused = answers.at(-1)!
  expect(refused.body.error).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringContaining('quotes') })
  expect(refused.status).toBe(429)
  expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
  expect(answers.length).toBeGreaterThan(QUOTES_PER_MINUTE)

  const other = await post(server, '/keys', { pack: 'starter' }, {}, freshClientAddress())
  expect(other.body.error.code).toBe('PAYMENT_REQUIRED')
  expect(other.status).toBe(402)
})

test('quotes naming a payer have a smaller budget of their own: past it 429, while quotes without a payer from the same address are still answered', async () => {
  const from = freshClientAddress()
  const answers = await quoteUntilRefused(from, { pack: 'starter', payer: payer() }, PAYER_QUOTES_PER_MINUTE + 20)
  expect(answers.at(-1)!.body.error).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringContaining('payer') })
  expect(answers.at(-1)!.status).toBe(429)
  expect(answers.length).toBeGreaterThan(PAYER_QUOTES_PER_MINUTE)

  const plain = await post(server, '/keys', { pack: 'starter' }, {}, from)
  expect(plain.body.error.code).toBe('PAYMENT_REQUIRED')
})

test('quotes asked at once for one payer read its outputs from the chain fewer times than there are quotes', async () => {
  const devnet = runningDevnet()
  const address = payer('wallet-3')
  const reads = () => devnet.requestCount(`/addresses/${address}/utxos`)
  const before = reads()
  const quotes = 6
  const answers = await Promise.all(Array.from({ length: quotes }, () => post(server, '/keys', { pack: 'starter', payer: address }, {}, freshClientAddress())))
  for (const answer of answers) expect(answer.body.accepts[0].extra).toMatchObject({ transaction: expect.any(String), nonce: expect.any(String) })
  expect(reads() - before).toBeGreaterThan(0)
  expect(reads() - before).toBeLessThan(quotes)
})
