import cds from '@sap/cds'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { runningDevnet } from '../support/chain-a.ts'
import { signWith } from '../support/sign.ts'
import { startServer, stopAndWait, type RunningServer } from '../support/server.ts'
import { onPostgres } from '../setup/postgres.ts'
import { CardanoExactClient } from '../../srv/chains/chain-a/payments/exact-client.ts'

// Purchases across gateway processes on one database and one chain (the devnet of this test
// process, reached over its Blockfrost-compatible API): the same payment sent to two instances at
// once buys one key; a payment left at settlement_pending when its server stopped is resumed by
// the next server, and credited once.
cds.test(__dirname + '/../..')

const root = join(__dirname, '..', '..')
const servers: RunningServer[] = []
let folder: string | undefined
let env: NodeJS.ProcessEnv

beforeAll(() => {
  const devnet = runningDevnet()
  const shared: NodeJS.ProcessEnv = {}
  if (!onPostgres()) {
    folder = mkdtempSync(join(tmpdir(), 'cag-purchases-'))
    shared.CDS_REQUIRES_DB_CREDENTIALS_URL = join(folder, 'shared.sqlite')
  }
  env = {
    ...process.env, ...shared, PORT: '0', CDS_TYPESCRIPT: 'true', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON',
    GATEWAY_ENABLED: 'true', CHAIN_A_DEVNET: 'false', BLOCKFROST_URL: devnet.url, CHAIN_A_NETWORK: 'devnet', CHAIN_B_CRAWLER_ENABLED: 'false',
    GATEWAY_X402_PAY_TO: devnet.wallets().at(-1)!.address, GATEWAY_X402_SETTLE_WAIT_MS: '200', GATEWAY_X402_CONFIRMATIONS: '1',
  }
})

afterAll(async () => {
  for (const server of servers) if (server.running()) await stopAndWait(server)
  if (folder) rmSync(folder, { recursive: true, force: true })
})

const serve = async () => {
  const server = await startServer(join(root, 'node_modules', '.bin', 'cds-serve'), [], { cwd: root, env })
  servers.push(server)
  return server
}

interface Answer {
  status: number
  body: any
  headers: Headers
}

async function post(server: RunningServer, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(server.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) })
  return { status: response.status, body: await response.json(), headers: response.headers }
}

/** A quote from `server` for devnet wallet `wallet`, paid with the public x402 client: the PAYMENT-SIGNATURE header. */
async function paymentFor(server: RunningServer, wallet: string): Promise<Record<string, string>> {
  const keys = runningDevnet().walletKeys(wallet)
  const quote = await post(server, '/keys', { pack: 'starter', payer: keys.address })
  expect(quote.body.error?.code).toBe('PAYMENT_REQUIRED')
  const http = new x402HTTPClient(new x402Client().setSpendControls(false).register('cardano:*', new CardanoExactClient(async (hex: string) => signWith(hex, keys.payment))))
  const payload = await http.createPaymentPayload(http.getPaymentRequiredResponse(name => quote.headers.get(name)))
  return http.encodePaymentSignatureHeader(payload)
}

test('the same payment sent to two instances at once buys one key, credited once', async () => {
  const devnet = runningDevnet()
  const [first, second] = [await serve(), await serve()]
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
})

test('a payment pending when its server stops is resumed by the next server and credited once', async () => {
  const devnet = runningDevnet()
  const before = await serve()
  const signature = await paymentFor(before, 'wallet-2')
  const pending = await post(before, '/keys', undefined, signature)
  expect(pending.body.error.code).toBe('SETTLEMENT_PENDING')
  await stopAndWait(before)

  devnet.produceBlock()
  devnet.produceBlock()
  const after = await serve()
  const bought = await post(after, '/keys', undefined, signature)
  expect(bought.body).toMatchObject({ key: expect.stringMatching(/^cag_/), unitsLeft: 10000, purchase: { transaction: pending.body.transaction } })
  expect(bought.status).toBe(200)
  const again = await post(after, '/keys', undefined, signature)
  expect(again.body.error.code).toBe('PAYMENT_ALREADY_CREDITED')
  await stopAndWait(after)
})
