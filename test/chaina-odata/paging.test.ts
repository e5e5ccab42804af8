import cds from '@sap/cds'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { chainAIndex } from '../../srv/chaina-odata/service.ts'
import { answerFromSchemas } from '../chain-a/support/openapi-server.ts'
import { sendJson, startTestServer, type RecordedRequest, type TestServer } from '../chain-a/support/test-server.ts'

/*
 * Lists longer than one upstream page (Blockfrost pages hold at most 100 items): a read fetches
 * the pages its answer window reaches, no more. The upstream is a Blockfrost look-alike with 250
 * pools and an address with 250 transactions; every other path answers from the OpenAPI schemas.
 */

const SIZE = 250
const hex = (n: number, bytes: number) => n.toString(16).padStart(bytes * 2, '0')
const keyHash = (n: number) => CSL.Ed25519KeyHash.from_hex(hex(n + 1, 28))
const ADDRESS = CSL.EnterpriseAddress.new(0, CSL.Credential.from_keyhash(keyHash(9999))).to_address().to_bech32()

// Pool n registered n-th; its live stake peaks in the middle of the list.
const pools = Array.from({ length: SIZE }, (_, n) => ({
  pool_id: keyHash(n).to_bech32('pool'),
  hex: keyHash(n).to_hex(),
  active_stake: String(1000 + n),
  live_stake: String(1_000_000 - (n - 125) ** 2),
  live_saturation: 0.5,
  blocks_minted: n,
  declared_pledge: '1000000',
  margin_cost: 0.01,
  fixed_cost: '340000000',
  metadata: { url: null, hash: null, ticker: `P${n}`, name: `Pool ${n}`, description: null, homepage: null },
}))
// Transaction n of the address was made at height n + 1.
const addressTxs = Array.from({ length: SIZE }, (_, n) => ({ tx_hash: hex(n + 1, 32), tx_index: 0, block_height: n + 1, block_time: 1_700_000_000 + n * 20 }))

function page<T>(rows: T[], request: RecordedRequest): T[] {
  const count = Number(request.query.get('count') ?? 100)
  const number = Number(request.query.get('page') ?? 1)
  const ordered = request.query.get('order') === 'desc' ? [...rows].reverse() : rows
  return ordered.slice((number - 1) * count, number * count)
}

let upstream: TestServer

beforeAll(async () => {
  upstream = await startTestServer((request, response) => {
    if (request.path === '/pools/extended') return sendJson(response, 200, page(pools, request))
    if (request.path === `/addresses/${ADDRESS}/transactions`) return sendJson(response, 200, page(addressTxs, request))
    answerFromSchemas(request, response)
  })
  process.env.BLOCKFROST_URL = upstream.url
})

const { GET, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }
defaults.validateStatus = () => true

afterAll(async () => {
  delete process.env.BLOCKFROST_URL
  await upstream.close()
})

const SERVICE = '/odata/v4/chaina-odata'

beforeEach(async () => {
  await cds.tx(() => chainAIndex().purge())
  upstream.requests.splice(0)
})

/** The pages the read asked of a list path, as `page/order`. */
const pagesOf = (path: string) => upstream.requests.filter(r => r.path === path).map(r => `${r.query.get('page')}/${r.query.get('order')}/${r.query.get('count')}`)

interface Case {
  name: string
  path: string
  list: string
  pages: string[]
  pick: (row: any) => unknown
  expected: unknown[]
}

const CASES: Case[] = [
  {
    name: 'the first pools: the first page',
    path: '/Pools?$select=poolId,ticker&$top=5',
    list: '/pools/extended',
    pages: ['1/asc/100'],
    pick: row => row.ticker,
    expected: ['P0', 'P1', 'P2', 'P3', 'P4'],
  },
  {
    name: 'pools skipped past the first page: the pages up to the window',
    path: '/Pools?$select=poolId,ticker&$skip=150&$top=3',
    list: '/pools/extended',
    pages: ['1/asc/100', '2/asc/100'],
    pick: row => row.ticker,
    expected: ['P150', 'P151', 'P152'],
  },
  {
    name: 'pools by live stake: every page, the list ends on a short one',
    path: '/Pools?$select=poolId,ticker,liveStake&$orderby=liveStake desc&$top=3',
    list: '/pools/extended',
    pages: ['1/asc/100', '2/asc/100', '3/asc/100'],
    pick: row => row.ticker,
    expected: ['P125', 'P124', 'P126'],
  },
  {
    name: 'the newest transactions of an address: the first page from the end',
    path: `/AddressTransactions?$filter=address eq '${ADDRESS}'&$orderby=blockHeight desc&$top=3`,
    list: `/addresses/${ADDRESS}/transactions`,
    pages: ['1/desc/100'],
    pick: row => row.blockHeight,
    expected: [250, 249, 248],
  },
  {
    name: 'older transactions of an address: the pages from the start up to the window',
    path: `/AddressTransactions?$filter=address eq '${ADDRESS}'&$skip=120&$top=3`,
    list: `/addresses/${ADDRESS}/transactions`,
    pages: ['1/asc/100', '2/asc/100'],
    pick: row => row.blockHeight,
    expected: [121, 122, 123],
  },
]

describe('a paged read fetches only the upstream pages its window reaches', () => {
  test.each(CASES.map(c => [c.name, c] as const))('%s', async (_, { path, list, pages, pick, expected }) => {
    const response = await GET(SERVICE + path)
    expect(response.data.error).toBeUndefined()
    expect(response.data.value.map(pick)).toEqual(expected)
    expect(pagesOf(list)).toEqual(pages)
  })
})

test('a count reads the whole list', async () => {
  const pools = await GET(`${SERVICE}/Pools/$count`)
  const txs = await GET(`${SERVICE}/AddressTransactions?$filter=address eq '${ADDRESS}'&$count=true&$top=0`)
  expect([pools.data, txs.data['@odata.count']]).toEqual([SIZE, SIZE])
  expect(pagesOf('/pools/extended')).toEqual(['1/asc/100', '2/asc/100', '3/asc/100'])
  expect(pagesOf(`/addresses/${ADDRESS}/transactions`)).toEqual(['1/asc/100', '2/asc/100', '3/asc/100'])
})

test('pages already read are not read again within their TTL', async () => {
  await GET(`${SERVICE}/Pools?$select=poolId&$skip=150&$top=3`)
  upstream.requests.splice(0)
  const response = await GET(`${SERVICE}/Pools?$select=ticker&$skip=198&$top=2`)
  expect(response.data.value.map((row: any) => row.ticker)).toEqual(['P198', 'P199'])
  expect(pagesOf('/pools/extended')).toEqual([])
})
