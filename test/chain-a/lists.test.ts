import { BlockfrostAdapter } from '../../srv/chains/chain-a/blockfrost.ts'
import type { ListPage } from '../../srv/chains/chain-a/port.ts'
import { bodyFor, startOpenApiServer } from './support/openapi-server.ts'
import { sendUpstreamError, startTestServer, upstreamConfig, type TestServer } from './support/test-server.ts'

/* The list reads of the port against answers synthesised from the Blockfrost OpenAPI schemas. */

type Json = Record<string, any>

let server: TestServer
let adapter: BlockfrostAdapter

beforeAll(async () => {
  server = await startOpenApiServer()
  adapter = new BlockfrostAdapter(upstreamConfig({ url: server.url }))
})
afterAll(() => server.close())
beforeEach(() => server.requests.splice(0))

const list = (path: string) => bodyFor(path) as Json[]
const PAGE: ListPage = { page: 3, order: 'desc' }
/** The one request a read made: its path and paging query. */
const asked = () => server.requests.map(r => ({ path: r.path, query: Object.fromEntries(r.query) }))
const paged = (path: string) => [{ path, query: { page: '3', count: '100', order: 'desc' } }]

describe('list reads map each page and ask for it by count, page and order', () => {
  const cases: [string, () => Promise<unknown>, string, () => unknown][] = [
    ['pools', () => adapter.pools(PAGE), '/pools/extended', () => list('/pools/extended').map(p => ({
      poolId: p.pool_id, hex: p.hex, activeStake: p.active_stake, liveStake: p.live_stake, liveSaturation: p.live_saturation,
      blocksMinted: p.blocks_minted, declaredPledge: p.declared_pledge, marginCost: p.margin_cost, fixedCost: p.fixed_cost,
      ticker: p.metadata.ticker, name: p.metadata.name, homepage: p.metadata.homepage, description: p.metadata.description,
    }))],
    ['dreps', () => adapter.dreps(PAGE), '/governance/dreps', () => list('/governance/dreps').map(d => ({
      drepId: d.drep_id, hex: d.hex, amount: d.amount, hasScript: d.has_script, retired: d.retired, expired: d.expired, lastActiveEpoch: d.last_active_epoch,
    }))],
    ['block transactions', () => adapter.blockTransactions('ab'.repeat(32), PAGE), `/blocks/${'ab'.repeat(32)}/txs`, () => bodyFor('/blocks/x/txs')],
    ['block transactions by height', () => adapter.blockTransactions(42, PAGE), '/blocks/42/txs', () => bodyFor('/blocks/x/txs')],
    ['epoch blocks', () => adapter.epochBlocks(7, PAGE), '/epochs/7/blocks', () => bodyFor('/epochs/7/blocks')],
    ['address transactions', () => adapter.addressTransactionPage('addr1x', PAGE), '/addresses/addr1x/transactions', () => list('/addresses/x/transactions').map(t => ({
      txHash: t.tx_hash, txIndex: t.tx_index, blockHeight: t.block_height, blockTime: t.block_time,
    }))],
    ['asset history', () => adapter.assetHistoryPage('ab'.repeat(28), PAGE), `/assets/${'ab'.repeat(28)}/history`, () => list('/assets/x/history').map(h => ({
      txHash: h.tx_hash, action: h.action, amount: h.amount,
    }))],
    ['pool delegators', () => adapter.poolDelegators('pool1x', PAGE), '/pools/pool1x/delegators', () => list('/pools/x/delegators').map(d => ({ stakeAddress: d.address, amount: d.live_stake }))],
    ['DRep delegators', () => adapter.drepDelegators('drep1x', PAGE), '/governance/dreps/drep1x/delegators', () => list('/governance/dreps/x/delegators').map(d => ({ stakeAddress: d.address, amount: d.amount }))],
    ['account addresses', () => adapter.accountAddresses('stake1x', PAGE), '/accounts/stake1x/addresses', () => list('/accounts/x/addresses').map(a => a.address)],
  ]

  test.each(cases)('%s', async (_, read, path, expected) => {
    const answer = await read()
    expect(answer).toEqual(expected())
    expect((answer as unknown[]).length).toBeGreaterThan(0)
    expect(asked()).toEqual(paged(path))
  })
})

describe('runs of epochs and blocks are read as one page after their predecessor', () => {
  test('epochs after an epoch', async () => {
    const epochs = await adapter.epochsAfter(224, 3)
    expect(epochs.map(e => e.epoch)).toEqual(list('/epochs/1/next').map(e => e.epoch))
    expect(asked()).toEqual([{ path: '/epochs/224/next', query: { page: '1', count: '3' } }])
  })

  test('blocks after a height, never more than a page', async () => {
    const blocks = await adapter.blocksAfter(100, 250)
    expect(blocks.map(b => b.hash)).toEqual(list('/blocks/1/next').map(b => b.hash))
    expect(asked()).toEqual([{ path: '/blocks/100/next', query: { page: '1', count: '100' } }])
  })
})

describe('a list of something the upstream does not know', () => {
  let missing: TestServer
  let strict: BlockfrostAdapter
  beforeAll(async () => {
    missing = await startTestServer((_, response) => sendUpstreamError(response, 404, 'The requested component has not been found.'))
    strict = new BlockfrostAdapter(upstreamConfig({ url: missing.url }))
  })
  afterAll(() => missing.close())

  test.each([
    ['block transactions', () => strict.blockTransactions('ab'.repeat(32), PAGE), null],
    ['epoch blocks', () => strict.epochBlocks(9999, PAGE), null],
    ['asset history', () => strict.assetHistoryPage('ab'.repeat(28), PAGE), null],
    ['pool delegators', () => strict.poolDelegators('pool1x', PAGE), null],
    ['DRep delegators', () => strict.drepDelegators('drep1x', PAGE), null],
    ['account addresses', () => strict.accountAddresses('stake1x', PAGE), null],
    ['address transactions (an unused address has none)', () => strict.addressTransactionPage('addr1x', PAGE), []],
    ['epochs past the current one', () => strict.epochsAfter(9999, 10), []],
    ['blocks past the tip', () => strict.blocksAfter(99_999_999, 10), []],
  ] as [string, () => Promise<unknown>, unknown][])('%s', async (_, read, expected) => {
    expect(await read()).toEqual(expected)
  })
})
