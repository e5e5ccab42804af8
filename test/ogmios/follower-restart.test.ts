import cds from '@sap/cds'
import { Blocks, ReorgLog_, SyncState_ } from '#cds-models/chaina'
import { ChainAFollower } from '../../srv/chaina-odata/follower.ts'
import { chainAIndex } from '../../srv/chaina-odata/service.ts'
import { chainA } from '../../srv/chains/chain-a/index.ts'
import { OgmiosAdapter } from '../../srv/chains/chain-a/ogmios.ts'
import type { ChainAPort } from '../../srv/chains/chain-a/port.ts'
import type { ChainADevnet } from '../../devnet/chain-a/index.ts'
import { runningDevnet } from '../support/chain-a.ts'

// The ogmios kind keeps its chain index in memory, so a restart begins it again at OGMIOS_SYNC_FROM
// (the node's tip in production). The follower resumes its read index further back: it tells the
// new index where it stands, and the blocks made while the server was down are indexed all the same.
// What neither index holds is answered 404 saying how far back the chain index reaches.
process.env.CHAIN_A_KIND = 'ogmios'
process.env.CHAIN_A_FOLLOWER_ENABLED = 'false'
const { GET, POST, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }

const { SELECT, DELETE } = cds.ql

let devnet: ChainADevnet
const followers: ChainAFollower[] = []
const adapters: OgmiosAdapter[] = []
let chain: { adapter?: ChainAPort; settings: ConstructorParameters<typeof OgmiosAdapter>[0] }

async function follower(instanceId: string): Promise<ChainAFollower> {
  const made = new ChainAFollower({ chain: await chainA(), index: chainAIndex(), settings: { batchSize: 4, start: { kind: 'genesis' } }, instanceId })
  followers.push(made)
  return made
}

beforeAll(async () => {
  devnet = runningDevnet()
  chain = (await chainA()) as unknown as typeof chain
  for (let i = 0; i < 5; i++) devnet.produceBlock()
  await DELETE.from(SyncState_)
  await DELETE.from(ReorgLog_)
})
afterAll(async () => {
  for (const made of followers) await made.stop()
  for (const adapter of adapters) await adapter.close()
  delete process.env.CHAIN_A_KIND
})

test('after a restart, the follower resumes where its read index stands, though the new chain index began at the tip', async () => {
  const first = await follower('before-restart')
  expect(await first.runNow()).toBe('synced')
  await first.stop()
  const indexedHeight = devnet.ledger.tip.height

  // The server is down while the node makes blocks; it starts again with an index that begins at the tip.
  for (let i = 0; i < 4; i++) devnet.produceBlock()
  const restarted = new OgmiosAdapter({ ...chain.settings, ogmiosSyncFrom: 'tip' })
  adapters.push(restarted)
  chain.adapter = restarted

  expect(await (await follower('after-restart')).runNow()).toBe('synced')
  const indexed = await SELECT.from(Blocks).columns('height', 'hash').where({ height: { '>': indexedHeight } }).orderBy('height')
  expect(indexed).toEqual(devnet.ledger.blocks.slice(indexedHeight + 1).map(block => ({ height: block.height, hash: block.hash })))
  expect(await SELECT.one.from(SyncState_)).toMatchObject({ indexedHeight: devnet.ledger.tip.height, indexedHash: devnet.ledger.tip.hash, status: 'synced' })
})

/** The answer of a request, an error status included. */
const answerOf = (promise: Promise<any>) => promise.then(response => response, error => error.response)

test('a transaction neither index holds is 404, saying how far back the chain index reaches', async () => {
  const hash = 'ab'.repeat(32)
  const read = await answerOf(GET(`/odata/v4/chaina-odata/Transactions('${hash}')`))
  expect(read.status).toBe(404)
  expect(read.data.error).toMatchObject({ code: 'TRANSACTION_NOT_FOUND', message: expect.stringMatching(/the chain index of the ogmios kind holds blocks from height \d+ \(slot \d+\) on/) })
  const action = await answerOf(POST('/odata/v4/chaina-odata/GetTransactionByHash', { hash }))
  expect(action.data.error).toMatchObject({ code: 'TRANSACTION_NOT_FOUND', message: expect.stringMatching(/is not on chain \(the chain index of the ogmios kind holds blocks from height/) })
})
