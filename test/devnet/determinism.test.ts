import { blake2b, assetFingerprint, toHex } from '../../devnet/chain-a/crypto.ts'
import { buildGenesis } from '../../devnet/chain-a/genesis.ts'
import type { ChainADevnet } from '../../devnet/chain-a/index.ts'
import { getJson, startDevnet } from '../support/devnet.ts'

/** Everything at genesis derives from the seed. */

let a: ChainADevnet
let b: ChainADevnet
let other: ChainADevnet

beforeAll(async () => {
  ;[a, b, other] = await Promise.all([startDevnet({ seed: 'same' }), startDevnet({ seed: 'same' }), startDevnet({ seed: 'different' })])
})
afterAll(() => Promise.all([a, b, other].map(d => d.stop())))

const genesisUtxos = (devnet: ChainADevnet) => [...devnet.ledger.outputs.values()].map(o => [o.ref, o.address, String(o.value.coin)])

it('runs several devnets side by side on ephemeral ports', () => {
  expect(new Set([a.url, b.url, other.url]).size).toBe(3)
})

it('derives the same wallets, pools, DReps and genesis UTxOs from the same seed', async () => {
  expect(a.wallets()).toEqual(b.wallets())
  expect((await getJson(a, '/pools/extended')).body).toEqual((await getJson(b, '/pools/extended')).body)
  expect((await getJson(a, '/governance/dreps')).body).toEqual((await getJson(b, '/governance/dreps')).body)
  expect(genesisUtxos(a)).toEqual(genesisUtxos(b))
  expect(a.ledger.blocks[0].hash).toBe(b.ledger.blocks[0].hash)
})

it('derives different keys and UTxOs from a different seed', async () => {
  expect(other.wallets().map(w => w.address)).not.toEqual(a.wallets().map(w => w.address))
  expect((await getJson(other, '/pools')).body).not.toEqual((await getJson(a, '/pools')).body)
  expect(genesisUtxos(other)).not.toEqual(genesisUtxos(a))
})

it('funds every test wallet with 10,000 ADA in several UTxOs, stake registered and delegated', async () => {
  for (const wallet of a.wallets()) {
    const utxos = (await getJson(a, `/addresses/${wallet.address}/utxos`)).body
    expect(utxos.length).toBeGreaterThan(1)
    expect(utxos.reduce((sum: bigint, u: any) => sum + BigInt(u.amount[0].quantity), 0n)).toBe(10_000_000_000n)
    const account = (await getJson(a, `/accounts/${wallet.stakeAddress}`)).body
    expect(account).toMatchObject({ registered: true, pool_id: expect.stringMatching(/^pool1/), drep_id: expect.stringMatching(/^drep1/) })
  }
})

it('registers three pools with metadata and three DReps', async () => {
  const pools = (await getJson(a, '/pools/extended')).body
  expect(pools).toHaveLength(3)
  for (const pool of pools) {
    expect(pool.metadata).toMatchObject({ ticker: expect.stringMatching(/^DEV[ABC]$/), hash: expect.stringMatching(/^[0-9a-f]{64}$/) })
    expect(BigInt(pool.declared_pledge)).toBeGreaterThan(0n)
  }
  expect((await getJson(a, '/governance/dreps')).body).toHaveLength(3)
})

it('uses the wallet count of the configuration', () => {
  expect(buildGenesis('same', 5).testWallets.map(w => w.address).slice(0, 3)).toEqual(a.wallets().map(w => w.address))
})

it('hashes with BLAKE2b and fingerprints assets per CIP-14', () => {
  expect(toHex(blake2b('abc', 64))).toBe('ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923')
  expect(assetFingerprint('7eae28af2208be856f7a119668ae52a49b73725e326dc16579dcc373', '')).toBe('asset1rjklcrnsdzqp65wjgrg55sy9723kw09mlgvlc3')
  expect(assetFingerprint('7eae28af2208be856f7a119668ae52a49b73725e326dc16579dcc373', '504154415445')).toBe('asset13n25uv0yaf5kus35fm2k86cqy60z58d9xmde92')
  expect(assetFingerprint('1e349c9bdea19fd6c147626a5260bc44b71635f398b67c59881df209', '')).toBe('asset1uyuxku60yqe57nusqzjx38aan3f2wq6s93f6ea')
})
