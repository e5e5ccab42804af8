import cds from '@sap/cds'
import { foldAll } from '../../srv/analytics/bucket-writer.ts'
import { compare, keyFigures, overview } from '../../srv/analytics/windowed.ts'
import { concentration, daily, distributions, rankings } from '../../srv/analytics/tables.ts'
import { at, chainAHistory, chainBHistory, hash } from './history.ts'

/**
 * Every figure of the analytics functions against a small history of both chains, worked out by
 * hand below. NOW is 03-10 12:30: the 24h window is [03-09 12:00, 03-10 12:00), its previous
 * [03-08 12:00, 03-09 12:00); the 1h window is [11:30, 12:30), its previous [10:30, 11:30).
 */

process.env.CHAIN_B_CRAWLER_ENABLED = 'false'
process.env.CHAIN_A_FOLLOWER_ENABLED = 'false'
cds.test(__dirname + '/../..')
afterAll(() => {
  delete process.env.CHAIN_B_CRAWLER_ENABLED
  delete process.env.CHAIN_A_FOLLOWER_ENABLED
})

const NOW = Date.parse(at('03-10 12:30'))
const POLICY = 'ab'.repeat(28)

beforeAll(async () => {
  // Chain B: blocks by P1, P1, P2 in the 10:00 hour and P3 at 11:10 (window), P1 the day before
  // (previous window), P2 at 12:10 (the current hour: in no 24h window, in the 1h window).
  await chainBHistory([
    { height: 1, when: '03-09 09:00', author: 'P1' },
    { height: 2, when: '03-10 10:05', author: 'P1' },
    { height: 3, when: '03-10 10:20', author: 'P1' },
    { height: 4, when: '03-10 10:40', author: 'P2' },
    { height: 5, when: '03-10 11:10', author: 'P3' },
    { height: 6, when: '03-10 12:10', author: 'P2' },
  ], [
    { label: 't8', height: 1, fee: 10 },
    { label: 't1', height: 2, fee: 100 },
    { label: 't2', height: 2, system: true },
    { label: 't3', height: 3, fee: 50, status: 'FAILURE' },
    { label: 't4', height: 3, fee: 70, action: { kind: 'ContractCall', contract: 'C1' } },
    { label: 't5', height: 4, fee: 30, action: { kind: 'ContractCall', contract: 'C1' } },
    { label: 't6', height: 4, fee: 20, shielded: true, action: { kind: 'ContractDeploy', contract: 'C2' } },
    { label: 't7', height: 5, fee: 200, action: { kind: 'ContractCall', contract: 'C2' } },
    { label: 't9', height: 6, fee: 5 },
  ], { indexedHeight: 6, finalizedHeight: 4, chainHeight: 7 })

  // Unshielded owners: O1's output made by t1 and spent by t4, O2's made by t5; O3's made by t8 (the day before).
  await cds.ql.INSERT.into('chainb.UnshieldedUtxos').entries([
    { intentHash: hash('i1'), outputIndex: 0, owner: 'O1', value: '5', createdAtTransaction_hash: hash('t1'), spentAtTransaction_hash: hash('t4') },
    { intentHash: hash('i2'), outputIndex: 0, owner: 'O2', value: '7', createdAtTransaction_hash: hash('t5') },
    { intentHash: hash('i3'), outputIndex: 0, owner: 'O3', value: '9', createdAtTransaction_hash: hash('t8') },
  ])

  // Chain A: pool1 at 10:10, pool2 at 11:30 (window), pool1 at 12:20 (current hour).
  await chainAHistory([
    { height: 10, when: '03-10 10:10', pool: 'pool1', epoch: 7 },
    { height: 11, when: '03-10 11:30', pool: 'pool2', epoch: 7 },
    { height: 12, when: '03-10 12:20', pool: 'pool1', epoch: 8 },
  ], [
    { label: 'x1', height: 10, fee: 170_000, size: 300, mints: 1, inputs: ['addr4'], outputs: [{ address: 'addr1', lovelace: 5_000_000, asset: POLICY + 'aa' }, { address: 'addr2', lovelace: 1_000_000 }] },
    { label: 'x2', height: 10, fee: 200_000, size: 500, failed: true, redeemers: 1, outputs: [{ address: 'addr1', lovelace: 2_000_000 }] },
    { label: 'x3', height: 11, fee: 180_000, size: 400, inputs: ['addr1'], outputs: [{ address: 'addr3', lovelace: 10_000_000, asset: POLICY + 'aa' }] },
    { label: 'x4', height: 12, fee: 190_000, size: 350, outputs: [{ address: 'addr5', lovelace: 3_000_000 }] },
  ], { startHeight: 10, indexedHeight: 12, finalizedHeight: 10 })
  // The index holds each pool's active stake: 10, 20, 30 and 40 ADA.
  await cds.ql.INSERT.into('chaina.Pools').entries([10, 20, 30, 40].map((ada, i) => ({ poolId: `pool${i + 1}`, activeStake: String(ada * 1_000_000) })))
  await foldAll(NOW)
})

const byChain = <T extends { chain: string }>(items: T[], chain: string) => items.find(item => item.chain === chain)!

test('compare: the 24h window against the previous one, with its hourly series', async () => {
  const answer = await compare('tx.count', '24h', NOW)
  expect(answer).toMatchObject({ metric: 'tx.count', window: '24h', resolution: 'hour', windowStart: at('03-09 12:00'), windowEnd: at('03-10 12:00'), previousStart: at('03-08 12:00') })
  const b = byChain(answer.chains, 'chain-b')
  // t1, t3, t4, t5, t6, t7 (t2 is a system transaction); before: t8. (6 - 1) / 1 = +500 %.
  expect(b).toMatchObject({ available: true, value: 6, previous: 1, changePercent: 500 })
  expect(b.series).toHaveLength(24)
  expect(b.series.filter(point => point.value !== 0)).toEqual([{ bucketStart: at('03-10 10:00'), value: 5 }, { bucketStart: at('03-10 11:00'), value: 1 }])
  // Chain A: x1, x2 (10:10) and x3 (11:30); nothing before.
  expect(byChain(answer.chains, 'chain-a')).toMatchObject({ value: 3, previous: 0, changePercent: null })
})

test('compare: the 1h window by minutes', async () => {
  const answer = await compare('tx.count', '1h', NOW)
  expect(answer).toMatchObject({ resolution: 'minute', windowStart: at('03-10 11:30'), windowEnd: at('03-10 12:30') })
  const b = byChain(answer.chains, 'chain-b')
  // [11:30, 12:30): t9 at 12:10; [10:30, 11:30): t5, t6 (10:40) and t7 (11:10). (1 - 3) / 3.
  expect(b).toMatchObject({ value: 1, previous: 3 })
  expect(b.changePercent).toBeCloseTo(-66.6667, 3)
  expect(b.series).toHaveLength(60)
  expect(b.series.filter(point => point.value)).toEqual([{ bucketStart: at('03-10 12:10'), value: 1 }])
  // Chain A: x3 (11:30) and x4 (12:20) now; x1, x2 at 10:10 are before 10:30.
  expect(byChain(answer.chains, 'chain-a')).toMatchObject({ value: 2, previous: 0 })
})

test('compare: a metric of one chain says so for the other', async () => {
  const answer = await compare('tx.shielded', '24h', NOW)
  expect(byChain(answer.chains, 'chain-a')).toMatchObject({ available: false, value: null, note: 'tx.shielded exists on chain-b only' })
  expect(byChain(answer.chains, 'chain-b')).toMatchObject({ available: true, value: 1 })
  expect(byChain((await compare('asset.mint_events', '24h', NOW)).chains, 'chain-b')).toMatchObject({ available: false, note: 'asset.mint_events exists on chain-a only' })
})

test.each([
  // metric, chain B, chain A (24h window)
  ['chain.blocks', 4, 2],
  ['chain.block_interval_avg', (65 * 60) / 3, 80 * 60], // 10:05 → 11:10 over 3 gaps; 10:10 → 11:30
  ['tx.system', 1, null],
  ['tx.failed', 1, 1],
  ['tx.failed_ratio', 1 / 6, 1 / 3],
  ['tx.script', 4, 1],
  ['tx.shielded_ratio', 1 / 6, null],
  ['tx.per_block', 6 / 4, 3 / 2],
  ['tx.tps', 6 / 86_400, 3 / 86_400],
  ['contract.calls', 3, null],
  ['contract.deploys', 1, null],
  ['contract.active', 2, null],
  ['fee.total', 470, 550_000],
  ['fee.avg', 470 / 6, 550_000 / 3],
  ['fee.min', 20, 170_000],
  ['fee.max', 200, 200_000],
  // Sorted fees [20, 30, 50, 70, 100, 200]: p50 between 50 and 70; p95 at rank 4.75, between 100 and 200.
  ['fee.p50', 60, 180_000],
  ['fee.p95', 175, 198_000], // [170k, 180k, 200k]: rank 1.9 → 180k + 0.9 × 20k
  ['volume.output_lovelace', null, 18_000_000],
  ['asset.mint_events', null, 1],
  ['asset.active', null, 1],
  ['address.active', 2, 4], // chain B: O1 (t1, t4), O2 (t5); chain A: addr1, addr2, addr4 (x1), addr3 (x3)
  ['producer.count', 3, 2],
  // Blocks per producer: chain B P1 2, P2 1, P3 1; chain A pool1 1, pool2 1.
  ['producer.gini', 1 / 6, 0], // sorted [1, 1, 2]: ((-2)·1 + 0·1 + 2·2) / (3 · 4)
  ['producer.nakamoto', 2, 2], // 50 % is not more than half
  ['producer.hhi', 3750, 5000], // 50² + 25² + 25²; 50² + 50²
  ['producer.top10_share', 1, 1],
  ['chain.epoch', 1, 7],
  ['sync.reorgs', 0, 0],
])('%s over 24h: chain B %p, chain A %p', async (metric, chainB, chainA) => {
  const answer = await compare(metric, '24h', NOW)
  for (const [chain, expected] of [['chain-b', chainB], ['chain-a', chainA]] as const) {
    const figure = byChain(answer.chains, chain)
    if (expected === null) expect(figure.available).toBe(false)
    else expect(figure.value).toBeCloseTo(expected, 9)
  }
})

test('the sync lag is known now only', async () => {
  const answer = await compare('sync.lag_blocks', '7d', NOW)
  expect(byChain(answer.chains, 'chain-b')).toMatchObject({ value: 1, previous: null, series: [], note: expect.stringContaining('known only now') })
})

test('key figures: the same figures for each chain, 7d by days', async () => {
  const answer = await keyFigures('7d', NOW)
  expect(answer).toMatchObject({ resolution: 'day', windowStart: at('03-03 00:00'), windowEnd: at('03-10 00:00') })
  // Everything but block 1 happened on 03-10, today: not in a window of complete days.
  const count = answer.figures.find(figure => figure.chain === 'chain-b' && figure.metric === 'tx.count')!
  expect(count).toMatchObject({ value: 1, previous: 0 })
  expect(count.series.map(point => point.value)).toEqual([0, 0, 0, 0, 0, 0, 1])
  expect(new Set(answer.figures.map(figure => figure.metric)).size).toBe(8)
})

test('overview: where each chain stands, the current hour and the 23 before it', async () => {
  const answer = await overview(NOW)
  expect(byChain(answer.chains, 'chain-b')).toMatchObject({
    network: 'devnet', tipHeight: 7, indexedHeight: 6, finalizedHeight: 4, lagBlocks: 1, epoch: 1,
    blocks24h: 5, transactions24h: 7, fees24h: 475, producers24h: 3, reorgs24h: 0, tps: 1 / 3600,
  })
  expect(byChain(answer.chains, 'chain-a')).toMatchObject({ tipHeight: 12, indexedHeight: 12, epoch: 8, blocks24h: 3, transactions24h: 4, fees24h: 740_000, activeAddresses24h: 5 })
})

test('daily: one row per day, chain and metric, today last and still counting', async () => {
  const answer = await daily('fees', 2, NOW)
  expect(answer.metrics).toEqual(['fee.total', 'fee.avg', 'fee.min', 'fee.max'])
  const row = (chain: string, day: string, metric: string) => answer.rows.find(r => r.chain === chain && r.day === day && r.metric === metric)
  expect(row('chain-b', '2026-03-09', 'fee.total')).toMatchObject({ value: 10, complete: true })
  expect(row('chain-b', '2026-03-10', 'fee.total')).toMatchObject({ value: 475, complete: false })
  expect(row('chain-b', '2026-03-10', 'fee.max')).toMatchObject({ value: 200 })
  expect(row('chain-a', '2026-03-10', 'fee.avg')!.value).toBe(740_000 / 4)
  expect(answer.rows).toHaveLength(2 * 4 * 2)
  const tokens = await daily('tokens', 1, NOW)
  expect(tokens.rows).toEqual([
    { day: '2026-03-10', chain: 'chain-a', metric: 'asset.mint_events', value: 1, complete: false },
    { day: '2026-03-10', chain: 'chain-a', metric: 'asset.active', value: 1, complete: false },
  ])
})

test('rankings with shares', async () => {
  const producers = await rankings('producers', '24h', 2, NOW)
  expect(producers.entries).toEqual([
    { chain: 'chain-a', rank: 1, entity: 'pool1', value: 1, share: 0.5 },
    { chain: 'chain-a', rank: 2, entity: 'pool2', value: 1, share: 0.5 },
    { chain: 'chain-b', rank: 1, entity: 'P1', value: 2, share: 0.5 },
    { chain: 'chain-b', rank: 2, entity: 'P2', value: 1, share: 0.25 },
  ])
  const addresses = await rankings('addresses', '24h', null, NOW)
  expect(addresses.entries.map(entry => [entry.entity, entry.value, entry.share])).toEqual([['addr3', 10_000_000, 10 / 18], ['addr1', 7_000_000, 7 / 18], ['addr2', 1_000_000, 1 / 18]])
  expect(addresses.notes).toEqual(['chain-b has no addresses ranking: it exists on chain-a only'])
  expect((await rankings('tokens', '24h', 5, NOW)).entries).toEqual([{ chain: 'chain-a', rank: 1, entity: POLICY + 'aa', value: 2, share: 1 }])
  expect((await rankings('contracts', '24h', 5, NOW)).entries).toEqual([
    { chain: 'chain-b', rank: 1, entity: hash('C1'), value: 2, share: 2 / 3 },
    { chain: 'chain-b', rank: 2, entity: hash('C2'), value: 1, share: 1 / 3 },
  ])
})

test('concentration over blocks and over stake', async () => {
  const blocks = await concentration('blocks', '24h', NOW)
  expect(byChain(blocks.chains, 'chain-b')).toMatchObject({ basis: 'blocks in 24h', entities: 3, total: 4, nakamoto: 2, hhi: 3750, top10Share: 1 })
  expect(byChain(blocks.chains, 'chain-b').gini).toBeCloseTo(1 / 6, 12)
  // Stake 10, 20, 30, 40: Gini ((-3)·10 + (-1)·20 + 1·30 + 3·40) / (4 · 100) = 0.25; 40 % + 30 % > 50 %; HHI 40² + 30² + 20² + 10².
  const stake = await concentration('stake', null, NOW)
  expect(byChain(stake.chains, 'chain-a')).toMatchObject({ basis: 'stake at epoch 8', entities: 4, total: 100_000_000, gini: 0.25, nakamoto: 2, hhi: 3000, top10Share: 1 })
  expect(byChain(stake.chains, 'chain-b')).toMatchObject({ available: false })
})

test('distributions: histograms with percentiles', async () => {
  const fees = await distributions('fees', '24h', 2, NOW)
  // [20, 30, 50, 70, 100, 200] in two bins of 90: five below 110, one at 200.
  expect(byChain(fees.chains, 'chain-b')).toMatchObject({ count: 6, min: 20, max: 200, mean: 470 / 6, p50: 60, p95: 175, bins: [{ lower: 20, upper: 110, count: 5 }, { lower: 110, upper: 200, count: 1 }] })
  const sizes = await distributions('sizes', '24h', 1, NOW)
  expect(byChain(sizes.chains, 'chain-a')).toMatchObject({ count: 3, min: 300, max: 500, p50: 400, bins: [{ lower: 300, upper: 500, count: 3 }] })
  expect(byChain(sizes.chains, 'chain-b')).toMatchObject({ available: false })
  const stake = await distributions('stake', '24h', 3, NOW)
  expect(byChain(stake.chains, 'chain-a')).toMatchObject({ count: 4, min: 10_000_000, max: 40_000_000, mean: 25_000_000, p50: 25_000_000 })
})

test('snapshots: producer shares per epoch, and the stake snapshot', async () => {
  const rows = await cds.ql.SELECT.from('analytics.EpochSnapshots').columns('chain', 'epoch', 'resource', 'entity', 'value', 'share', 'final').orderBy('chain', 'epoch', 'resource', 'entity')
  const compact = rows.map((row: any) => `${row.chain} ${row.epoch} ${row.resource} ${row.entity} ${Number(row.value)} ${row.share} ${row.final}`)
  expect(compact).toEqual([
    // Epoch 7 ended (block 12 is in epoch 8) and its last block (11) is above the finalized height 10: not final yet.
    'chain-a 7 producers pool1 1 0.5 false',
    'chain-a 7 producers pool2 1 0.5 false',
    'chain-a 8 producers pool1 1 1 false',
    'chain-a 8 stake pool1 10000000 0.1 false',
    'chain-a 8 stake pool2 20000000 0.2 false',
    'chain-a 8 stake pool3 30000000 0.3 false',
    'chain-a 8 stake pool4 40000000 0.4 false',
    'chain-b 1 producers P1 3 0.5 false',
    'chain-b 1 producers P2 2 0.3333333333333333 false',
    'chain-b 1 producers P3 1 0.16666666666666666 false',
  ])
})
