import type { ChainADevnet, WalletKeyPair } from '../../devnet/chain-a/index.ts'
import { buildTx, getJson, largestUtxo, startDevnet } from '../support/devnet.ts'

/** Blocks, epochs, rewards and block limits of the devnet's ledger. */

const EPOCH_LENGTH = 10
let devnet: ChainADevnet
let w1: WalletKeyPair

beforeAll(async () => {
  devnet = await startDevnet({ seed: 'ledger-test', epochLength: EPOCH_LENGTH })
  w1 = devnet.walletKeys('wallet-1')
  for (let i = 0; i < 2 * EPOCH_LENGTH + 5; i++) devnet.produceBlock()
})
afterAll(() => devnet.stop())

it('links blocks by hash with increasing height and slot', () => {
  const blocks = devnet.ledger.blocks
  blocks.slice(1).forEach((block, i) => {
    expect(block.previousBlock).toBe(blocks[i].hash)
    expect(block.height).toBe(blocks[i].height + 1)
    expect(block.slot).toBeGreaterThan(blocks[i].slot)
    expect(block.epoch).toBe(Math.floor(block.slot / EPOCH_LENGTH))
    expect(block.epochSlot).toBe(block.slot % EPOCH_LENGTH)
  })
  expect(new Set(blocks.map(b => b.hash)).size).toBe(blocks.length)
})

it('chooses a registered pool as slot leader and counts its blocks', async () => {
  const tip = devnet.ledger.tip
  const pool = (await getJson(devnet, `/pools/${tip.slotLeader}`)).body
  expect(pool.blocks_minted).toBeGreaterThan(0)
  expect((await getJson(devnet, `/pools/${tip.slotLeader}/blocks?order=desc&count=1`)).body).toEqual([tip.hash])
  const blocksThisEpoch = [...devnet.ledger.pools.values()].reduce((sum, p) => sum + p.blocksEpoch, 0)
  expect(blocksThisEpoch).toBe(devnet.ledger.latestEpoch.blocks.length)
})

it('reports confirmations as the distance to the tip', async () => {
  const { body } = await getJson(devnet, '/blocks/3')
  expect(body.confirmations).toBe(devnet.ledger.tip.height - 3)
  expect(body.next_block).toBe(devnet.ledger.blocks[4].hash)
})

it('pays epoch rewards to delegators and operators and snapshots active stake', async () => {
  expect(devnet.ledger.currentEpoch).toBe(2)
  const rewards = (await getJson(devnet, `/accounts/${w1.stakeAddress}/rewards`)).body
  // A delegator earns in the epochs where its pool made blocks.
  expect(rewards.length).toBeGreaterThan(0)
  expect(rewards.every((r: any) => r.epoch === 0 || r.epoch === 1)).toBe(true)
  expect(rewards.every((r: any) => r.type === 'member' && BigInt(r.amount) > 0n)).toBe(true)
  const operator = devnet.ledger.genesis.pools[0].owner.stakeAddress
  expect((await getJson(devnet, `/accounts/${operator}/rewards`)).body.some((r: any) => r.type === 'leader')).toBe(true)

  const epoch = (await getJson(devnet, '/epochs/2')).body
  expect(BigInt(epoch.active_stake)).toBe(devnet.ledger.epochs.get(2)!.activeStake)
  expect((await getJson(devnet, '/network')).body.supply.treasury).not.toBe('0')
  expect(devnet.ledger.accountedSupply()).toBe(45_000_000_000_000_000n)
})

it('withdraws the whole reward balance', async () => {
  const account = (await getJson(devnet, `/accounts/${w1.stakeAddress}`)).body
  const amount = BigInt(account.withdrawable_amount)
  expect(amount).toBeGreaterThan(0n)
  const cbor = buildTx({ inputs: [largestUtxo(devnet, w1.address)], withdrawals: [{ stakeAddress: w1.stakeAddress, amount }], signers: [w1.payment, w1.stake] })
  devnet.submit(cbor)
  devnet.produceBlock()
  expect((await getJson(devnet, `/accounts/${w1.stakeAddress}`)).body).toMatchObject({ withdrawable_amount: '0', withdrawals_sum: String(amount) })
  expect(devnet.ledger.accountedSupply()).toBe(45_000_000_000_000_000n)
})

it('fills a block up to max_block_size and carries the rest to the next block', () => {
  const filler = Array.from({ length: 120 }, (_, i) => `${i}`.padEnd(64, '#'))
  const hashes: string[] = []
  let input = largestUtxo(devnet, w1.address)
  for (let i = 0; i < 12; i++) {
    const hash = devnet.submit(buildTx({ inputs: [input], outputs: [], metadata: { 1: filler }, signers: [w1.payment] }))
    hashes.push(hash)
    input = { ...devnet.ledger.pendingView.output(`${hash}#0`)!, txHash: hash, index: 0, blockHash: '', spentBy: null }
  }
  const first = devnet.produceBlock()
  const second = devnet.produceBlock()
  expect(first.size).toBeLessThanOrEqual(90112 + 1100)
  expect(first.txs.length).toBeGreaterThan(0)
  expect(first.txs.length).toBeLessThan(12)
  expect([...first.txs, ...second.txs]).toEqual(hashes)
})

it('produces blocks on its own every blockTimeMs when configured to', async () => {
  const timed = await startDevnet({ seed: 'timer-test', blockTimeMs: 5 })
  try {
    while (timed.ledger.tip.height < 3) await new Promise(resolve => setTimeout(resolve, 5))
    expect(timed.ledger.tip.slotLeader).toMatch(/^pool1/)
  } finally {
    await timed.stop()
  }
})
