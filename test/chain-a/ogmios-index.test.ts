import { createServer, connect, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import type { ChainADevnet } from '../../devnet/chain-a/index.ts'
import { BlockfrostAdapter } from '../../srv/chains/chain-a/blockfrost.ts'
import { ChainSyncIndex } from '../../srv/chains/chain-a/ogmios-index.ts'
import { KupoClient } from '../../srv/chains/chain-a/kupo.ts'
import { OgmiosRpc } from '../../srv/chains/chain-a/ogmios-rpc.ts'
import type { ListPage } from '../../srv/chains/chain-a/port.ts'
import { ADA, buildTx, largestUtxo, startDevnet } from '../support/devnet.ts'

/**
 * The chain-sync index of the Ogmios adapter, following the devnet's Ogmios from the origin,
 * answers every read it serves as the Blockfrost adapter does against the same devnet. The
 * differences left all come from the genesis block, which chain synchronisation does not deliver
 * (the Shelley genesis configuration describes it; the index holds it empty), and from figures the index cannot derive;
 * each is asserted where it shows. Rollbacks, eviction and reconnection are checked too.
 */

let devnet: ChainADevnet
let blockfrost: BlockfrostAdapter
const indexes: ChainSyncIndex[] = []
const rpcs: OgmiosRpc[] = []
let index: ChainSyncIndex
let firstTx: string
let transferTx: string
let mintedUnit: string
const w = (name: string) => devnet.walletKeys(name)
const asc: ListPage = { page: 1, order: 'asc' }
const desc: ListPage = { page: 1, order: 'desc' }

beforeAll(async () => {
  devnet = await startDevnet({ seed: 'ogmios-index', activity: true, epochLength: 40 })
  for (let i = 0; i < 60; i++) {
    devnet.activity.round()
    devnet.produceBlock()
  }
  const [w1, w2] = [w('wallet-1'), w('wallet-2')]
  firstTx = devnet.submit(buildTx({ inputs: [largestUtxo(devnet, w1.address)], outputs: [{ address: w2.address, coin: 9n * ADA }], signers: [w1.payment] }))
  devnet.produceBlock()
  // The first transfer's output to wallet 2 is spent by the second.
  const received = devnet.ledger.outputs.get(`${firstTx}#0`)!
  transferTx = devnet.submit(buildTx({ inputs: [received], outputs: [{ address: w1.address, coin: 3n * ADA }], signers: [w2.payment] }))
  for (let i = 0; i < 3; i++) devnet.produceBlock()
  mintedUnit = [...devnet.ledger.assets.values()].find(asset => asset.quantity > 0n)!.unit
  blockfrost = new BlockfrostAdapter({ network: 'devnet', url: devnet.url, timeoutMs: 10_000, retries: 0, clientRateLimit: false })
  index = following(ogmiosUrl(devnet.url), 2160)
  await index.caughtUp()
}, 120_000)

afterAll(async () => {
  for (const each of indexes) each.close()
  await Promise.all(rpcs.map(rpc => rpc.close()))
  await devnet?.stop()
})

const ogmiosUrl = (httpUrl: string) => httpUrl.replace(/^http/, 'ws') + '/ogmios'

/** An index following the devnet from the origin, its inputs and the genesis block's outputs read from the devnet's Kupo. */
function following(url: string, maxBlocks: number): ChainSyncIndex {
  const rpc = new OgmiosRpc({ url, timeoutMs: 20_000 })
  const kupo = new KupoClient({ url: `${devnet.url}/kupo`, timeoutMs: 20_000, retries: 0 })
  const created = new ChainSyncIndex({ rpc, from: 'origin', maxBlocks, resolveOutput: (txHash, index) => kupo.output(txHash, index), genesisOutputs: genesis => kupo.blockOutputs(genesis), catchUpTimeoutMs: 120_000 })
  rpcs.push(rpc)
  indexes.push(created)
  created.start()
  return created
}

/** An index following the devnet from its tip when started, caught up; inputs it never saw stay without content. */
async function startedAtTip(maxBlocks: number): Promise<ChainSyncIndex> {
  const rpc = new OgmiosRpc({ url: ogmiosUrl(devnet.url), timeoutMs: 20_000 })
  const created = new ChainSyncIndex({ rpc, from: 'tip', maxBlocks, catchUpTimeoutMs: 120_000 })
  rpcs.push(rpc)
  indexes.push(created)
  created.start()
  await created.caughtUp()
  return created
}

const genesisBlock = () => devnet.ledger.blocks[0]
const genesisTxs = () => new Set(genesisBlock().txs)
/** The genesis block's pseudo transactions that made no output: Kupo, which tells the index of that block, never sees them. */
const outputless = () => genesisBlock().txs.filter(hash => devnet.ledger.txs.get(hash)!.outputs.length === 0)
/** ChainEpoch.activeStake: the ledger's stake snapshot, which Ogmios does not report in lovelace; the index answers null. */
const withoutActiveStake = <T extends { activeStake: string | null }>(epoch: T) => ({ ...epoch, activeStake: null })

describe('every read answers as Blockfrost does', () => {
  test('the tip, a block by hash and by height, the blocks after a height', async () => {
    const [tip, bfTip] = await Promise.all([index.tip(), blockfrost.tip()])
    expect(tip).toEqual(bfTip)
    for (let height = 1; height <= tip.height; height++) expect(await index.block(height)).toEqual(await blockfrost.block(height))
    const block = (await blockfrost.block(tip.height - 5))!
    expect(await index.block(block.hash)).toEqual(block)
    expect(await index.block(String(block.height))).toEqual(block)
    expect(await index.block('ab'.repeat(32))).toBeNull()
    expect(await index.blocksAfter(0, 100)).toEqual(await blockfrost.blocksAfter(0, 100))
    expect(await index.blocksAfter(tip.height - 10, 5)).toEqual(await blockfrost.blocksAfter(tip.height - 10, 5))
    expect(await index.blocksAfter(tip.height, 5)).toEqual([])
    // The genesis block (the initial distribution) is not delivered by chain synchronisation: the index holds it with the
    // outputs Kupo has; the pseudo transaction that made none (the DReps' registrations) is not seen.
    const genesis = (await blockfrost.block(0))!
    expect(await index.block(0)).toEqual({ ...genesis, size: 0, txCount: genesis.txCount - outputless().length, slotLeader: expect.stringMatching(/^ShelleyGenesis-[0-9a-f]{16}$/) })
    expect(index.heldFrom).toEqual({ height: 0, hash: genesis.hash, slot: genesis.slot })
  })

  test('epochs, their lists and blocks; epoch 0 without the genesis block', async () => {
    const latest = await index.latestEpoch()
    expect(latest).toEqual(withoutActiveStake(await blockfrost.latestEpoch()))
    expect(latest.epoch).toBeGreaterThan(0)
    expect(await index.epoch(1)).toEqual(withoutActiveStake((await blockfrost.epoch(1))!))
    expect(await index.epoch(latest.epoch + 5)).toBeNull()
    expect(await index.epochsAfter(0, 10)).toEqual((await blockfrost.epochsAfter(0, 10)).map(withoutActiveStake))
    expect(await index.epochBlocks(1, asc)).toEqual(await blockfrost.epochBlocks(1, asc))
    expect(await index.epochBlocks(1, desc)).toEqual(await blockfrost.epochBlocks(1, desc))
    expect(await index.epochBlocks(latest.epoch + 5, asc)).toBeNull()

    const bfZero = withoutActiveStake((await blockfrost.epoch(0))!)
    expect(await index.epoch(0)).toEqual({ ...bfZero, txCount: bfZero.txCount - outputless().length })
    expect(await index.epochBlocks(0, asc)).toEqual(await blockfrost.epochBlocks(0, asc))
  })

  test('every transaction with its inputs, outputs, metadata and counts; who spent its outputs', async () => {
    const hashes = devnet.ledger.blocks.slice(1).flatMap(block => block.txs)
    expect(hashes.length).toBeGreaterThan(20)
    const read = []
    for (const hash of hashes) {
      const tx = await index.transaction(hash)
      expect({ hash, tx }).toEqual({ hash, tx: await blockfrost.transaction(hash) })
      read.push(tx!)
    }
    // The comparison covers metadata, mints and burns, and inputs spending the genesis's outputs (resolved through Kupo).
    expect(read.some(tx => tx.metadata.length > 0)).toBe(true)
    expect(read.some(tx => tx.assetMintOrBurnCount > 0)).toBe(true)
    expect(read.some(tx => tx.inputs.some(input => genesisTxs().has(input.txHash)))).toBe(true)
    const spent = (await index.transaction(firstTx))!.outputs.find(output => output.outputIndex === 0)!
    expect(spent.consumedBy).toBe(transferTx)
    expect(await index.transaction('cd'.repeat(32))).toBeNull()
    // The genesis block's pseudo transactions, from Kupo: their outputs, not their certificates or deposits.
    for (const hash of genesisBlock().txs.filter(tx => !outputless().includes(tx))) {
      const bf = (await blockfrost.transaction(hash))!
      expect(await index.transaction(hash)).toEqual({ ...bf, deposit: '0', delegationCount: 0, stakeCertCount: 0, poolUpdateCount: 0 })
    }
  })

  test('an address\'s transactions newest first and page by page', async () => {
    for (const address of [devnet.ledger.genesis.activityWallets[0].address, w('wallet-1').address, w('wallet-2').address]) {
      expect(await index.addressTransactions(address, 7)).toEqual(await blockfrost.addressTransactions(address, 7))
      expect(await index.addressTransactionPage(address, asc)).toEqual(await blockfrost.addressTransactionPage(address, asc))
      expect(await index.addressTransactionPage(address, desc)).toEqual(await blockfrost.addressTransactionPage(address, desc))
    }
    const unknown = 'addr_test1vz2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzerspjrlsz'
    expect(await index.addressTransactionPage(unknown, asc)).toEqual([])
  })

  test('a block\'s transactions in block order', async () => {
    const busy = devnet.ledger.blocks.filter(block => block.txs.length > 1).at(-1) ?? devnet.ledger.blocks.filter(block => block.txs.length).at(-1)!
    expect(await index.blockTransactions(busy.hash, asc)).toEqual(await blockfrost.blockTransactions(busy.hash, asc))
    expect(await index.blockTransactions(busy.height, desc)).toEqual(await blockfrost.blockTransactions(busy.height, desc))
    expect(await index.blockTransactions('ef'.repeat(32), asc)).toBeNull()
  })

  test('an asset\'s mints and burns', async () => {
    expect(await index.assetHistory(mintedUnit, 10)).toEqual(await blockfrost.assetHistory(mintedUnit, 10))
    expect(await index.assetHistoryPage(mintedUnit, asc)).toEqual(await blockfrost.assetHistoryPage(mintedUnit, asc))
    expect(await index.assetHistoryPage(mintedUnit, desc)).toEqual(await blockfrost.assetHistoryPage(mintedUnit, desc))
    expect(await index.assetHistory('00'.repeat(28) + '01', 10)).toBeNull()
  })

  test('pool delegators, an account\'s addresses and totals, a pool\'s block counts', async () => {
    const pools = await blockfrost.pools(asc)
    for (const { poolId } of pools) {
      expect(await index.poolDelegators(poolId, asc)).toEqual(await blockfrost.poolDelegators(poolId, asc))
      const pool = (await blockfrost.pool(poolId))!
      const latest = await blockfrost.latestEpoch()
      expect(index.poolBlockCounts(poolId, latest.epoch)).toEqual({ total: pool.blocksMinted, epoch: pool.blocksEpoch })
    }
    expect(await index.poolDelegators('pool1' + 'q'.repeat(51), asc)).toBeNull()
    for (const stake of [w('wallet-1').stakeAddress, w('wallet-2').stakeAddress, devnet.ledger.genesis.activityWallets[0].stakeAddress]) {
      expect(await index.accountAddresses(stake, asc)).toEqual(await blockfrost.accountAddresses(stake, asc))
      const account = (await blockfrost.account(stake))!
      expect(index.accountTotals(stake)).toEqual({ withdrawalsSum: account.withdrawalsSum, activeEpoch: account.activeEpoch })
    }
    expect(await index.accountAddresses('stake_test1uqfu74w3wh4gfzu8m6e7j987h4lq9r3t7ef5gaw497uu85qsqfy27', asc)).toBeNull()
  })
})

describe('following the chain', () => {
  test('a rollback removes the dropped blocks and restores what they spent; the new blocks follow', async () => {
    const transferBlock = devnet.ledger.blocks.find(block => block.txs.includes(transferTx))!
    const depth = devnet.ledger.tip.height - transferBlock.height + 1
    const firstAddress = w('wallet-2').address
    const before = await index.addressTransactionPage(firstAddress, asc)
    expect(before.map(tx => tx.txHash)).toContain(transferTx)

    devnet.rollBack(depth)
    await index.caughtUp()
    expect(await index.tip()).toEqual(await blockfrost.tip())
    expect(await index.block(transferBlock.hash)).toBeNull()
    expect(await index.transaction(transferTx)).toBeNull()
    expect((await index.transaction(firstTx))!.outputs[0].consumedBy).toBeNull()
    expect(await index.addressTransactionPage(firstAddress, asc)).toEqual(before.filter(tx => tx.blockHeight < transferBlock.height))

    // The dropped transactions went back to the mempool: the next block holds them again.
    devnet.produceBlock()
    await index.caughtUp()
    expect(await index.tip()).toEqual(await blockfrost.tip())
    expect(await index.transaction(transferTx)).toEqual(await blockfrost.transaction(transferTx))
    expect((await index.transaction(firstTx))!.outputs[0].consumedBy).toBe(transferTx)
    expect(await index.addressTransactionPage(firstAddress, asc)).toEqual(await blockfrost.addressTransactionPage(firstAddress, asc))
  })

  test('a small index holds only the newest blocks: what is older reads as unknown', async () => {
    const small = following(ogmiosUrl(devnet.url), 5)
    await small.caughtUp()
    const tip = await blockfrost.tip()
    expect(small.heldFrom!.height).toBe(tip.height - 4)
    expect(await small.tip()).toEqual(tip)
    expect(await small.block(tip.height - 5)).toBeNull()
    expect(await small.blocksAfter(tip.height - 5, 10)).toEqual(await blockfrost.blocksAfter(tip.height - 5, 10))
    expect(await small.blocksAfter(1, 10)).toEqual([])
    const old = devnet.ledger.blocks.slice(1, tip.height - 4).flatMap(block => block.txs)
    for (const hash of old.slice(-5)) expect(await small.transaction(hash)).toBeNull()
    // The epoch of the evicted blocks is incomplete, so unknown; the tip's epoch is known only when it began after them.
    expect(await small.epoch(0)).toBeNull()
    const oldestHeld = (await blockfrost.block(small.heldFrom!.height))!
    const evicted = (await blockfrost.block(small.heldFrom!.height - 1))!
    expect(await small.epoch(tip.epoch)).toEqual(evicted.epoch < oldestHeld.epoch ? withoutActiveStake((await blockfrost.epoch(tip.epoch))!) : null)
    for (const address of [devnet.ledger.genesis.activityWallets[0].address, w('wallet-1').address]) {
      const history = await small.addressTransactionPage(address, asc)
      expect(history.every(tx => tx.blockHeight >= small.heldFrom!.height)).toBe(true)
      expect(history).toEqual((await blockfrost.addressTransactionPage(address, asc)).filter(tx => tx.blockHeight >= small.heldFrom!.height))
    }
    const held = await small.assetHistoryPage(mintedUnit, asc)
    const heldTxs = new Set(devnet.ledger.blocks.slice(small.heldFrom!.height).flatMap(block => block.txs))
    const inHeld = (await blockfrost.assetHistoryPage(mintedUnit, asc))!.filter(entry => heldTxs.has(entry.txHash))
    expect(held).toEqual(inHeld.length ? inHeld : null)

    // More blocks: the window moves on.
    for (let i = 0; i < 3; i++) {
      devnet.activity.round()
      devnet.produceBlock()
    }
    await small.caughtUp()
    expect(small.heldFrom!.height).toBe((await blockfrost.tip()).height - 4)
    expect(await small.blocksAfter(small.heldFrom!.height - 1, 10)).toEqual(await blockfrost.blocksAfter(small.heldFrom!.height - 1, 10))
  })

  test('started at the tip, the index holds the blocks made since; without a resolver, an input it never saw has no content', async () => {
    const late = await startedAtTip(100)
    expect(late.heldFrom).toBeNull()
    await expect(late.tip()).rejects.toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE' })
    const startedAt = await blockfrost.tip()

    const w1 = w('wallet-1')
    const hash = devnet.submit(buildTx({ inputs: [largestUtxo(devnet, w1.address)], outputs: [{ address: w('wallet-3').address, coin: 2n * ADA }], signers: [w1.payment] }))
    devnet.produceBlock()
    await late.caughtUp()
    const tip = await blockfrost.tip()
    expect(await late.tip()).toEqual(tip)
    expect(late.heldFrom!.height).toBe(startedAt.height + 1)
    const bf = (await blockfrost.transaction(hash))!
    const unknown = { address: '', lovelace: '0', assets: [], dataHash: null, inlineDatum: null, referenceScriptHash: null }
    expect(await late.transaction(hash)).toEqual({ ...bf, inputs: bf.inputs.map(input => ({ ...input, ...unknown })) })
    const since = (await blockfrost.addressTransactionPage(w1.address, desc)).filter(tx => tx.blockHeight > startedAt.height).reverse()
    expect(since.map(tx => tx.txHash)).toContain(hash)
    expect(await late.addressTransactionPage(w1.address, asc)).toEqual(since)
    // The tip's epoch is whole only when it began after the index started.
    expect(await late.epoch(tip.epoch)).toEqual(startedAt.epoch < tip.epoch ? withoutActiveStake((await blockfrost.epoch(tip.epoch))!) : null)
  })

  test('told where the read index stands (a restart), an index started at the tip follows again from there', async () => {
    const restarted = await startedAtTip(2160)
    const tip = await blockfrost.tip()
    // The read index's newest blocks, newest first, the newest of them replaced by a fork the node never saw.
    const stands = await blockfrost.block(tip.height - 6)
    const indexed = await Promise.all([0, 1, 2].map(async back => (await blockfrost.block(stands!.height - back))!))
    await restarted.followFrom([{ slot: stands!.slot + 1, hash: 'ab'.repeat(32) }, ...indexed.map(block => ({ slot: block.slot, hash: block.hash }))])
    await restarted.caughtUp()
    expect(restarted.heldFrom!.height).toBe(stands!.height + 1)
    expect(await restarted.tip()).toEqual(tip)
    expect(await restarted.blocksAfter(stands!.height, 10)).toEqual(await blockfrost.blocksAfter(stands!.height, 10))
    // Holding a block as old already, it stays as it is.
    await restarted.followFrom([{ slot: stands!.slot + 3, hash: (await blockfrost.block(stands!.height + 3))!.hash }])
    expect(restarted.heldFrom!.height).toBe(stands!.height + 1)
  })

  test('told points the node does not know, an index follows from its start', async () => {
    const restarted = await startedAtTip(2160)
    await restarted.followFrom([{ slot: 3, hash: 'cd'.repeat(32) }])
    await restarted.caughtUp()
    expect(restarted.heldFrom).toBeNull()
    devnet.produceBlock()
    await restarted.caughtUp()
    expect(await restarted.tip()).toEqual(await blockfrost.tip())
    expect(restarted.heldFrom!.height).toBe((await blockfrost.tip()).height)
  })

  test('on a chain of the genesis block alone, the index is caught up at the genesis block; the first block then shows', async () => {
    const fresh = await startDevnet({ seed: 'ogmios-index-fresh', epochLength: 40 })
    try {
      const rpc = new OgmiosRpc({ url: ogmiosUrl(fresh.url), timeoutMs: 20_000 })
      const empty = new ChainSyncIndex({ rpc, from: 'origin', maxBlocks: 10, catchUpTimeoutMs: 120_000 })
      rpcs.push(rpc)
      indexes.push(empty)
      await empty.caughtUp()
      const freshBlockfrost = new BlockfrostAdapter({ network: 'devnet', url: fresh.url, timeoutMs: 10_000, retries: 0, clientRateLimit: false })
      const genesis = await freshBlockfrost.tip()
      expect(empty.heldFrom).toEqual({ height: 0, hash: genesis.hash, slot: genesis.slot })
      expect(await empty.tip()).toEqual({ ...genesis, size: 0, txCount: 0, output: null, fees: null, slotLeader: expect.stringMatching(/^ShelleyGenesis-[0-9a-f]{16}$/) })
      expect((await empty.latestEpoch()).blockCount).toBe(1)
      fresh.produceBlock()
      await empty.caughtUp()
      expect(await empty.tip()).toEqual(await freshBlockfrost.tip())
      empty.close()
      await expect(empty.tip()).rejects.toMatchObject({ status: 503 })
    } finally {
      await fresh.stop()
    }
  })

  test('after the connection is lost, the index takes up following again without repeating a block', async () => {
    const proxy = await tcpProxy(new URL(devnet.url).port)
    try {
      const resumed = following(`ws://127.0.0.1:${proxy.port}/ogmios`, 2160)
      await resumed.caughtUp()
      proxy.dropConnections()
      for (let i = 0; i < 4; i++) {
        devnet.activity.round()
        devnet.produceBlock()
      }
      // Reads during the reconnection fail with 503 (the connection they went out on was lost); one after it succeeds.
      await afterReconnection(() => resumed.caughtUp())
      const tip = await blockfrost.tip()
      expect(await resumed.tip()).toEqual(tip)
      expect(await resumed.blocksAfter(tip.height - 10, 10)).toEqual(await blockfrost.blocksAfter(tip.height - 10, 10))
      const heights = (await resumed.blocksAfter(0, 100)).map(block => block.height)
      expect(heights).toEqual(Array.from({ length: heights.length }, (_, i) => i + 1))
      const address = devnet.ledger.genesis.activityWallets[0].address
      expect(await resumed.addressTransactionPage(address, desc)).toEqual(await blockfrost.addressTransactionPage(address, desc))
      expect(proxy.connections()).toBeGreaterThan(1)
    } finally {
      await proxy.close()
    }
  })
})

/** Runs a read until it is not refused for a lost connection (the client reconnects by itself, after a back-off). */
async function afterReconnection<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read()
    } catch (error) {
      if ((error as { status?: number }).status !== 503 || attempt >= 600) throw error
      await new Promise(resolve => setTimeout(resolve, 100))
    }
  }
}

/** A TCP relay to the devnet whose connections the test can cut, as a network failure would. */
async function tcpProxy(targetPort: string) {
  const sockets = new Set<Socket>()
  let accepted = 0
  const server: Server = createServer(client => {
    accepted++
    const upstream = connect(Number(targetPort), '127.0.0.1')
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => socket.destroy())
    }
    client.pipe(upstream).pipe(client)
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => accepted,
    dropConnections: () => { for (const socket of sockets) socket.destroy() },
    close: () => new Promise<void>(resolve => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    }),
  }
}
