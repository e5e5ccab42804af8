import cds from '@sap/cds'
import { runningDevnet, growChain, bury } from '../support/chain-a.ts'
import { chainA } from '../../srv/chains/chain-a/index.ts'

// Zero TTLs: every read of mutable data asks the upstream again, so refresh and immutability show.
process.env.CHAIN_A_TTL_TIP = '0'
process.env.CHAIN_A_TTL_TRANSACTION = '0'
process.env.CHAIN_A_TTL_ADDRESS = '0'

const { GET, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }
defaults.validateStatus = () => true

const SERVICE = '/odata/v4/chaina-odata'
let devnet: ReturnType<typeof runningDevnet>

beforeAll(() => {
  devnet = runningDevnet()
})

afterAll(() => {
  delete process.env.CHAIN_A_TTL_TIP
  delete process.env.CHAIN_A_TTL_TRANSACTION
  delete process.env.CHAIN_A_TTL_ADDRESS
})

test('the tip follows the chain once its TTL has passed', async () => {
  const before = await GET(`${SERVICE}/Blocks?$orderby=height desc&$top=1&$select=hash,height`)
  const block = devnet.produceBlock()
  const after = await GET(`${SERVICE}/Blocks?$orderby=height desc&$top=1&$select=hash,height`)
  expect(after.data.value[0]).toEqual({ hash: block.hash, height: before.data.value[0].height + 1 })
})

test('a recent transaction is fetched again after its TTL; once deeper than k, never again', async () => {
  const [event] = growChain(devnet, ['transfer']).filter(e => e.kind === 'transfer')
  const path = `${SERVICE}/Transactions('${event.txHash}')`
  await GET(path)
  devnet.resetRequestCounts()
  await GET(path)
  expect(devnet.requestCount(`/txs/${event.txHash}`)).toBe(3)

  bury(devnet, 10)
  await GET(path)
  devnet.resetRequestCounts()
  await GET(path)
  await GET(`${SERVICE}/TransactionOutputs?$filter=txHash eq '${event.txHash}'`)
  expect(devnet.requestCount(`/txs/${event.txHash}`)).toBe(0)
})

test('an address shows a new UTxO after its TTL', async () => {
  const wallet = devnet.wallets()[0]
  const before = await GET(`${SERVICE}/AddressUTxOs?$filter=address eq '${wallet.address}'&$count=true&$top=0`)
  const paid = growChain(devnet, ['payTestWallet']).filter(e => e.kind === 'payTestWallet')
  const expected = devnet.ledger.unspentAt(wallet.address).length
  const after = await GET(`${SERVICE}/AddressUTxOs?$filter=address eq '${wallet.address}'&$count=true&$top=0`)
  expect(after.data['@odata.count']).toBe(expected)
  expect(paid.length).toBeGreaterThan(0)
  expect(before.data['@odata.count']).toBeLessThanOrEqual(expected)
})

test('a cache filled from another chain is purged when the upstream chain changes', async () => {
  await GET(`${SERVICE}/Blocks?$orderby=height desc&$top=1`)
  const { Blocks } = cds.entities('chaina')
  // As if the chain recorded at start had been another one: the next check of the upstream tells.
  await cds.tx(() => UPDATE(cds.entities('chainatx').NetworkParametersCache).set({ networkMagic: 4242 }))
  expect(await (await chainA()).verifyUpstream()).toMatchObject({ previous: { networkMagic: 4242 }, current: { network: 'devnet', networkMagic: 42 } })
  const remaining = await SELECT.one.from(Blocks).columns('count(*) as blocks')
  expect(remaining.blocks).toBe(0)
  const tip = await GET(`${SERVICE}/Blocks?$orderby=height desc&$top=1`)
  expect(tip.data.value[0].hash).toBe(devnet.ledger.tip.hash)
})

test('when the upstream is gone, cached data is still served and misses answer 503', async () => {
  const wallet = devnet.wallets()[1]
  const pool = [...devnet.ledger.pools.values()][0]
  await GET(`${SERVICE}/Pools('${pool.id}')`)
  await devnet.stop()
  const cached = await GET(`${SERVICE}/Pools('${pool.id}')?$select=ticker`)
  const miss = await GET(`${SERVICE}/Addresses('${wallet.address}')`)
  expect(cached.data.ticker).toBe(pool.metadata.ticker)
  expect(miss.data.error.code).toBe('UPSTREAM_UNAVAILABLE')
  expect(miss.status).toBe(503)
})
