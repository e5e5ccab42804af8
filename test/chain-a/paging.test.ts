import { BlockfrostAdapter } from '../../srv/chains/chain-a/blockfrost.ts'
import { sendJson, sendUpstreamError, startTestServer, upstreamConfig, type RecordedRequest, type TestServer } from './support/test-server.ts'

/* Collections larger than one upstream page (Blockfrost pages hold at most 100 rows). */

const ADDRESS = 'addr_test1qpaging'
const UTXO_COUNT = 250
const TX_COUNT = 250
const hex64 = (n: number) => n.toString(16).padStart(64, '0')

const utxo = (n: number) => ({
  address: ADDRESS,
  tx_hash: hex64(n),
  tx_index: 0,
  output_index: n % 3,
  amount: [{ unit: 'lovelace', quantity: String(1_000_000 + n) }],
  block: hex64(100_000 + n),
  data_hash: null,
  inline_datum: null,
  reference_script_hash: null,
})
// Transaction n was made at height n; the oldest is 1.
const addressTx = (n: number) => ({ tx_hash: hex64(n), tx_index: 0, block_height: n, block_time: 1_700_000_000 + n * 20 })

function page<T>(rows: T[], request: RecordedRequest): T[] {
  const count = Number(request.query.get('count') ?? 100)
  const number = Number(request.query.get('page') ?? 1)
  const ordered = request.query.get('order') === 'desc' ? [...rows].reverse() : rows
  return ordered.slice((number - 1) * count, number * count)
}

const utxos = Array.from({ length: UTXO_COUNT }, (_, i) => utxo(i + 1))
const txs = Array.from({ length: TX_COUNT }, (_, i) => addressTx(i + 1))

let server: TestServer
let adapter: BlockfrostAdapter

beforeAll(async () => {
  server = await startTestServer((request, response) => {
    if (request.path === `/addresses/${ADDRESS}/utxos`) return sendJson(response, 200, page(utxos, request))
    if (request.path === `/addresses/${ADDRESS}/transactions`) return sendJson(response, 200, page(txs, request))
    sendUpstreamError(response, 404, 'The requested component has not been found.')
  })
  adapter = new BlockfrostAdapter(upstreamConfig({ url: server.url }))
})
afterAll(() => server.close())
beforeEach(() => server.requests.splice(0))

const pageQueries = () => server.requests.map(r => ({ page: r.query.get('page'), count: r.query.get('count') }))

it('reads every page of an address with 250 utxos', async () => {
  const all = await adapter.addressUtxos(ADDRESS)
  expect(all).toHaveLength(UTXO_COUNT)
  expect(new Set(all.map(u => u.txHash)).size).toBe(UTXO_COUNT)
  expect(all[249]).toMatchObject({ txHash: hex64(250), lovelace: '1000250', assets: [] })
  expect(pageQueries()).toEqual([
    { page: '1', count: '100' },
    { page: '2', count: '100' },
    { page: '3', count: '100' },
  ])
})

it('stops after a full last page when the next one is empty', async () => {
  const exact = await startTestServer((request, response) => sendJson(response, 200, page(utxos.slice(0, 200), request)))
  try {
    const all = await new BlockfrostAdapter(upstreamConfig({ url: exact.url })).addressUtxos(ADDRESS)
    expect(all).toHaveLength(200)
    expect(exact.requests.map(r => r.query.get('page'))).toEqual(['1', '2', '3'])
  } finally {
    await exact.close()
  }
})

it('reads exactly two pages for the newest 150 transactions, newest first', async () => {
  const newest = await adapter.addressTransactions(ADDRESS, 150)
  expect(newest).toHaveLength(150)
  expect(newest[0]).toEqual({ txHash: hex64(250), txIndex: 0, blockHeight: 250, blockTime: 1_700_000_000 + 250 * 20 })
  expect(newest[149].blockHeight).toBe(101)
  expect(newest.every((tx, i) => i === 0 || tx.blockHeight < newest[i - 1].blockHeight)).toBe(true)
  expect(server.requests).toHaveLength(2)
  expect(server.requests.every(r => r.query.get('order') === 'desc')).toBe(true)
  expect(pageQueries().sort((a, b) => Number(a.page) - Number(b.page))).toEqual([
    { page: '1', count: '100' },
    { page: '2', count: '100' },
  ])
})

it('asks for one short page when the limit fits in it', async () => {
  const newest = await adapter.addressTransactions(ADDRESS, 5)
  expect(newest.map(tx => tx.blockHeight)).toEqual([250, 249, 248, 247, 246])
  expect(pageQueries()).toEqual([{ page: '1', count: '5' }])
})

it('stops after the first page when the address has fewer transactions than the limit', async () => {
  const few = await startTestServer((request, response) => sendJson(response, 200, page(txs.slice(0, 30), request)))
  try {
    const newest = await new BlockfrostAdapter(upstreamConfig({ url: few.url })).addressTransactions(ADDRESS, 500)
    expect(newest).toHaveLength(30)
    expect(newest[0].blockHeight).toBe(30)
    expect(few.requests).toHaveLength(1)
  } finally {
    await few.close()
  }
})

it('answers no transactions for a limit of 0 without calling the upstream', async () => {
  expect(await adapter.addressTransactions(ADDRESS, 0)).toEqual([])
  expect(server.requests).toHaveLength(0)
})
