import cds from '@sap/cds'
import { createHash } from 'node:crypto'
import { foldAll } from '../../srv/analytics/bucket-writer.ts'
import { compare } from '../../srv/analytics/windowed.ts'
import { concentration, rankings } from '../../srv/analytics/tables.ts'
import { getJson } from '../support/devnet.ts'
import { feeOf } from '../../devnet/chain-b/ledger.ts'
import { produceBlocks, reorg, runningChainB, waitFor } from '../support/chain-b.ts'
import { growChain, runningDevnet } from '../support/chain-a.ts'

/**
 * Analytics over what the followers index from the running devnets: known transactions sent
 * through the services, blocks produced on request, then a reorg injected on chain B. Expected
 * figures are counted from what was sent and from the devnet's own ledger (the chain itself), never
 * from the index the figures are computed from. The 1h window is asked for two minutes from now, so
 * the minutes the blocks fall in are complete.
 */

// Both followers run, as in development: chain A's from genesis.
process.env.CHAIN_A_FOLLOWER_ENABLED = 'true'
process.env.CHAIN_A_FOLLOWER_START = 'genesis'
const { GET, POST } = cds.test(__dirname + '/../..')
afterAll(() => {
  delete process.env.CHAIN_A_FOLLOWER_ENABLED
  delete process.env.CHAIN_A_FOLLOWER_START
})
const bob = { auth: { username: 'bob', password: '' } }
const alice = { auth: { username: 'alice', password: '' } }
const LATER = () => Date.now() + 120_000
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** The chain-B devnet's own blocks since a height: regular transactions, their fees, authors. */
function chainBLedger(fromHeight: number) {
  const blocks = runningChainB().ledger.blocks.filter(block => block.height >= fromHeight)
  const regular = blocks.flatMap(block => block.transactions.filter(tx => tx.kind === 'RegularTransaction').map(tx => ({ block, tx })))
  const authors = new Map<string, number>()
  for (const block of blocks) authors.set(block.author, (authors.get(block.author) ?? 0) + 1)
  return { blocks: blocks.length, regular: regular.length, fees: regular.reduce((sum, { block, tx }) => sum + Number(feeOf(tx.body, block.parameters)), 0), authors }
}

async function indexedChainB() {
  const tip = runningChainB().ledger.tip
  await waitFor(async () => {
    const sync = await cds.ql.SELECT.one.from('chainb.SyncState').where({ ID: 'chain-b' })
    return sync?.indexedHeight === tip.height && sync.indexedHash === tip.hash
  }, { timeoutMs: 15_000, message: `chain B indexed to ${tip.height}` })
}

async function anchored(count: number) {
  const jobs = []
  for (let i = 0; i < count; i++) jobs.push((await POST('/odata/v4/chainb/anchorDocument', { sha256: sha256(`analytics document ${i} ${Date.now()}`) }, bob)).data.jobId)
  for (const jobId of jobs) {
    await waitFor(async () => {
      const { data } = await POST('/odata/v4/chainb/getJobStatus', { jobId }, bob)
      if (data.status === 'submitted' || data.status === 'queued') produceBlocks(1)
      return data.status === 'confirmed'
    }, { timeoutMs: 20_000, intervalMs: 50, message: `anchor job ${jobId} confirmed` })
  }
}

describe('chain B', () => {
  let startHeight: number

  beforeAll(async () => {
    startHeight = runningChainB().ledger.tip.height + 1
    await anchored(3)
    produceBlocks(2)
    await indexedChainB()
    await foldAll()
  })

  test('counts, fees and producers of the 1h window are the devnet\'s own', async () => {
    const expected = chainBLedger(startHeight)
    const figure = async (metric: string) => (await compare(metric, '1h', LATER())).chains.find(chain => chain.chain === 'chain-b')!.value
    // Blocks before the test's own (genesis, setup) fall in the same hour: count from the ledger since the window began.
    const windowStart = (await compare('chain.blocks', '1h', LATER())).windowStart
    const inWindow = chainBLedger(runningChainB().ledger.blocks.find(block => block.timestamp * 1000 >= Date.parse(windowStart))!.height)
    expect(await figure('contract.calls')).toBe(3)
    expect(await figure('chain.blocks')).toBe(inWindow.blocks)
    expect(await figure('tx.count')).toBe(inWindow.regular)
    expect(await figure('fee.total')).toBe(inWindow.fees)
    expect(await figure('producer.count')).toBe(inWindow.authors.size)
    expect(expected.regular).toBeGreaterThanOrEqual(3)
    // Blocks carry no epoch: the follower dates them with the indexer's current epoch info.
    expect(await figure('chain.epoch')).toBe(runningChainB().ledger.tip.epochNo)
    const epoch = runningChainB().ledger.tip.epochNo
    const epochAuthors = new Map<string, number>()
    for (const block of runningChainB().ledger.blocks.filter(block => block.epochNo === epoch)) epochAuthors.set(block.author, (epochAuthors.get(block.author) ?? 0) + 1)
    const snapshot = await cds.ql.SELECT.from('analytics.EpochSnapshots').where({ chain: 'chain-b', epoch, resource: 'producers' })
    expect(snapshot.map((row: any) => [row.entity, Number(row.value)]).sort()).toEqual([...epochAuthors].sort())
    const producers = await rankings('producers', '1h', 10, LATER())
    expect(producers.entries.filter(entry => entry.chain === 'chain-b').map(entry => [entry.entity, entry.value]).sort())
      .toEqual([...inWindow.authors].sort())
  })

  test('an injected reorg is followed, logged, and the buckets are folded again', async () => {
    const before = runningChainB().ledger.tip.height
    // Replace the last two blocks with three new ones (their transactions go back to the mempool).
    reorg(before - 2, { blocks: 3 })
    await indexedChainB()
    await foldAll()
    const { data } = await GET('/odata/v4/analytics/Reorgs?$filter=chain eq \'chain-b\'', alice)
    expect(data.value).toEqual([expect.objectContaining({ chain: 'chain-b', forkHeight: before - 1, blocksRolledBack: 2, cause: 'reorg' })])
    const hourly = await cds.ql.SELECT.from('analytics.MetricBuckets').where({ chain: 'chain-b', metric: 'chain.blocks', resolution: 'hour', dimension: '' })
    const ledgerBlocks = runningChainB().ledger.blocks
    const byHour = new Map<string, number>()
    for (const block of ledgerBlocks) {
      const hour = new Date(Math.floor(block.timestamp * 1000 / 3_600_000) * 3_600_000).toISOString()
      byHour.set(hour, (byHour.get(hour) ?? 0) + 1)
    }
    // Every hour's block count is the new chain's, one more than before the reorg in the last hour.
    expect(Object.fromEntries(hourly.map((row: any) => [new Date(row.bucketStart).toISOString(), Number(row.value)]))).toEqual(Object.fromEntries(byHour))
    expect((await compare('sync.reorgs', '1h', LATER())).chains.find(chain => chain.chain === 'chain-b')!.value).toBe(1)
  })
})

describe('chain A', () => {
  test('counts, fees, producers and mints of the 1h window are the devnet\'s own', async () => {
    const devnet = runningDevnet()
    const events = growChain(devnet, ['transfer', 'payTestWallet', 'mint', 'burn'], 2)
    for (let i = 0; i < 3; i++) devnet.produceBlock()
    const tip = devnet.ledger.tip
    await waitFor(async () => (await cds.ql.SELECT.one.from('chaina.SyncState').where({ ID: 'chain-a' }))?.indexedHash === tip.hash,
      { timeoutMs: 30_000, message: `chain A indexed to ${tip.height}` })
    await foldAll()
    // Blocks asked for faster than slots pass run ahead of the clock: ask from two minutes after the tip.
    const now = Math.max(Date.now(), tip.time * 1000) + 120_000
    const answer = await compare('tx.count', '1h', now)
    const [from, to] = [Date.parse(answer.windowStart), Date.parse(answer.windowEnd)]
    const blocks = devnet.ledger.blocks.filter(block => block.time * 1000 >= from && block.time * 1000 < to)
    const transactions = blocks.flatMap(block => block.txs.map(hash => devnet.ledger.txs.get(hash)!))
    const producers = new Map<string, number>()
    for (const block of blocks) producers.set(block.slotLeader, (producers.get(block.slotLeader) ?? 0) + 1)
    const figure = async (metric: string) => (await compare(metric, '1h', now)).chains.find(chain => chain.chain === 'chain-a')!.value

    expect(byChainA(answer)).toBe(transactions.length)
    expect(transactions.length).toBeGreaterThanOrEqual(events.length)
    expect(await figure('chain.blocks')).toBe(blocks.length)
    expect(await figure('fee.total')).toBe(transactions.reduce((sum, tx) => sum + Number(tx.fee), 0))
    expect(await figure('asset.mint_events')).toBe(transactions.reduce((sum, tx) => sum + tx.mint.size, 0))
    expect(await figure('asset.mint_events')).toBeGreaterThanOrEqual(4) // two mints and two burns sent
    expect(await figure('producer.count')).toBe(producers.size)
    const ranked = (await rankings('producers', '1h', 100, now)).entries.filter(entry => entry.chain === 'chain-a')
    expect(ranked.map(entry => [entry.entity, entry.value]).sort()).toEqual([...producers].sort())
  })

  test('the stake snapshot is the pools\' active stake as the devnet reports it', async () => {
    const { body: pools } = await getJson(runningDevnet(), '/pools/extended?count=100')
    const staked = (pools as { pool_id: string; active_stake: string }[]).filter(pool => BigInt(pool.active_stake) > 0n)
    const total = staked.reduce((sum, pool) => sum + Number(pool.active_stake), 0)
    const stake = (await concentration('stake', null)).chains.find(chain => chain.chain === 'chain-a')!
    expect(stake).toMatchObject({ basis: `stake at epoch ${runningDevnet().ledger.tip.epoch}`, entities: staked.length, total })
    const shares = staked.map(pool => Number(pool.active_stake) / total)
    expect(stake.hhi).toBeCloseTo(shares.reduce((sum, share) => sum + (100 * share) ** 2, 0), 9)
  })

  test('an injected reorg is followed, logged, and the buckets are folded again', async () => {
    const devnet = runningDevnet()
    const before = devnet.ledger.tip.height
    devnet.rollBack(2)
    for (let i = 0; i < 3; i++) devnet.produceBlock()
    const tip = devnet.ledger.tip
    await waitFor(async () => (await cds.ql.SELECT.one.from('chaina.SyncState').where({ ID: 'chain-a' }))?.indexedHash === tip.hash,
      { timeoutMs: 30_000, message: `chain A indexed to ${tip.height}` })
    await foldAll()
    const { data } = await GET("/odata/v4/analytics/Reorgs?$filter=chain eq 'chain-a'", alice)
    expect(data.value).toEqual([expect.objectContaining({ forkHeight: before - 1, blocksRolledBack: 2, cause: 'reorg' })])
    const hourly = await cds.ql.SELECT.from('analytics.MetricBuckets').where({ chain: 'chain-a', metric: 'chain.blocks', resolution: 'hour', dimension: '' })
    const byHour = new Map<string, number>()
    for (const block of devnet.ledger.blocks) {
      const hour = new Date(Math.floor(block.time / 3600) * 3_600_000).toISOString()
      byHour.set(hour, (byHour.get(hour) ?? 0) + 1)
    }
    expect(Object.fromEntries(hourly.map((row: any) => [new Date(row.bucketStart).toISOString(), Number(row.value)]))).toEqual(Object.fromEntries(byHour))
  })
})

const byChainA = (answer: { chains: { chain: string; value: number | null }[] }) => answer.chains.find(chain => chain.chain === 'chain-a')!.value
