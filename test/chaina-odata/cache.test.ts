import cds from '@sap/cds'
import { runningDevnet, growChain } from '../support/chain-a.ts'

// Default TTLs (tip 5 s, transactions 20 s): within them, reads never reach the upstream.
const { GET, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }

const SERVICE = '/odata/v4/chaina-odata'
let devnet: ReturnType<typeof runningDevnet>
let transfers: string[]

beforeAll(() => {
  devnet = runningDevnet()
  transfers = growChain(devnet, ['transfer'], 2).filter(event => event.kind === 'transfer').map(event => event.txHash!)
})

test('a warm keyed read makes no upstream call', async () => {
  const hash = transfers[0]
  const cold = await GET(`${SERVICE}/Transactions('${hash}')`)
  devnet.resetRequestCounts()
  const warm = await GET(`${SERVICE}/Transactions('${hash}')`)
  expect(warm.data).toEqual(cold.data)
  expect(devnet.requestCount()).toBe(0)
})

test('100 concurrent misses of one key make one upstream call', async () => {
  const hash = transfers[1]
  devnet.resetRequestCounts()
  const answers = await Promise.all(Array.from({ length: 100 }, () => GET(`${SERVICE}/Transactions('${hash}')?$expand=outputs`)))
  expect(new Set(answers.map((answer: { data: unknown }) => JSON.stringify(answer.data))).size).toBe(1)
  expect(answers[0].data.hash).toBe(hash)
  // One port call reads /txs/<hash>, /txs/<hash>/utxos and /txs/<hash>/metadata once each.
  expect(devnet.requestCount(`/txs/${hash}`)).toBe(3)
})

test('the tip is served from the cache within its TTL', async () => {
  const first = await GET(`${SERVICE}/Blocks?$orderby=height desc&$top=1`)
  devnet.produceBlock()
  devnet.resetRequestCounts()
  const second = await GET(`${SERVICE}/Blocks?$orderby=height desc&$top=1`)
  expect(second.data.value[0].hash).toBe(first.data.value[0].hash)
  expect(devnet.requestCount('/blocks/latest')).toBe(0)
})

test('an address is read from the cache within its TTL', async () => {
  const wallet = devnet.wallets()[0]
  await GET(`${SERVICE}/Addresses('${wallet.address}')`)
  devnet.resetRequestCounts()
  await GET(`${SERVICE}/AddressUTxOs?$filter=address eq '${wallet.address}'`)
  await GET(`${SERVICE}/Addresses('${wallet.address}')?$expand=assets`)
  expect(devnet.requestCount()).toBe(0)
})
