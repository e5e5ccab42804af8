import cds from '@sap/cds'
import { foldChain } from '../../srv/analytics/bucket-writer.ts'
import { chainBSource } from '../../srv/analytics/chain-b-source.ts'

/**
 * Chain B's index folded into hourly and daily buckets, against a history counted by hand: six
 * blocks over two days with regular, failed, shielded, scripted and system transactions; then a
 * reorg that replaces the last block, after which the affected hours are folded again and the
 * older ones become final.
 */

process.env.CHAIN_B_CRAWLER_ENABLED = 'false'
cds.test(__dirname + '/../..')
afterAll(() => delete process.env.CHAIN_B_CRAWLER_ENABLED)

const { INSERT, SELECT, UPSERT, DELETE } = cds.ql
const hash = (label: string) => require('node:crypto').createHash('sha256').update(label).digest('hex')

async function block(height: number, timestamp: string) {
  await INSERT.into('chainb.Blocks').entries({ hash: hash(`block ${height} ${timestamp}`), height, timestamp, author: 'aa', finalized: false })
  return hash(`block ${height} ${timestamp}`)
}

async function tx(label: string, blockHash: string, blockHeight: number, fields: Record<string, unknown>, action?: string) {
  await INSERT.into('chainb.Transactions').entries({ hash: hash(label), block_hash: blockHash, blockHeight, transactionType: 'regular', status: 'SUCCESS', isShielded: false, ...fields })
  if (action) await INSERT.into('chainb.ContractActions').entries({ transaction_hash: hash(label), position: 0, address: hash('vault'), actionType: action, blockHeight })
}

const seconds = (when: string) => Date.parse(`2026-${when.replace(' ', 'T')}:00Z`) / 1000

const sync = (indexedHeight: number, finalizedHeight: number) =>
  UPSERT.into('chainb.SyncState').entries({ ID: 'chain-b', network: 'devnet', indexedHeight, finalizedHeight })

/** The buckets of a resolution as { 'start metric': [value, count, min, max, final] }. */
async function buckets(resolution: 'hour' | 'day') {
  const rows = await SELECT.from('analytics.MetricBuckets').where({ chain: 'chain-b', resolution, dimension: '' })
  return Object.fromEntries(rows.map((row: any) => [`${new Date(row.bucketStart).toISOString().slice(0, 13)} ${row.metric}`,
    [Number(row.value), Number(row.count), row.min === null ? null : Number(row.min), row.max === null ? null : Number(row.max), !!row.final]]))
}

test('hours and days folded from a hand-counted history, and folded again after a reorg', async () => {
  const b100 = await block(100, '2026-01-01T10:05:00Z')
  const b101 = await block(101, '2026-01-01T10:40:00Z')
  const b102 = await block(102, '2026-01-01T11:10:00Z')
  await block(103, '2026-01-01T11:50:00Z')
  const b104 = await block(104, '2026-01-02T09:00:00Z')
  const b105 = await block(105, '2026-01-02T09:30:00Z')
  await tx('t1', b100, 100, { paidFees: '100', isShielded: true })
  await tx('t2', b100, 100, { transactionType: 'system', status: null })
  await tx('t3', b101, 101, { paidFees: '50', status: 'FAILURE' })
  await tx('t4', b101, 101, { paidFees: '70' }, 'ContractCall')
  await tx('t5', b102, 102, { paidFees: '30', status: 'PARTIAL_SUCCESS' }, 'ContractDeploy')
  await tx('t6', b104, 104, { paidFees: '10' })
  await tx('t7', b105, 105, { paidFees: '20', isShielded: true })
  await sync(105, 102)

  expect((await foldChain(chainBSource)).hours).toBe(3)
  expect(await buckets('hour')).toEqual({
    // 10:00 holds blocks 100 and 101; it ends before block 102 (finalized, 11:10): final.
    // chain.blocks keeps its first and last block's time (seconds): 10:05 and 10:40.
    '2026-01-01T10 chain.blocks': [2, 2, seconds('01-01 10:05'), seconds('01-01 10:40'), true],
    '2026-01-01T10 tx.count': [3, 3, null, null, true],
    '2026-01-01T10 tx.system': [1, 1, null, null, true],
    '2026-01-01T10 tx.failed': [1, 1, null, null, true],
    '2026-01-01T10 tx.shielded': [1, 1, null, null, true],
    '2026-01-01T10 tx.script': [1, 1, null, null, true],
    '2026-01-01T10 contract.calls': [1, 1, null, null, true],
    '2026-01-01T10 fee.total': [220, 3, 50, 100, true],
    // 11:00 holds blocks 102 and 103; 103 is not final.
    '2026-01-01T11 chain.blocks': [2, 2, seconds('01-01 11:10'), seconds('01-01 11:50'), false],
    '2026-01-01T11 tx.count': [1, 1, null, null, false],
    '2026-01-01T11 tx.failed': [1, 1, null, null, false],
    '2026-01-01T11 tx.script': [1, 1, null, null, false],
    '2026-01-01T11 contract.deploys': [1, 1, null, null, false],
    '2026-01-01T11 fee.total': [30, 1, 30, 30, false],
    '2026-01-02T09 chain.blocks': [2, 2, seconds('01-02 09:00'), seconds('01-02 09:30'), false],
    '2026-01-02T09 tx.count': [2, 2, null, null, false],
    '2026-01-02T09 tx.shielded': [1, 1, null, null, false],
    '2026-01-02T09 fee.total': [30, 2, 10, 20, false],
  })
  const days = await buckets('day')
  expect(days['2026-01-01T00 chain.blocks']).toEqual([4, 4, seconds('01-01 10:05'), seconds('01-01 11:50'), false])
  expect(days['2026-01-01T00 tx.count']).toEqual([4, 4, null, null, false])
  expect(days['2026-01-01T00 fee.total']).toEqual([250, 4, 30, 100, false])
  expect(days['2026-01-02T00 fee.total']).toEqual([30, 2, 10, 20, false])
  expect((await foldChain(chainBSource)).hours).toBe(0) // nothing new, no reorg: nothing folded again

  // A reorg replaces block 105 (and t7) with a block at 09:45 holding t8, and adds block 106 at 10:15.
  await DELETE.from('chainb.Transactions').where({ blockHeight: 105 })
  await DELETE.from('chainb.Blocks').where({ height: 105 })
  const b105b = await block(105, '2026-01-02T09:45:00Z')
  await tx('t8', b105b, 105, { paidFees: '40' })
  await block(106, '2026-01-02T10:15:00Z')
  await INSERT.into('chainb.ReorgLog').entries({ ID: cds.utils.uuid(), detectedAt: new Date().toISOString(), forkHeight: 105, blocksRolledBack: 1, cause: 'reorg' })
  await sync(106, 104)

  await foldChain(chainBSource)
  const after = await buckets('hour')
  expect(after['2026-01-02T09 fee.total']).toEqual([50, 2, 10, 40, false])
  expect(after['2026-01-02T09 tx.shielded']).toBeUndefined()
  expect(after['2026-01-02T10 chain.blocks']).toEqual([1, 1, seconds('01-02 10:15'), seconds('01-02 10:15'), false])
  // Block 104 (Jan 2, 09:00) is final now: every hour of Jan 1, and Jan 1 itself, are final.
  expect(after['2026-01-01T11 chain.blocks']).toEqual([2, 2, seconds('01-01 11:10'), seconds('01-01 11:50'), true])
  expect((await buckets('day'))['2026-01-01T00 chain.blocks']).toEqual([4, 4, seconds('01-01 10:05'), seconds('01-01 11:50'), true])
  expect((await buckets('day'))['2026-01-02T00 fee.total']).toEqual([50, 2, 10, 40, false]) // t6 and t8; t7 is gone
})

test('an index behind what was folded (a new chain) is folded again from nothing', async () => {
  // After the test above: a devnet reset leaves a new chain of two blocks on another day.
  await DELETE.from('chainb.Transactions')
  await DELETE.from('chainb.ContractActions')
  await DELETE.from('chainb.Blocks')
  await DELETE.from('chainb.ReorgLog')
  const b1 = await block(1, '2026-02-01T08:30:00Z')
  await tx('n1', b1, 1, { paidFees: '5' })
  await block(2, '2026-02-01T08:40:00Z')
  await sync(2, 0)
  await foldChain(chainBSource)
  expect(await buckets('hour')).toEqual({
    '2026-02-01T08 chain.blocks': [2, 2, seconds('02-01 08:30'), seconds('02-01 08:40'), false],
    '2026-02-01T08 tx.count': [1, 1, null, null, false],
    '2026-02-01T08 fee.total': [5, 1, 5, 5, false],
  })
  expect(Object.keys(await buckets('day'))).toEqual(expect.arrayContaining(['2026-02-01T00 chain.blocks']))
  expect(Object.keys(await buckets('day')).some(key => key.startsWith('2026-01'))).toBe(false)
})

test('writers folding at once take turns: the buckets are those of one fold', async () => {
  await DELETE.from('analytics.MetricBuckets')
  await DELETE.from('analytics.BucketWriterState')
  const outcomes = await Promise.all([foldChain(chainBSource, Date.now(), { from: 0 }), foldChain(chainBSource, Date.now(), { from: 0 }), foldChain(chainBSource, Date.now(), { from: 0 })])
  expect(outcomes.map(outcome => outcome.foldedHeight)).toEqual([2, 2, 2])
  const once = await buckets('hour')
  await foldChain(chainBSource, Date.now(), { from: 0 })
  expect(await buckets('hour')).toEqual(once)
  expect(once['2026-02-01T08 tx.count']).toEqual([1, 1, null, null, false])
})
