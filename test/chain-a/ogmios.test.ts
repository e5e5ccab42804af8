import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { WebSocketServer } from 'ws'
import type { ChainADevnet } from '../../devnet/chain-a/index.ts'
import { BlockfrostAdapter } from '../../srv/chains/chain-a/blockfrost.ts'
import { OgmiosAdapter, type OgmiosConfig } from '../../srv/chains/chain-a/ogmios.ts'
import { ADA, buildTx, largestUtxo, startDevnet } from '../support/devnet.ts'

/**
 * The ogmios kind's adapter as the chain-a service builds it: Ogmios, Kupo and its chain index
 * wired together. Each part is compared with Blockfrost in its own test (ogmios-index, ogmios-ledger);
 * here the figures one part gives another (a pool's blocks, an account's withdrawals, the current
 * epoch) and a submission seen through the index.
 */

let devnet: ChainADevnet
let blockfrost: BlockfrostAdapter
let adapter: OgmiosAdapter
const config = (): OgmiosConfig => ({
  network: 'devnet', ogmiosUrl: `${devnet.url.replace(/^http/, 'ws')}/ogmios`, kupoUrl: `${devnet.url}/kupo`,
  ogmiosSyncFrom: 'origin', ogmiosIndexBlocks: 2160, timeoutMs: 20_000, retries: 0,
})

beforeAll(async () => {
  devnet = await startDevnet({ seed: 'ogmios-adapter', activity: true, epochLength: 30 })
  for (let i = 0; i < 45; i++) {
    devnet.activity.round()
    devnet.produceBlock()
  }
  blockfrost = new BlockfrostAdapter({ network: 'devnet', url: devnet.url, timeoutMs: 10_000, retries: 0, clientRateLimit: false })
  adapter = new OgmiosAdapter(config())
})
afterAll(async () => {
  await adapter?.close()
  await devnet?.stop()
})

test('the tip and the current epoch come from the index, the parameters of that epoch from Ogmios', async () => {
  const tip = await adapter.tip()
  expect(tip).toEqual(await blockfrost.tip())
  expect((await adapter.protocolParameters())!.epoch).toBe(tip.epoch)
  expect(await adapter.protocolParameters(tip.epoch)).toEqual(await blockfrost.protocolParameters(tip.epoch))
})

test("a pool's blocks and an account's withdrawals and first epoch are the index's figures", async () => {
  const wallet = devnet.ledger.genesis.activityWallets[0]
  const [account, expected] = await Promise.all([adapter.account(wallet.stakeAddress), blockfrost.account(wallet.stakeAddress)])
  expect(account).toEqual({ ...expected, reservesSum: null, treasurySum: null })
  const poolId = account!.poolId!
  const [pool, bfPool] = await Promise.all([adapter.pool(poolId), blockfrost.pool(poolId)])
  expect({ blocksMinted: pool!.blocksMinted, blocksEpoch: pool!.blocksEpoch }).toEqual({ blocksMinted: bfPool!.blocksMinted, blocksEpoch: bfPool!.blocksEpoch })
  expect(pool!.blocksMinted).toBeGreaterThan(0)
})

test('a submitted transaction is read back once its block is made; who spent its output too', async () => {
  const w1 = devnet.walletKeys('wallet-1')
  const w2 = devnet.walletKeys('wallet-2')
  const first = await adapter.submit(buildTx({ inputs: [largestUtxo(devnet, w1.address)], outputs: [{ address: w2.address, coin: 9n * ADA }], signers: [w1.payment] }))
  expect(await adapter.transaction(first)).toBeNull()
  devnet.produceBlock()
  expect(await adapter.transaction(first)).toEqual(await blockfrost.transaction(first))
  expect((await adapter.addressUtxos(w2.address)).some(utxo => utxo.txHash === first)).toBe(true)

  const received = devnet.ledger.outputs.get(`${first}#0`)!
  const second = await adapter.submit(buildTx({ inputs: [received], outputs: [{ address: w1.address, coin: 3n * ADA }], signers: [w2.payment] }))
  devnet.produceBlock()
  const spent = (await adapter.transaction(first))!.outputs.find(output => output.outputIndex === 0)!
  expect(spent.consumedBy).toBe(second)
  expect(await adapter.transaction(second)).toEqual(await blockfrost.transaction(second))
})

test('without OGMIOS_URL or KUPO_URL the adapter is not built: 503 UPSTREAM_NOT_CONFIGURED naming the setting', () => {
  expect(() => new OgmiosAdapter({ ...config(), ogmiosUrl: undefined })).toThrow(expect.objectContaining({ status: 503, code: 'UPSTREAM_NOT_CONFIGURED', message: expect.stringMatching(/OGMIOS_URL/) }))
  expect(() => new OgmiosAdapter({ ...config(), kupoUrl: '' })).toThrow(expect.objectContaining({ status: 503, code: 'UPSTREAM_NOT_CONFIGURED', message: expect.stringMatching(/KUPO_URL/) }))
})

test('an Ogmios and a Kupo that answer nonsense: every read is 503 UPSTREAM_UNAVAILABLE, never a 500', async () => {
  const ogmios = new WebSocketServer({ port: 0, host: '127.0.0.1' })
  ogmios.on('connection', socket => socket.on('message', data => {
    const { id, method } = JSON.parse(data.toString())
    // nextBlock gets a block that is no block; every query a text.
    socket.send(JSON.stringify({ jsonrpc: '2.0', id, result: method === 'nextBlock' ? { direction: 'forward', block: { id: 7 } } : 'busy' }))
  }))
  // A node whose tip is real but whose blocks are nonsense: reads fail at once, naming why, not after the catch-up time.
  const stalled = new WebSocketServer({ port: 0, host: '127.0.0.1' })
  stalled.on('connection', socket => socket.on('message', data => {
    const { id, method } = JSON.parse(data.toString())
    const answers: Record<string, unknown> = {
      'queryNetwork/tip': { slot: 9, id: 'ab'.repeat(32), height: 3 }, 'queryNetwork/startTime': '2026-01-01T00:00:00Z', findIntersection: { intersection: 'origin', tip: 'origin' },
      nextBlock: { direction: 'forward', block: { id: 7, transactions: 'none' } },
    }
    socket.send(JSON.stringify({ jsonrpc: '2.0', id, result: answers[method] ?? [] }))
  }))
  const kupo = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"not":"a list"}'))
  await Promise.all([new Promise(resolve => ogmios.once('listening', resolve)), new Promise(resolve => stalled.once('listening', resolve)), new Promise<void>(resolve => kupo.listen(0, '127.0.0.1', resolve))])
  const nonsense = new OgmiosAdapter({
    ...config(), ogmiosUrl: `ws://127.0.0.1:${(ogmios.address() as AddressInfo).port}`, kupoUrl: `http://127.0.0.1:${(kupo.address() as AddressInfo).port}`, timeoutMs: 2000,
  })
  const stalledAdapter = new OgmiosAdapter({ ...config(), ogmiosUrl: `ws://127.0.0.1:${(stalled.address() as AddressInfo).port}`, kupoUrl: `http://127.0.0.1:${(kupo.address() as AddressInfo).port}` })
  try {
    await expect(stalledAdapter.tip()).rejects.toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE', message: expect.stringMatching(/stopped following/) })
    const w1 = devnet.walletKeys('wallet-1')
    const reads: Array<() => Promise<unknown>> = [
      () => nonsense.tip(), () => nonsense.transaction('ab'.repeat(32)), () => nonsense.protocolParameters(), () => nonsense.genesis(),
      () => nonsense.network(), () => nonsense.address(w1.address), () => nonsense.addressUtxos(w1.address), () => nonsense.account(w1.stakeAddress),
      () => nonsense.pools({ page: 1, order: 'asc' }), () => nonsense.dreps({ page: 1, order: 'asc' }),
    ]
    for (const read of reads) await expect(read()).rejects.toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE' })
  } finally {
    await nonsense.close()
    await stalledAdapter.close()
    stalled.close()
    ogmios.close()
    kupo.close()
  }
})
