import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import type { ChainADevnet } from '../../devnet/chain-a/index.ts'
import { getJson, startDevnet } from '../support/devnet.ts'

/** Blockfrost's paging parameters and error shapes. */

let devnet: ChainADevnet
const enterpriseAddress = (network: number) =>
  CSL.EnterpriseAddress.new(network, CSL.Credential.from_keyhash(CSL.PrivateKey.from_normal_bytes(Buffer.alloc(32, 3)).to_public().hash())).to_address().to_bech32()
const NOT_FOUND = { status_code: 404, error: 'Not Found', message: 'The requested component has not been found.' }

beforeAll(async () => {
  devnet = await startDevnet({ seed: 'paging-test' })
  for (let i = 0; i < 30; i++) devnet.produceBlock()
})
afterAll(() => devnet.stop())

describe('paging', () => {
  const epochBlocks = () => devnet.ledger.epochs.get(0)!.blocks

  it('defaults to 100 items of page 1 in ascending order', async () => {
    expect((await getJson(devnet, '/epochs/0/blocks')).body).toEqual(epochBlocks().slice(0, 100))
  })

  it('pages with count and page', async () => {
    expect((await getJson(devnet, '/epochs/0/blocks?count=7&page=2')).body).toEqual(epochBlocks().slice(7, 14))
    expect((await getJson(devnet, '/epochs/0/blocks?count=100&page=9')).body).toEqual([])
  })

  it('reverses the whole list for order=desc before paging', async () => {
    expect((await getJson(devnet, '/epochs/0/blocks?count=5&order=desc')).body).toEqual([...epochBlocks()].reverse().slice(0, 5))
  })

  it('pages blocks after and before a block', async () => {
    const blocks = devnet.ledger.blocks
    expect((await getJson(devnet, '/blocks/10/next?count=3&page=2')).body.map((b: any) => b.height)).toEqual([14, 15, 16])
    expect((await getJson(devnet, `/blocks/${blocks[10].hash}/previous?count=3`)).body.map((b: any) => b.height)).toEqual([7, 8, 9])
  })

  it.each([
    ['count=0', 'querystring/count must be >= 1'],
    ['count=101', 'querystring/count must be <= 100'],
    ['count=ten', 'querystring/count must be integer'],
    ['page=0', 'querystring/page must be >= 1'],
    ['page=21474837', 'querystring/page must be <= 21474836'],
    ['order=up', 'querystring/order must be equal to one of the allowed values: asc, desc'],
  ])('answers 400 for %s', async (query, message) => {
    expect(await getJson(devnet, `/pools?${query}`)).toEqual({ status: 400, body: { status_code: 400, error: 'Bad Request', message } })
  })
})

describe('errors', () => {
  it('answers 404 for unknown routes and unknown components', async () => {
    for (const path of ['/no/such/route', '/blocks/999999', `/blocks/${'0'.repeat(64)}`, `/txs/${'0'.repeat(64)}`, '/epochs/999', `/assets/${'ab'.repeat(28)}`]) {
      expect(await getJson(devnet, path)).toEqual({ status: 404, body: NOT_FOUND })
    }
  })

  it('answers 404 for a well-formed address that has never been used', async () => {
    const unused = enterpriseAddress(0)
    expect(await getJson(devnet, `/addresses/${unused}`)).toEqual({ status: 404, body: NOT_FOUND })
  })

  it.each([
    ['/txs/xyz', 'Invalid or malformed transaction hash.'],
    ['/blocks/not-a-block', 'Invalid or malformed block hash or number.'],
    ['/addresses/addr_test1qqqq', 'Invalid address for this network.'],
    ['/accounts/stake_test1xyz', 'Invalid or malformed stake address.'],
    ['/pools/pool1nope', 'Invalid or malformed pool id.'],
    ['/governance/dreps/drep1nope', 'Invalid or malformed DRep id.'],
    ['/assets/xyz', 'Invalid or malformed asset format.'],
    ['/epochs/latest-but-one', 'Invalid or malformed epoch number.'],
  ])('answers 400 for malformed %s', async (path, message) => {
    expect(await getJson(devnet, path)).toEqual({ status: 400, body: { status_code: 400, error: 'Bad Request', message } })
  })

  it('answers 400 for an address of another network', async () => {
    expect((await getJson(devnet, `/addresses/${enterpriseAddress(1)}`)).body.message).toBe('Invalid address for this network.')
  })

  it('counts the requests it serves per path', async () => {
    devnet.resetRequestCounts()
    const hash = devnet.ledger.blocks[1].hash
    await getJson(devnet, `/blocks/${hash}`)
    await getJson(devnet, `/blocks/${hash}`)
    await getJson(devnet, '/health')
    expect(devnet.requestCount(`/blocks/${hash}`)).toBe(2)
    expect(devnet.requestCount('/blocks')).toBe(2)
    expect(devnet.requestCount()).toBe(3)
  })
})
