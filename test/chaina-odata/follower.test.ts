import cds from '@sap/cds'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  Blocks, IndexMarks, ReorgLog_, SyncState_, TransactionMetadata_, TransactionOutputAssets, TransactionOutputs, Transactions,
} from '#cds-models/chaina'
import { ChainAFollower } from '../../srv/chaina-odata/follower.ts'
import { followerSettings, parseStart, type FollowerSettings } from '../../srv/chaina-odata/follower-settings.ts'
import { ChainAIndex } from '../../srv/chaina-odata/indexer.ts'
import { chainAIndex } from '../../srv/chaina-odata/service.ts'
import { chainA } from '../../srv/chains/chain-a/index.ts'
import type { ChainADevnet } from '../../devnet/chain-a/index.ts'
import { createdOutputs } from '../../devnet/chain-a/types.ts'
import { growChain, runningDevnet } from '../support/chain-a.ts'
import { ADA, buildTx, largestUtxo } from '../support/devnet.ts'
import { startServer, type RunningServer } from '../support/server.ts'
import { onPostgres } from '../setup/postgres.ts'

// The chain-A follower against the embedded devnet through the real adapter: what it indexes equals
// what the devnet holds; it resumes, shares one lease among followers and server processes,
// follows a rollback on the devnet, and tip-near reads then answer from the index. The service's
// own follower stays off here: the tests run theirs.
process.env.CHAIN_A_FOLLOWER_ENABLED = 'false'
const { GET, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }

const { SELECT, UPDATE, DELETE } = cds.ql
const SERVICE = '/odata/v4/chaina-odata'

let devnet: ChainADevnet
let securityParam: number
const followers: ChainAFollower[] = []

async function follower(settings: Partial<FollowerSettings> = {}, instanceId?: string): Promise<ChainAFollower> {
  const made = new ChainAFollower({ chain: await chainA(), index: chainAIndex(), settings: { batchSize: 4, start: { kind: 'genesis' }, ...settings }, instanceId })
  followers.push(made)
  return made
}

beforeAll(async () => {
  devnet = runningDevnet()
  securityParam = (await (await chainA()).genesis()).securityParam
  growChain(devnet, ['transfer', 'payTestWallet', 'mint', 'message', 'metadata'])
  for (let i = 0; i < 3; i++) devnet.produceBlock()
})
beforeEach(async () => {
  await cds.tx(() => chainAIndex().purge())
  await DELETE.from(SyncState_)
  await DELETE.from(ReorgLog_)
})
afterEach(async () => {
  for (const made of followers.splice(0)) await made.stop()
})

const state = () => SELECT.one.from(SyncState_) as Promise<any>
const tip = () => devnet.ledger.tip
/** Every transaction the devnet included in blocks from the height on. */
const devnetTransactions = (from: number) => devnet.ledger.blocks.slice(from).flatMap(block => block.txs.map(hash => devnet.ledger.txs.get(hash)!))

/** A test wallet pays another 5 ADA; answers the transaction hash (in the mempool until a block is made). */
function transfer(from: string, to: string): string {
  const [payer, payee] = [devnet.walletKeys(from), devnet.walletKeys(to)]
  return devnet.submit(buildTx({ inputs: [largestUtxo(devnet, payer.address)], outputs: [{ address: payee.address, coin: 5n * ADA }], signers: [payer.payment] }))
}

/** The index holds exactly the devnet's blocks from the height on, each with its transactions, outputs, assets and metadata. */
async function expectIndexEqualsDevnet(from: number) {
  const blocks = devnet.ledger.blocks.slice(from)
  expect(await SELECT.from(Blocks).columns('hash', 'height', 'previousBlock', 'slot', 'txCount', 'fees').orderBy('height')).toEqual(blocks.map(block => ({
    hash: block.hash, height: block.height, previousBlock: block.previousBlock, slot: block.slot, txCount: block.txs.length, fees: block.txs.length ? String(block.fees) : null,
  })))
  const transactions = devnetTransactions(from)
  expect(await SELECT.from(Transactions).columns('hash', 'blockHash', 'blockHeight', 'txIndex', 'fee', 'hasMetadata').orderBy('blockHeight', 'txIndex')).toEqual(transactions.map(tx => ({
    hash: tx.hash, blockHash: tx.included.blockHash, blockHeight: tx.included.blockHeight, txIndex: tx.included.index, fee: String(tx.fee), hasMetadata: tx.metadata.length > 0,
  })))
  const outputs = await SELECT.from(TransactionOutputs).columns('txHash', 'outputIndex', 'address', 'lovelace') as any[]
  const expectedOutputs = transactions.flatMap(tx => createdOutputs(tx).map(([index, output]) => ({ txHash: tx.hash, outputIndex: index, address: output.address, lovelace: String(output.value.coin) })))
  const byReference = (a: any, b: any) => `${a.txHash}#${a.outputIndex}`.localeCompare(`${b.txHash}#${b.outputIndex}`)
  expect(outputs.sort(byReference)).toEqual(expectedOutputs.sort(byReference))
  const assetCount = transactions.flatMap(tx => createdOutputs(tx).flatMap(([, output]) => [...output.value.assets.keys()])).length
  expect(await SELECT.from(TransactionOutputAssets)).toHaveLength(assetCount)
  const labels = (await SELECT.from(TransactionMetadata_).columns('txHash', 'label') as any[]).map(row => `${row.txHash}:${row.label}`).sort()
  expect(labels).toEqual(transactions.flatMap(tx => tx.metadata.map(entry => `${tx.hash}:${entry.label}`)).sort())
}

describe('settings', () => {
  test.each([
    ['genesis', { kind: 'genesis' }],
    ['1200000', { kind: 'height', height: 1200000 }],
    ['2d', { kind: 'duration', seconds: 172800 }],
    ['6h', { kind: 'duration', seconds: 21600 }],
    ['30m', { kind: 'duration', seconds: 1800 }],
    ['90s', { kind: 'duration', seconds: 90 }],
  ])('CHAIN_A_FOLLOWER_START=%s', (text, start) => {
    expect(parseStart(text)).toEqual(start)
  })

  test('a start that is none of them is refused, naming the setting', () => {
    expect(() => parseStart('yesterday')).toThrow("Setting CHAIN_A_FOLLOWER_START must be 'genesis', a block height or a duration back from the tip such as 2d, 6h, 30m or 90s, got 'yesterday'")
  })

  test('the environment wins over cds.requires[chain-a].follower, which wins over the defaults', () => {
    const block = (cds.env.requires as any)['chain-a']
    block.follower = { batchSize: 7, start: 'genesis', leaseMs: 1234 }
    process.env.CHAIN_A_FOLLOWER_BATCH_SIZE = '9'
    try {
      expect(followerSettings()).toEqual({ enabled: false, intervalMs: 1000, batchSize: 9, leaseMs: 1234, maxReorgDepth: 100, start: { kind: 'genesis' } })
    } finally {
      delete block.follower
      delete process.env.CHAIN_A_FOLLOWER_BATCH_SIZE
    }
    expect(followerSettings()).toMatchObject({ intervalMs: 1000, batchSize: 50, leaseMs: 30000, maxReorgDepth: 100, start: { kind: 'duration', seconds: 172800 } })
  })
})

test('catches up from the genesis block to the tip: every block and transaction the devnet holds', async () => {
  const indexer = await follower()
  expect(await indexer.runNow()).toBe('synced')
  await expectIndexEqualsDevnet(0)
  expect(await state()).toMatchObject({
    network: 'devnet', startHeight: 0, indexedHeight: tip().height, indexedHash: tip().hash, chainHeight: tip().height,
    finalizedHeight: tip().height - securityParam, status: 'synced', consecutiveErrors: 0,
    blocksIndexed: tip().height + 1, transactionsIndexed: devnetTransactions(0).length, reorgs: 0, leaseOwner: indexer.instanceId,
  })
})

test('a fresh index from a height holds the blocks from there on only', async () => {
  const from = tip().height - 6
  expect(await (await follower({ start: { kind: 'height', height: from } })).runNow()).toBe('synced')
  await expectIndexEqualsDevnet(from)
  expect(await state()).toMatchObject({ startHeight: from, indexedHeight: tip().height, blocksIndexed: 7, transactionsIndexed: devnetTransactions(from).length })
})

test('a fresh index from a duration starts at the first block no older than that before the tip', async () => {
  const seconds = 5
  const from = devnet.ledger.blocks.find(block => block.time >= tip().time - seconds)!.height
  expect(from).toBeGreaterThan(0)
  expect(await (await follower({ start: parseStart(`${seconds}s`) })).runNow()).toBe('synced')
  expect(await state()).toMatchObject({ startHeight: from, indexedHeight: tip().height })
  await expectIndexEqualsDevnet(from)
})

test('follows new blocks', async () => {
  const indexer = await follower()
  await indexer.runNow()
  growChain(devnet, ['transfer', 'mint'])
  expect(await indexer.runNow()).toBe('synced')
  await expectIndexEqualsDevnet(0)
  expect(await state()).toMatchObject({ indexedHeight: tip().height, indexedHash: tip().hash, blocksIndexed: tip().height + 1 })
})

test('a new follower resumes at the indexed height: it reads only the tip and the blocks after it', async () => {
  const first = await follower({}, 'first')
  await first.runNow()
  await first.stop()
  const indexedHeight = tip().height
  devnet.produceBlock()
  devnet.produceBlock()
  devnet.resetRequestCounts()
  expect(await (await follower({}, 'second')).runNow()).toBe('synced')
  expect([devnet.requestCount('/blocks/latest'), devnet.requestCount(`/blocks/${indexedHeight}/next`), devnet.requestCount('/blocks'), devnet.requestCount('/txs')]).toEqual([1, 1, 2, 0])
  expect(await state()).toMatchObject({ startHeight: 0, indexedHeight: tip().height, blocksIndexed: tip().height + 1, leaseOwner: 'second' })
  await expectIndexEqualsDevnet(0)
})

test('when nothing changed, a run is one tip call', async () => {
  const indexer = await follower()
  await indexer.runNow()
  devnet.resetRequestCounts()
  expect(await indexer.runNow()).toBe('synced')
  expect(devnet.requestCount()).toBe(1)
  expect(devnet.requestCount('/blocks/latest')).toBe(1)
})

const LEASE_MS = 5000

test('two followers in one process: one indexes, the other stands by and takes over when the lease expires or is handed back', async () => {
  // A lease long enough that a busy machine cannot let it expire between the first two runs.
  const first = await follower({ leaseMs: LEASE_MS }, 'first')
  const second = await follower({ leaseMs: LEASE_MS }, 'second')
  expect(await first.runNow()).toBe('synced')
  devnet.produceBlock()
  expect(await second.runNow()).toBe('standby')
  expect(await state()).toMatchObject({ indexedHeight: tip().height - 1, leaseOwner: 'first' })
  await new Promise(resolve => setTimeout(resolve, LEASE_MS + 100))
  expect(await second.runNow()).toBe('synced')
  expect(await first.runNow()).toBe('standby')
  expect(await state()).toMatchObject({ indexedHeight: tip().height, leaseOwner: 'second', blocksIndexed: tip().height + 1 })
  await second.stop()
  devnet.produceBlock()
  expect(await first.runNow()).toBe('synced')
  expect(await state()).toMatchObject({ indexedHeight: tip().height, leaseOwner: 'first', blocksIndexed: tip().height + 1 })
  await expectIndexEqualsDevnet(0)
})

test('a rollback on the devnet: the replaced blocks leave the index, their transactions move to the fork, the reorg is logged', async () => {
  const indexer = await follower()
  const moved = [transfer('wallet-1', 'wallet-2')]
  devnet.produceBlock()
  moved.push(transfer('wallet-2', 'wallet-3'))
  devnet.produceBlock()
  expect(await indexer.runNow()).toBe('synced')
  const oldTip = tip()
  const replaced = devnet.ledger.blocks.slice(-2).map(block => block.hash)
  devnet.rollBack(2)
  for (let i = 0; i < 3; i++) devnet.produceBlock()

  expect(await indexer.runNow()).toBe('synced')
  expect(await SELECT.from(ReorgLog_)).toEqual([expect.objectContaining({ forkHeight: oldTip.height - 1, blocksRolledBack: 2, oldTipHash: oldTip.hash, cause: 'reorg' })])
  expect((await SELECT.one.from(ReorgLog_) as any).newTipHash).toMatch(/^[0-9a-f]{64}$/)
  expect(await SELECT.from(Blocks).where({ hash: { in: replaced } })).toEqual([])
  expect(await SELECT.from(IndexMarks).where({ kind: 'block', id: { in: replaced } })).toEqual([])
  const fork = devnet.ledger.blocks[oldTip.height - 1]
  expect(fork.txs).toEqual(moved)
  expect(await SELECT.from(Transactions).columns('hash', 'blockHash').where({ hash: { in: moved } }).orderBy('txIndex')).toEqual(moved.map(hash => ({ hash, blockHash: fork.hash })))
  await expectIndexEqualsDevnet(0)
  expect(await state()).toMatchObject({ indexedHeight: tip().height, indexedHash: tip().hash, reorgs: 1, blocksIndexed: tip().height + 1, transactionsIndexed: devnetTransactions(0).length })
  // Reads by height answer the fork.
  const { data } = await GET(`${SERVICE}/Blocks?$filter=height ge ${oldTip.height - 1}&$orderby=height&$select=hash`)
  expect(data.value.map((block: any) => block.hash)).toEqual(devnet.ledger.blocks.slice(oldTip.height - 1).map(block => block.hash))
})

test('a rollback whose new block a read put into the index first: the fork is still found below it', async () => {
  const indexer = await follower()
  const moved = [transfer('wallet-1', 'wallet-3')]
  devnet.produceBlock()
  devnet.produceBlock()
  await indexer.runNow()
  const forkHeight = tip().height - 1
  devnet.rollBack(2)
  for (let i = 0; i < 3; i++) devnet.produceBlock()
  // Its mark expired, a read of that height stores the fork's block in place of the indexed one.
  await cds.tx(() => chainAIndex().invalidate('height', String(forkHeight)))
  const read = await GET(`${SERVICE}/Blocks?$filter=height eq ${forkHeight}&$select=hash`)
  expect(read.data.value).toEqual([{ hash: devnet.ledger.blocks[forkHeight].hash }])

  expect(await indexer.runNow()).toBe('synced')
  expect(await SELECT.from(ReorgLog_).columns('forkHeight', 'blocksRolledBack')).toEqual([{ forkHeight, blocksRolledBack: 2 }])
  expect(await SELECT.from(Transactions).columns('hash', 'blockHash').where({ hash: { in: moved } })).toEqual([{ hash: moved[0], blockHash: devnet.ledger.blocks[forkHeight].hash }])
  await expectIndexEqualsDevnet(0)
})

test('a rollback deeper than the limit stops the follower with status error and rolls back nothing', async () => {
  const indexer = await follower({ maxReorgDepth: 2 })
  await indexer.runNow()
  const indexed = await SELECT.from(Blocks).columns('hash').orderBy('height') as any[]
  devnet.rollBack(3)
  for (let i = 0; i < 4; i++) devnet.produceBlock()
  expect(await indexer.runNow()).toBe('error')
  const after = await state()
  expect(after).toMatchObject({ status: 'error', consecutiveErrors: 1, reorgs: 0 })
  expect(after.lastError).toMatch(/^CHAIN_A_REORG_TOO_DEEP: /)
  expect(await SELECT.from(ReorgLog_)).toEqual([])
  expect(await SELECT.from(Blocks).columns('hash').orderBy('height')).toEqual(indexed)
})

test('right after a sync, tip-near reads of blocks and of a block\'s transactions make no upstream call', async () => {
  growChain(devnet, ['transfer'])
  await (await follower()).runNow()
  const recent = devnet.ledger.blocks.filter(block => block.txs.length).at(-1)!
  devnet.resetRequestCounts()
  const blocks = await GET(`${SERVICE}/Blocks?$orderby=height desc&$top=5`)
  expect(blocks.data.value.map((block: any) => block.hash)).toEqual(devnet.ledger.blocks.slice(-5).reverse().map(block => block.hash))
  const transactions = await GET(`${SERVICE}/Transactions?$filter=blockHeight eq ${recent.height}`)
  expect(transactions.data.value.map((tx: any) => tx.hash)).toEqual(recent.txs)
  const expanded = await GET(`${SERVICE}/Blocks('${recent.hash}')?$expand=transactions($expand=outputs)`)
  expect(expanded.data.transactions.map((tx: any) => tx.hash)).toEqual(recent.txs)
  expect(devnet.requestCount()).toBe(0)
})

test('while it follows, the newest blocks\' marks are confirmed: reads keep answering from the index after their TTL', async () => {
  // An index of its own whose marks last a second (a quarter of it between confirmations); reads use the service's.
  const chain = await chainA()
  const index = new ChainAIndex(chain, { ...chain.settings.ttlSeconds, transaction: 1 })
  const indexer = new ChainAFollower({ chain, index, settings: { start: { kind: 'genesis' } } })
  followers.push(indexer)
  growChain(devnet, ['transfer'])
  await indexer.runNow()
  const recent = devnet.ledger.blocks.filter(block => block.txs.length).at(-1)!
  // As if every mark not final had been read long ago.
  await UPDATE.entity(IndexMarks).set({ fetchedAt: '2000-01-01T00:00:00Z' }).where({ final: false })
  await new Promise(resolve => setTimeout(resolve, 300))
  expect(await indexer.runNow()).toBe('synced')
  devnet.resetRequestCounts()
  await GET(`${SERVICE}/Blocks?$orderby=height desc&$top=5`)
  await GET(`${SERVICE}/Blocks('${recent.hash}')?$expand=transactions($expand=outputs)`)
  expect(devnet.requestCount()).toBe(0)
})

describe('two server processes on one database (PostgreSQL, or one SQLite file)', () => {
  const servers: RunningServer[] = []
  let folder: string | undefined
  let sharedFile: string | undefined

  /** The SyncState row as the servers wrote it. */
  async function sharedState(): Promise<any> {
    if (!sharedFile) return state()
    const { DatabaseSync } = await import('node:sqlite')
    // A reader of a file in WAL mode may find it busy for a moment (a server checkpointing): it waits.
    const db = new DatabaseSync(sharedFile, { readOnly: true, timeout: 10_000 })
    try {
      return db.prepare('SELECT * FROM chaina_SyncState').get()
    } finally {
      db.close()
    }
  }

  async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
    const until = Date.now() + timeoutMs
    for (;;) {
      const value = await probe()
      if (value) return value
      if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
      await new Promise(resolve => setTimeout(resolve, 100))
    }
  }

  /** Far longer than the test waits for the takeover: it happens because the lease is handed back, not because it expired. */
  const LEASE_MS = 600_000

  const holderOf = (owner: string) => servers.find(server => server.output().includes(`chain-a follower ${owner} holds the lease`))

  /** Two servers with their followers on; started in the test, after the index was emptied. */
  async function startServers() {
    const shared: NodeJS.ProcessEnv = {}
    if (!onPostgres()) {
      folder = mkdtempSync(join(tmpdir(), 'cag-chaina-follower-'))
      sharedFile = join(folder, 'shared.sqlite')
      shared.CDS_REQUIRES_DB_CREDENTIALS_URL = sharedFile
    }
    const root = join(__dirname, '..', '..')
    const env: NodeJS.ProcessEnv = {
      ...process.env, ...shared, PORT: '0', CDS_TYPESCRIPT: 'true', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', GATEWAY_ENABLED: 'false',
      CHAIN_A_DEVNET: 'false', BLOCKFROST_URL: devnet.url, CHAIN_A_NETWORK: 'devnet', CHAIN_B_CRAWLER_ENABLED: 'false',
      CHAIN_A_FOLLOWER_ENABLED: 'true', CHAIN_A_FOLLOWER_START: 'genesis', CHAIN_A_FOLLOWER_INTERVAL_MS: '200', CHAIN_A_FOLLOWER_LEASE_MS: String(LEASE_MS),
    }
    // The first creates the SQLite file's schema; the second joins it.
    servers.push(await startServer(join(root, 'node_modules', '.bin', 'cds-serve'), [], { cwd: root, env }))
    servers.push(await startServer(join(root, 'node_modules', '.bin', 'cds-serve'), [], { cwd: root, env }))
  }

  afterAll(async () => {
    for (const server of servers) if (server.running()) {
      server.stop()
      await server.exited
    }
    if (folder) rmSync(folder, { recursive: true, force: true })
  })

  test('one holds the lease and indexes every block once; when it stops, it hands the lease back and the other takes over at once, saying from whom', async () => {
    await startServers()
    devnet.produceBlock()
    const synced = await waitFor('the index at the tip', async () => {
      const row = await sharedState()
      return row?.indexedHeight === tip().height && row.status === 'synced' && row
    })
    expect(synced).toMatchObject({ startHeight: 0, blocksIndexed: tip().height + 1, transactionsIndexed: devnetTransactions(0).length, reorgs: 0 })
    // Its log line may reach this process a little after the row it wrote.
    const holder = await waitFor('the lease holder to say so', async () => holderOf(synced.leaseOwner))
    const other = servers.find(server => server !== holder)!
    expect(other.output()).not.toContain('holds the lease')

    holder.stop()
    await holder.exited
    devnet.produceBlock()
    devnet.produceBlock()
    const takenOver = await waitFor('the other server at the new tip', async () => {
      const row = await sharedState()
      // The run writes its position, then its status: wait for both.
      return row?.indexedHeight === tip().height && row.status === 'synced' && row.leaseOwner !== synced.leaseOwner && row
    }, 60_000)
    expect(await waitFor('the new holder to say so', async () => holderOf(takenOver.leaseOwner))).toBe(other)
    expect(other.output()).toContain(`chain-a follower ${takenOver.leaseOwner} holds the lease (taken over from ${synced.leaseOwner}, which handed it back)`)
    expect(takenOver).toMatchObject({ blocksIndexed: tip().height + 1, status: 'synced' })
  }, 150_000)
})

test('an upstream that fails run after run is logged once, then its recovery with the count of failed runs', async () => {
  const chain = await chainA()
  let down = true
  const unreachable = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3001'), { code: 'ECONNREFUSED' })
  const flaky = new Proxy(chain, {
    get(target, name) {
      const value = Reflect.get(target, name, target)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        if (down) throw unreachable()
        return value.apply(target, args)
      }
    },
  })
  const made = new ChainAFollower({ chain: flaky, index: chainAIndex(), settings: { batchSize: 4, start: { kind: 'genesis' } } })
  followers.push(made)
  const written: string[] = []
  const spies = (['warn', 'info'] as const).map(method => jest.spyOn(console, method).mockImplementation((...args: unknown[]) => void written.push(args.join(' '))))
  try {
    for (let run = 0; run < 5; run++) expect(await made.runNow()).toBe('error')
    down = false
    expect(await made.runNow()).toBe('synced')
  } finally {
    for (const spy of spies) spy.mockRestore()
  }
  const about = written.filter(line => /ECONNREFUSED|recovered|failed/.test(line))
  expect(about).toEqual([
    expect.stringMatching(/chain-a follower: run failed; it retries: connect ECONNREFUSED/),
    expect.stringMatching(/chain-a follower: run recovered after 5 failures in \d+ s/),
  ])
})
