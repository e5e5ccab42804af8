import cds from '@sap/cds'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { runningDevnet } from '../support/chain-a.ts'
import { waitFor } from '../support/chain-b.ts'
import { sendFrom } from '../support/gateway.ts'
import { freshWallet, signIn } from '../support/lane-gateways.ts'
import { paymentFor, post, PurchaseServers } from '../support/purchases.ts'
import { stopAndWait, type RunningServer } from '../support/server.ts'

// Purchases whose buyers never came back (a tab reloaded, a client crashed: the header that makes
// the payment theirs is gone), settled by the gateway's sweeper, in gateway processes of their own
// on one database and on the devnet of this test process. The grace and the sweep interval are
// short here, so a sweep credits a payment about a second after it got deep enough.
process.env.DEVNET_WALLETS = '6'
cds.test(__dirname + '/../..')

const SETTINGS = { GATEWAY_LANE_SECRET: 'the quote secret these gateway instances share, long enough', GATEWAY_X402_SWEEP_INTERVAL_MS: '250', GATEWAY_X402_UNCOLLECTED_GRACE_MS: '1000' }
/** How long a sweep may take to settle on a busy machine: a limit, never a measure. */
const SETTLED_WITHIN_MS = 90_000
const BUYER = '127.0.0.1'
let servers: PurchaseServers
/** The instance the tests with the shared settings use (one more is started where two sweep at once). */
let shared: RunningServer

beforeAll(async () => {
  servers = new PurchaseServers(SETTINGS)
  shared = await servers.serve()
}, 120_000)

afterAll(async () => {
  await servers.stopAll()
  delete process.env.DEVNET_WALLETS
})

/** Presents the payment once and leaves: answers the payment's transaction hash. */
async function payAndLeave(server: RunningServer, path: '/keys' | '/topup', signature: Record<string, string>): Promise<string> {
  const pending = await post(server, path, undefined, signature)
  expect(pending.body.error.code).toBe('SETTLEMENT_PENDING')
  return pending.body.transaction
}

const purchaseStatus = async (txHash: string) => (await servers.query('SELECT status AS "status" FROM gateway_Purchases WHERE txHash = ?', txHash))[0]?.status

/** Waits until a sweep credited the payment. */
const credited = (txHash: string) =>
  waitFor(async () => (await purchaseStatus(txHash)) === 'credited', { timeoutMs: SETTLED_WITHIN_MS, intervalMs: 250, message: `payment ${txHash} was not credited` })

/** How often the servers logged `line`, once at least one has (a line is written a moment after the change it reports is committed). */
async function timesLogged(servers: RunningServer[], line: string): Promise<number> {
  const count = () => servers.reduce((sum, server) => sum + server.output().split(line).length - 1, 0)
  await waitFor(() => count() > 0, { timeoutMs: SETTLED_WITHIN_MS, intervalMs: 100, message: `no server logged '${line}'` })
  return count()
}

async function creditsFor(txHash: string) {
  const rows = await servers.query('SELECT apiKey_ID AS "keyId", units AS "units" FROM gateway_LedgerEntries WHERE kind = ? AND reference = ?', 'credit', `payment:${txHash}`)
  return rows.map(row => ({ keyId: row.keyId, units: Number(row.units) }))
}

const boughtKeysOf = (address: string) => servers.query('SELECT ID AS "id" FROM gateway_ApiKeys WHERE boundAddress = ? AND label = ?', address, 'bought: starter')

const get = (server: RunningServer, path: string, token: string) => sendFrom(server.url, 'GET', path, { from: BUYER, token })

test('a buyer who presents the payment once and never comes back: the key is credited bound to the payer, the paying wallet signs in and rotates it, and the header then answers 409', async () => {
  const devnet = runningDevnet()
  const server = shared
  const keys = devnet.walletKeys('wallet-1')
  const signature = await paymentFor(server, 'wallet-1')
  const txHash = await payAndLeave(server, '/keys', signature)
  devnet.produceBlock()
  devnet.produceBlock()
  await credited(txHash)

  const wallet = freshWallet(keys.payment, keys.stake)
  expect(wallet.address).toBe(keys.address)
  const signedIn = await signIn(server.url, BUYER, wallet)
  expect(signedIn.body.session.token).toMatch(/^cgs_/)
  const session = signedIn.body.session.token
  const listed = await get(server, '/auth/keys', session)
  const bought = listed.body.keys.filter((key: any) => key.label === 'bought: starter')
  expect(bought).toEqual([expect.objectContaining({ unitsLeft: 10000, status: 'active' })])

  const rotated = await sendFrom(server.url, 'POST', '/auth/keys/rotate', { from: BUYER, token: session, body: { id: bought[0].id } })
  expect(rotated.body).toMatchObject({ id: bought[0].id, key: expect.stringMatching(/^cag_/), unitsLeft: 10000, boundAddress: keys.address })
  const call = await get(server, '/odata/v4/chaina-odata/Blocks?$top=1', rotated.body.key)
  expect(call.body.value).toHaveLength(1)
  expect(call.status).toBe(200)

  const again = await post(server, '/keys', undefined, signature)
  expect(again.body.error).toMatchObject({ code: 'PAYMENT_ALREADY_CREDITED', keyId: bought[0].id, message: expect.stringContaining('sign in with the paying wallet') })
  expect(again.body.key).toBeUndefined()
  expect(again.status).toBe(409)
  expect(await timesLogged([server], `credited uncollected payment ${txHash}`)).toBe(1)
  expect(server.output()).not.toContain(rotated.body.key)
}, 180_000)

test('two instances sweeping at once credit each uncollected payment once', async () => {
  const devnet = runningDevnet()
  const [first, second] = [shared, await servers.serve()]
  const payers = ['wallet-2', 'wallet-4']
  const payments: string[] = []
  for (const [i, payer] of payers.entries()) {
    const server = [first, second][i]
    payments.push(await payAndLeave(server, '/keys', await paymentFor(server, payer)))
  }
  devnet.produceBlock()
  devnet.produceBlock()
  for (const txHash of payments) await credited(txHash)

  for (const [i, txHash] of payments.entries()) {
    const keys = await boughtKeysOf(devnet.walletKeys(payers[i]).address)
    expect(keys).toHaveLength(1)
    expect(await creditsFor(txHash)).toEqual([{ keyId: keys[0].id, units: 10000 }])
    expect(await timesLogged([first, second], `credited uncollected payment ${txHash}`)).toBe(1)
  }
  await stopAndWait(second)
}, 180_000)

test('a top-up whose buyer never came back is credited to its key', async () => {
  const devnet = runningDevnet()
  const server = shared
  const key = await servers.issueKey(50)
  const holder = { authorization: `Bearer ${key}` }
  const { body: me } = await get(server, '/me', key)
  expect(me.unitsLeft).toBe(50)
  const signature = { ...(await paymentFor(server, 'wallet-3', '/topup', holder)), ...holder }
  const txHash = await payAndLeave(server, '/topup', signature)
  devnet.produceBlock()
  devnet.produceBlock()
  await credited(txHash)

  const after = await get(server, '/me', key)
  expect(after.body).toMatchObject({ id: me.id, unitsLeft: 10050 })
  expect(await creditsFor(txHash)).toEqual([{ keyId: me.id, units: 10000 }])
  const again = await post(server, '/topup', undefined, signature)
  expect(again.body.error).toMatchObject({ code: 'PAYMENT_ALREADY_CREDITED', keyId: me.id })
  expect(again.status).toBe(409)
  expect(await timesLogged([server], `credited uncollected payment ${txHash}, 10000 units to key ${me.id}`)).toBe(1)
}, 180_000)

test('a claimant that died after submitting left its payment in the mempool: the sweeper takes the claim over, the chain refuses it again and it is released, and once it reaches the chain it is taken back and credited', async () => {
  const devnet = runningDevnet()
  const server = shared
  const payer = devnet.walletKeys('wallet-5').address
  const signature = await paymentFor(server, 'wallet-5')
  const { accepted: { extra: quote }, payload } = JSON.parse(Buffer.from(signature['PAYMENT-SIGNATURE'], 'base64').toString('utf8'))
  const cbor = Buffer.from(payload.transaction, 'base64')
  const txHash = devnet.submit(cbor)
  const lapsedAt = new Date(Date.now() - 60_000).toISOString()
  await servers.execute(
    'INSERT INTO gateway_Purchases (ID, lane, pack_name, units, lovelace, payTo, network, payer, status, txHash, txCbor, claimedAt, createdAt, expiresAt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    quote.quoteId, quote.lane, quote.pack, quote.units, quote.lovelace, quote.payTo, quote.network, payer, 'claimed', txHash, cbor.toString('hex'), lapsedAt, lapsedAt, quote.expiresAt,
  )
  await waitFor(async () => (await purchaseStatus(txHash)) === 'rejected', { timeoutMs: SETTLED_WITHIN_MS, intervalMs: 250, message: `the lapsed claim of payment ${txHash} was not taken over` })

  devnet.produceBlock()
  devnet.produceBlock()
  await credited(txHash)
  const keys = await boughtKeysOf(payer)
  expect(keys).toHaveLength(1)
  expect(await creditsFor(txHash)).toEqual([{ keyId: keys[0].id, units: 10000 }])
  const again = await post(server, '/keys', undefined, signature)
  expect(again.body.error).toMatchObject({ code: 'PAYMENT_ALREADY_CREDITED', keyId: keys[0].id })
  expect(again.status).toBe(409)
  expect(await timesLogged([server], `payment ${txHash} reached the chain after it was released`)).toBe(1)
}, 180_000)

test('a payment that never reaches the chain within its validity is released, and nothing is credited for it', async () => {
  const devnet = runningDevnet()
  // This instance sweeps alone, as every instance before it did.
  await stopAndWait(shared)
  // A quote of 40 s: the payment prepared for it is valid for about 10 s.
  const server = await servers.serve({ GATEWAY_X402_QUOTE_SECONDS: '40' })
  const signature = await paymentFor(server, 'wallet-1')
  const txHash = await payAndLeave(server, '/keys', signature)
  const { payload } = JSON.parse(Buffer.from(signature['PAYMENT-SIGNATURE'], 'base64').toString('utf8'))
  const validUntil = Number(CSL.FixedTransaction.from_bytes(Buffer.from(payload.transaction, 'base64')).body().ttl_bignum()!.to_str())
  await waitFor(() => devnet.ledger.nextSlot() >= validUntil, { timeoutMs: SETTLED_WITHIN_MS, intervalMs: 250, message: 'the payment stayed valid' })
  // The next block comes after the payment's validity: it leaves the mempool, in no block.
  devnet.produceBlock()
  await waitFor(async () => (await purchaseStatus(txHash)) === 'rejected', { timeoutMs: SETTLED_WITHIN_MS, intervalMs: 250, message: `payment ${txHash} was not released` })

  const [released] = await servers.query('SELECT reason AS "reason" FROM gateway_Purchases WHERE txHash = ?', txHash)
  expect(released.reason).toBe('the payment did not reach the chain within its validity')
  expect(await creditsFor(txHash)).toEqual([])
  const again = await post(server, '/keys', undefined, signature)
  expect(again.body.error).toMatchObject({ code: 'PAYMENT_INVALID', reason: 'ttl_expired' })
  expect(again.status).toBe(402)
  await stopAndWait(server)
}, 180_000)
