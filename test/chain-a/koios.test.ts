import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { ChainADevnet } from '../../devnet/chain-a/index.ts'
import { BlockfrostAdapter } from '../../srv/chains/chain-a/blockfrost.ts'
import { KoiosAdapter, koiosBaseUrl } from '../../srv/chains/chain-a/koios.ts'
import type { ChainAPort, ListPage } from '../../srv/chains/chain-a/port.ts'
import { ADA, buildTx, largestUtxo, startDevnet } from '../support/devnet.ts'

/**
 * The Koios adapter answers every read of the chain-A port as the Blockfrost adapter does, both
 * against the same devnet (Koios's API under /koios/api/v1, Blockfrost's at the root), except the
 * figures Koios does not report, which are null (docs/chain-a-backends.md). Submission, failures
 * and Koios's paging and back-off are checked too.
 */

let devnet: ChainADevnet
let koios: ChainAPort
let blockfrost: ChainAPort
let transferTx: string
let spentRef: { txHash: string; index: number; spender: string }
let mintedUnit: string
const w = (name: string) => devnet.walletKeys(name)

beforeAll(async () => {
  devnet = await startDevnet({ seed: 'koios-adapter', activity: true, epochLength: 40 })
  for (let i = 0; i < 60; i++) {
    devnet.activity.round()
    devnet.produceBlock()
  }
  const [w1, w2] = [w('wallet-1'), w('wallet-2')]
  const first = devnet.submit(buildTx({ inputs: [largestUtxo(devnet, w1.address)], outputs: [{ address: w2.address, coin: 9n * ADA }], signers: [w1.payment] }))
  devnet.produceBlock()
  // The first transfer's output to wallet 2 is spent by the second.
  const received = devnet.ledger.outputs.get(`${first}#0`)!
  transferTx = devnet.submit(buildTx({ inputs: [received], outputs: [{ address: w1.address, coin: 3n * ADA }], signers: [w2.payment] }))
  spentRef = { txHash: first, index: 0, spender: transferTx }
  for (let i = 0; i < 3; i++) devnet.produceBlock()
  mintedUnit = [...devnet.ledger.assets.values()].find(asset => asset.quantity > 0n)!.unit
  blockfrost = new BlockfrostAdapter({ network: 'devnet', url: devnet.url, timeoutMs: 5000, retries: 0, clientRateLimit: false })
  koios = new KoiosAdapter({ network: 'devnet', koiosUrl: `${devnet.url}/koios/api/v1`, timeoutMs: 5000, retries: 0 })
})
afterAll(() => devnet?.stop())

const asc: ListPage = { page: 1, order: 'asc' }
const desc: ListPage = { page: 1, order: 'desc' }
const activityAddress = () => devnet.ledger.genesis.activityWallets[0].address

describe('every read answers as Blockfrost does', () => {
  test('the tip, a block by hash and by height, the blocks after a height', async () => {
    const [tip, bfTip] = await Promise.all([koios.tip(), blockfrost.tip()])
    expect(tip).toEqual(bfTip)
    expect(await koios.block(tip.height - 3)).toEqual(await blockfrost.block(tip.height - 3))
    const block = (await blockfrost.block(tip.height - 5))!
    expect(await koios.block(block.hash)).toEqual(block)
    expect(await koios.block('ab'.repeat(32))).toBeNull()
    expect(await koios.blocksAfter(tip.height - 10, 5)).toEqual(await blockfrost.blocksAfter(tip.height - 10, 5))
    expect(await koios.blocksAfter(tip.height, 5)).toEqual([])
  })

  test('epochs, their lists and blocks, and the protocol parameters', async () => {
    const latest = await koios.latestEpoch()
    expect(latest).toEqual(await blockfrost.latestEpoch())
    expect(latest.epoch).toBeGreaterThan(0)
    expect(await koios.epoch(0)).toEqual(await blockfrost.epoch(0))
    expect(await koios.epoch(latest.epoch + 5)).toBeNull()
    expect(await koios.epochsAfter(0, 10)).toEqual(await blockfrost.epochsAfter(0, 10))
    expect(await koios.epochBlocks(0, asc)).toEqual(await blockfrost.epochBlocks(0, asc))
    expect(await koios.epochBlocks(0, { page: 1, order: 'desc' })).toEqual(await blockfrost.epochBlocks(0, { page: 1, order: 'desc' }))
    expect(await koios.epochBlocks(latest.epoch + 5, asc)).toBeNull()
    const params = await koios.protocolParameters()
    expect(params).toEqual(await blockfrost.protocolParameters())
    expect(await koios.protocolParameters(0)).toEqual(await blockfrost.protocolParameters(0))
  })

  test('a transaction with its inputs, outputs, metadata and counts; who spent its outputs', async () => {
    for (const hash of [transferTx, spentRef.txHash, ...activityHashes(8)]) {
      expect({ hash, tx: await koios.transaction(hash) }).toEqual({ hash, tx: await blockfrost.transaction(hash) })
    }
    const spent = (await koios.transaction(spentRef.txHash))!.outputs.find(output => output.outputIndex === spentRef.index)!
    expect(spent.consumedBy).toBe(spentRef.spender)
    expect(await koios.transaction('cd'.repeat(32))).toBeNull()
  })

  test('an address, its unspent outputs, its transactions newest first and page by page', async () => {
    for (const address of [activityAddress(), w('wallet-1').address, w('wallet-2').address]) {
      expect(await koios.address(address)).toEqual(await blockfrost.address(address))
      expect(sortedUtxos(await koios.addressUtxos(address))).toEqual(sortedUtxos(await blockfrost.addressUtxos(address)))
      expect(await koios.addressTransactions(address, 7)).toEqual(await blockfrost.addressTransactions(address, 7))
      expect(await koios.addressTransactionPage(address, asc)).toEqual(await blockfrost.addressTransactionPage(address, asc))
      expect(await koios.addressTransactionPage(address, desc)).toEqual(await blockfrost.addressTransactionPage(address, desc))
    }
    const unknown = 'addr_test1vz2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzerspjrlsz'
    expect(await koios.address(unknown)).toEqual(await blockfrost.address(unknown))
    expect(await koios.addressUtxos(unknown)).toEqual([])
    expect(await koios.addressTransactionPage(unknown, asc)).toEqual([])
  })

  test('a block\'s transactions in block order', async () => {
    const busy = devnet.ledger.blocks.filter(block => block.txs.length > 1).at(-1)!
    expect(await koios.blockTransactions(busy.hash, asc)).toEqual(await blockfrost.blockTransactions(busy.hash, asc))
    expect(await koios.blockTransactions(busy.height, desc)).toEqual(await blockfrost.blockTransactions(busy.height, desc))
    expect(await koios.blockTransactions('ef'.repeat(32), asc)).toBeNull()
  })

  test('an asset\'s mints and burns', async () => {
    expect(await koios.assetHistory(mintedUnit, 10)).toEqual(await blockfrost.assetHistory(mintedUnit, 10))
    expect(await koios.assetHistoryPage(mintedUnit, asc)).toEqual(await blockfrost.assetHistoryPage(mintedUnit, asc))
    expect(await koios.assetHistory('00'.repeat(28) + '01', 10)).toBeNull()
  })

  test('accounts, pools and DReps with their lists and delegators; what Koios does not report is null', async () => {
    const stake = w('wallet-1').stakeAddress
    expect(await koios.account(stake)).toEqual({ ...(await blockfrost.account(stake))!, activeEpoch: null })
    expect(await koios.accountAddresses(stake, asc)).toEqual(await blockfrost.accountAddresses(stake, asc))
    expect(await koios.account('stake_test1uqfu74w3wh4gfzu8m6e7j987h4lq9r3t7ef5gaw497uu85qsqfy27')).toBeNull()

    // Koios reports saturation in percent with two decimals: the same figure, rounded.
    const rounded = <T extends { liveSaturation: number }>(pool: T) => ({ ...pool, liveSaturation: Math.round(pool.liveSaturation * 10_000) / 10_000 })
    const pools = await blockfrost.pools(asc)
    expect((await koios.pools(asc)).map(rounded)).toEqual(pools.map(rounded))
    expect((await koios.pools(desc)).map(rounded)).toEqual((await blockfrost.pools(desc)).map(rounded))
    const pool = (await blockfrost.pool(pools[0].poolId))!
    expect(rounded((await koios.pool(pools[0].poolId))!)).toEqual(rounded({ ...pool, liveSize: null }))
    expect(await koios.poolDelegators(pools[0].poolId, asc)).toEqual(await blockfrost.poolDelegators(pools[0].poolId, asc))

    const dreps = await blockfrost.dreps(asc)
    expect(await koios.dreps(asc)).toEqual(dreps.map(drep => ({ ...drep, lastActiveEpoch: null })))
    expect(await koios.drep(dreps[0].drepId)).toEqual({ ...(await blockfrost.drep(dreps[0].drepId))!, lastActiveEpoch: null })
    expect(await koios.drepDelegators(dreps[0].drepId, asc)).toEqual(await blockfrost.drepDelegators(dreps[0].drepId, asc))
  })

  test('the network\'s supply and the genesis', async () => {
    expect(await koios.genesis()).toEqual(await blockfrost.genesis())
    const network = await koios.network()
    const bf = await blockfrost.network()
    expect(network).toEqual({ ...bf, lockedSupply: null, liveStake: null, circulatingSupply: expect.any(String), totalSupply: expect.any(String), treasurySupply: expect.any(String), reservesSupply: expect.any(String) })
    expect(network.maxSupply).toBe(bf.maxSupply)
  })
})

describe('submission and failures', () => {
  test('a signed transaction is submitted and answered with its hash; one the ledger refuses is TX_REJECTED', async () => {
    const w1 = w('wallet-1')
    const cbor = buildTx({ inputs: [largestUtxo(devnet, w1.address)], outputs: [{ address: w('wallet-3').address, coin: 2n * ADA }], signers: [w1.payment] })
    const hash = await koios.submit(cbor)
    expect(hash).toBe(CSL.FixedTransaction.from_bytes(cbor).transaction_hash().to_hex())
    devnet.produceBlock()
    await expect(koios.submit(cbor)).rejects.toMatchObject({ status: 400, code: 'TX_REJECTED' })
  })

  test('a 429 is UPSTREAM_RATE_LIMITED and honoured; a 5xx and a refused connection are 503 UPSTREAM_UNAVAILABLE', async () => {
    let status = 429
    let body = '{"message":"slow down"}'
    const server: Server = createServer((_req, res) => res.writeHead(status, { 'content-type': 'application/json', 'retry-after': '30' }).end(body))
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`
    try {
      const limited = new KoiosAdapter({ network: 'devnet', koiosUrl: url, timeoutMs: 2000, retries: 0 })
      await expect(limited.genesis()).rejects.toMatchObject({ status: 429, code: 'UPSTREAM_RATE_LIMITED' })
      status = 200
      await expect(limited.genesis()).rejects.toMatchObject({ status: 429, code: 'UPSTREAM_RATE_LIMITED' })
      status = 502
      const failing = new KoiosAdapter({ network: 'devnet', koiosUrl: url, timeoutMs: 2000, retries: 1 })
      await expect(failing.genesis()).rejects.toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE' })
      // An upstream that answers what is not Koios's: not JSON, not a list, a list of nonsense.
      status = 200
      for (const answer of ['<html>busy</html>', '{"not":"a list"}', '"text"']) {
        body = answer
        await expect(new KoiosAdapter({ network: 'devnet', koiosUrl: url, timeoutMs: 2000, retries: 0 }).genesis()).rejects.toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE' })
      }
    } finally {
      server.close()
    }
    const refused = new KoiosAdapter({ network: 'devnet', koiosUrl: 'http://127.0.0.1:1/api/v1', timeoutMs: 2000, retries: 0 })
    await expect(refused.tip()).rejects.toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE' })
  })

  test('finding who spent an output is bounded: a busy address costs at most 8 more calls, the spender then unknown', async () => {
    const hash = 'aa'.repeat(32)
    const paths: string[] = []
    const output = { payment_addr: { bech32: 'addr_test1busy' }, tx_hash: hash, tx_index: 0, value: '5' }
    const server: Server = createServer((req, res) => {
      paths.push(req.url!.split('?')[0])
      const answer = (rows: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(rows))
      if (req.url!.startsWith('/api/v1/utxo_info')) return answer([{ tx_index: 0, address: 'addr_test1busy', is_spent: true }])
      if (req.url!.startsWith('/api/v1/address_txs')) return answer(Array.from({ length: 1000 }, (_, i) => ({ tx_hash: i.toString(16).padStart(64, '0'), block_height: 10 + i, block_time: 1 })))
      let body = ''
      req.on('data', chunk => (body += chunk)).on('end', () => {
        const asked = JSON.parse(body)._tx_hashes as string[]
        if (asked.includes(hash)) return answer([{ tx_hash: hash, block_hash: 'bb'.repeat(32), block_height: 9, absolute_slot: 9, tx_timestamp: 1, tx_block_index: 0, tx_size: 200, fee: '1', deposit: '0', invalid_before: null, invalid_after: null, inputs: [], outputs: [output] }])
        answer(asked.map(other => ({ tx_hash: other, inputs: [] })))
      })
    })
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    try {
      const busy = new KoiosAdapter({ network: 'devnet', koiosUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`, timeoutMs: 2000, retries: 0 })
      const tx = await busy.transaction(hash)
      expect(tx!.outputs[0].consumedBy).toBeNull()
    } finally {
      server.close()
    }
    // The transaction, whether its output is spent, then the search: its address's transactions and 7 batches of their inputs.
    expect(paths.length).toBe(2 + 8)
  })

  test('a bearer token, when set, goes with every call; none without one (Koios\'s free tier)', async () => {
    const seen: (string | undefined)[] = []
    const server: Server = createServer((req, res) => {
      seen.push(req.headers.authorization)
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([{ networkmagic: '42', maxlovelacesupply: '1', systemstart: 1 }]))
    })
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`
    try {
      await new KoiosAdapter({ network: 'devnet', koiosUrl: url, koiosToken: 'eyJ0b2tlbiJ9', timeoutMs: 2000, retries: 0 }).genesis()
      await new KoiosAdapter({ network: 'devnet', koiosUrl: url, timeoutMs: 2000, retries: 0 }).genesis()
    } finally {
      server.close()
    }
    expect(seen).toEqual(['Bearer eyJ0b2tlbiJ9', undefined])
  })

  test('the hosted Koios of each hosted network when no URL is set; another network needs one', () => {
    expect(koiosBaseUrl({ network: 'preprod' })).toBe('https://preprod.koios.rest/api/v1')
    expect(koiosBaseUrl({ network: 'mainnet' })).toBe('https://api.koios.rest/api/v1')
    expect(koiosBaseUrl({ network: 'devnet', koiosUrl: 'http://127.0.0.1:3001/api/v1/' })).toBe('http://127.0.0.1:3001/api/v1')
    expect(() => koiosBaseUrl({ network: 'devnet' })).toThrow(expect.objectContaining({ code: 'UPSTREAM_NOT_CONFIGURED' }))
  })
})

function activityHashes(count: number): string[] {
  return devnet.ledger.blocks.flatMap(block => block.txs).slice(-count)
}

const sortedUtxos = <T extends { txHash: string; outputIndex: number }>(utxos: T[]) => [...utxos].sort((a, b) => (a.txHash === b.txHash ? a.outputIndex - b.outputIndex : a.txHash < b.txHash ? -1 : 1))
