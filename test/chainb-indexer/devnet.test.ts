import cds from '@sap/cds'
import { Blocks, ReorgLog, Transactions } from '#cds-models/chainb'
import type { ChainBIndexerService } from '../../srv/chainb-indexer/service.ts'
import { chainB } from '../../srv/chains/chain-b/index.ts'
import { embeddedDevnet } from '../../devnet/chain-b/embedded.ts'
import type { ChainBDevnet } from '../../devnet/chain-b/index.ts'
import type { ChainBPort } from '../../srv/chains/chain-b/port.ts'
import { CHAINB, INDEXER } from './support.ts'

// The follower the indexer service starts, against the embedded chain-B devnet through the real
// adapter: what it indexes equals what the devnet answers; a reorg injected on the devnet is
// followed, logged, and the service reads show the new chain.
const { GET, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'bob', password: '' }
defaults.validateStatus = () => true

const { SELECT } = cds.ql
const KINDS = ['unshielded', 'shielded', 'vault', 'vaultFailure', 'partial', 'system'] as const

let devnet: ChainBDevnet
let port: ChainBPort
let indexer: ChainBIndexerService

beforeAll(async () => {
  devnet = embeddedDevnet()!
  port = (await chainB()).port
  indexer = (await cds.connect.to('ChainBIndexerService')) as unknown as ChainBIndexerService
})

/** `count` blocks, each after one transaction of the next kind in turn. */
function produceBlocksWithActivity(count: number) {
  for (let i = 0; i < count; i++) {
    devnet.activity.round(KINDS[i % KINDS.length])
    devnet.produceBlock()
  }
}

async function waitFor<T>(probe: () => Promise<T>, done: (value: T) => boolean, ms = 10_000): Promise<T> {
  const until = Date.now() + ms
  for (;;) {
    const value = await probe()
    if (done(value) || Date.now() > until) return value
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

const tipHeight = () => devnet.ledger.tip.height
const syncStatus = async () => (await GET(`${INDEXER}/getSyncStatus()`)).data

/** Every block from genesis to the tip equals the devnet's answer, with its transactions. */
async function expectIndexEqualsDevnet() {
  const indexed = await SELECT.from(Blocks).orderBy('height') as any[]
  expect(indexed.map(block => block.height)).toEqual(Array.from({ length: tipHeight() + 1 }, (_, i) => i))
  for (const row of indexed) {
    const block = (await port.block({ height: row.height }))!
    expect(row).toMatchObject({ hash: block.hash, parentHash: block.parentHash, author: block.author, protocolVersion: block.protocolVersion, txCount: block.transactions.length })
    const txs = await SELECT.from(Transactions).where({ block_hash: block.hash }).orderBy('transactionId') as any[]
    expect(txs.map(tx => [tx.hash, tx.transactionId, tx.status, tx.paidFees, tx.isShielded])).toEqual(
      [...block.transactions].sort((a, b) => a.id - b.id).map(tx => [tx.hash, tx.id, tx.result?.status ?? null, tx.fees?.paidFees ?? null, tx.zswapLedgerEvents > 0]),
    )
  }
}

test('the service runs a follower that indexes the devnet; blocks and transactions equal the devnet\'s answers', async () => {
  expect(indexer.follower).toBeDefined()
  produceBlocksWithActivity(12)
  expect(await indexer.follower!.runNow()).toBe('synced')
  await expectIndexEqualsDevnet()
  const status = await syncStatus()
  expect(status).toMatchObject({ network: 'devnet', chainHeight: tipHeight(), indexedHeight: tipHeight(), lagBlocks: 0, status: 'synced' })
  expect(status.finalizedHeight).toBe(tipHeight() - (await chainB()).settings.finalityDepth)
  const counters = (await GET(`${INDEXER}/getCounters()`)).data
  expect(counters.shieldedTransactions).toBeGreaterThan(0)
  expect(counters.contractCalls).toBeGreaterThan(0)
})

test('new blocks are indexed as the subscription announces them, without a run asked for', async () => {
  await indexer.follower!.runNow()
  produceBlocksWithActivity(3)
  const status = await waitFor(syncStatus, value => value.indexedHeight === tipHeight())
  expect(status).toMatchObject({ indexedHeight: tipHeight(), indexedHash: devnet.ledger.tip.hash })
})

test('a reorg on the devnet: logged, the replaced rows gone, the new chain indexed and read through the service', async () => {
  produceBlocksWithActivity(6)
  await indexer.follower!.runNow()
  const forkAfter = tipHeight() - 4
  const replaced = (await SELECT.from(Blocks).columns('hash').where({ height: { '>': forkAfter } }) as any[]).map(row => row.hash)
  const replacedTxs = (await SELECT.from(Transactions).columns('hash').where({ blockHeight: { '>': forkAfter } }) as any[]).map(row => row.hash)
  const oldTip = devnet.ledger.tip.hash
  devnet.reorg(forkAfter, { drop: true, blocks: 2 })

  expect(await indexer.follower!.runNow()).toBe('synced')
  const [log] = await SELECT.from(ReorgLog).orderBy('detectedAt desc').limit(1) as any[]
  expect(log).toMatchObject({ forkHeight: forkAfter + 1, oldTipHash: oldTip, newTipHash: devnet.ledger.tip.hash, blocksRolledBack: 4, cause: 'reorg' })
  expect(await SELECT.from(Blocks).where({ hash: { in: replaced } })).toEqual([])
  if (replacedTxs.length) expect(await SELECT.from(Transactions).where({ hash: { in: replacedTxs } })).toEqual([])
  await expectIndexEqualsDevnet()

  const tip = (await GET(`${CHAINB}/Blocks?$orderby=height desc&$top=1&$select=hash,height`)).data.value
  expect(tip).toEqual([{ hash: devnet.ledger.tip.hash, height: tipHeight() }])
  expect((await GET(`${INDEXER}/getReorgHistory(limit=1)`)).data.value).toEqual([expect.objectContaining({ forkHeight: forkAfter + 1, cause: 'reorg' })])
})

test('a reorg that keeps the transactions moves them to the new blocks', async () => {
  produceBlocksWithActivity(3)
  await indexer.follower!.runNow()
  const forkAfter = tipHeight() - 2
  devnet.reorg(forkAfter)
  expect(await indexer.follower!.runNow()).toBe('synced')
  await expectIndexEqualsDevnet()
})

test('readiness: the database, the crawler and the devnet answer; liveness names this instance', async () => {
  await indexer.follower!.runNow()
  expect((await GET(`${INDEXER}/getReadiness()`)).data).toMatchObject({ ready: true, crawlerEnabled: true, checks: { database: true, crawler: true, node: true }, instanceId: indexer.follower!.instanceId })
  expect((await GET(`${INDEXER}/getLiveness()`)).data).toMatchObject({ status: 'alive', instanceId: indexer.follower!.instanceId })
})
