import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ChainADevnet, WalletKeyPair } from '../../devnet/chain-a/index.ts'
import { GENESIS } from '../../devnet/chain-a/params.ts'
import { ADA, buildTx, getJson, largestUtxo, startDevnet } from '../support/devnet.ts'

/** rollBack: the newest blocks leave the chain, their transactions return to the mempool, the next blocks form a fork. */

const running: ChainADevnet[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map(devnet => devnet.stop()))
})

async function start(overrides: Parameters<typeof startDevnet>[0] = {}): Promise<ChainADevnet> {
  const devnet = await startDevnet({ seed: 'rollback-test', ...overrides })
  running.push(devnet)
  return devnet
}

/** Sends 5 ADA from one test wallet to another in-process; answers the transaction hash. */
function transfer(devnet: ChainADevnet, from: WalletKeyPair, to: WalletKeyPair, ttl?: number): string {
  return devnet.submit(buildTx({ inputs: [largestUtxo(devnet, from.address)], outputs: [{ address: to.address, coin: 5n * ADA }], ttl, signers: [from.payment] }))
}

/** What the ledger holds, beyond its blocks. */
function ledgerState(devnet: ChainADevnet) {
  const ledger = devnet.ledger
  return {
    tip: ledger.tip,
    unspent: [...ledger.outputs.values()].filter(output => !output.spentBy).map(output => `${output.ref} ${output.address} ${output.value.coin}`).sort(),
    transactions: [...ledger.txs.keys()].sort(),
    pots: { ...ledger.pots },
    epochs: ledger.currentEpoch,
    poolBlocks: [...ledger.pools.values()].map(pool => [pool.id, pool.blocks.length]),
  }
}

test('the newest blocks leave the chain; the next ones form a fork with other hashes that holds their transactions', async () => {
  const devnet = await start()
  const [w1, w2] = [devnet.walletKeys('wallet-1'), devnet.walletKeys('wallet-2')]
  devnet.produceBlock()
  const before = ledgerState(devnet)
  const first = transfer(devnet, w1, w2)
  const a = devnet.produceBlock()
  const second = transfer(devnet, w2, w1)
  const b = devnet.produceBlock()
  expect([a.txs, b.txs]).toEqual([[first], [second]])

  expect(devnet.rollBack(2).map(block => block.hash)).toEqual([a.hash, b.hash])
  expect(ledgerState(devnet)).toEqual(before)
  expect(devnet.ledger.mempoolTransactions().map(tx => tx.hash)).toEqual([first, second])
  expect(devnet.ledger.accountedSupply()).toBe(GENESIS.maxLovelaceSupply)
  expect((await getJson(devnet, '/blocks/latest')).body.hash).toBe(before.tip.hash)
  expect((await getJson(devnet, `/blocks/${a.hash}`)).status).toBe(404)
  expect((await getJson(devnet, `/txs/${first}`)).status).toBe(404)

  const fork = devnet.produceBlock()
  expect(fork).toMatchObject({ height: a.height, previousBlock: before.tip.hash, txs: [first, second] })
  expect(fork.hash).not.toBe(a.hash)
  expect(fork.slot).toBeGreaterThan(b.slot)
  expect((await getJson(devnet, `/blocks/${a.height}`)).body.hash).toBe(fork.hash)
  expect((await getJson(devnet, `/txs/${second}`)).body).toMatchObject({ block: fork.hash, block_height: fork.height })
  expect(devnet.ledger.accountedSupply()).toBe(GENESIS.maxLovelaceSupply)
})

test('a removed transaction that no longer validates at the fork\'s slots is dropped, the others return', async () => {
  const devnet = await start()
  const [w1, w2, w3] = [devnet.walletKeys('wallet-1'), devnet.walletKeys('wallet-2'), devnet.walletKeys('wallet-3')]
  const kept = transfer(devnet, w1, w2)
  // Valid up to the slot of the block that takes it: the fork's blocks come later.
  const expiring = transfer(devnet, w3, w2, devnet.ledger.nextSlot() + 1)
  devnet.produceBlock()
  devnet.produceBlock()
  devnet.rollBack(2)
  expect(devnet.ledger.mempoolTransactions().map(tx => tx.hash)).toEqual([kept])
  expect(devnet.produceBlock().txs).toEqual([kept])
  expect((await getJson(devnet, `/txs/${expiring}`)).status).toBe(404)
})

test('rolling back across an epoch boundary reopens the earlier epoch', async () => {
  const devnet = await start({ epochLength: 5 })
  for (let i = 0; i < 3; i++) devnet.produceBlock()
  const before = ledgerState(devnet)
  for (let i = 0; i < 4; i++) devnet.produceBlock()
  expect(devnet.ledger.currentEpoch).toBe(1)
  devnet.rollBack(4)
  expect(ledgerState(devnet)).toEqual(before)
  expect((await getJson(devnet, '/epochs/latest')).body.epoch).toBe(0)
  expect(devnet.produceBlock().epoch).toBe(1)
})

test('refused for the genesis block, for a depth that is not a whole number, and for a chain kept in a state folder', async () => {
  const devnet = await start()
  devnet.produceBlock()
  expect(() => devnet.rollBack(2)).toThrow('rollBack takes 1 to 1 blocks (the genesis block stays), got 2')
  expect(() => devnet.rollBack(0.5)).toThrow(RangeError)
  const folder = mkdtempSync(join(tmpdir(), 'devnet-rollback-'))
  try {
    const kept = await start({ stateDir: folder })
    kept.produceBlock()
    expect(() => kept.rollBack(1)).toThrow('a devnet chain kept in a state folder cannot roll back: its log only grows')
    expect(kept.ledger.tip.height).toBe(1)
  } finally {
    await Promise.all(running.splice(0).map(each => each.stop()))
    rmSync(folder, { recursive: true, force: true })
  }
})
