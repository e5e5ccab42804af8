import { spawnSync } from 'node:child_process'
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { devnetConfig } from '../../srv/chains/chain-a/config.ts'
import type { ChainADevnet, WalletKeyPair } from '../../devnet/chain-a/index.ts'
import { resetState } from '../../devnet/chain-a/state.ts'
import { DevnetStateError } from '../../devnet/shared/state.ts'
import { ADA, buildTx, getJson, largestUtxo, startDevnet, submitHttp } from '../support/devnet.ts'

/** A devnet with a state folder keeps its chain across a stop and a start; a reset makes a new chain. */

let root: string
let stateDir: string
const running: ChainADevnet[] = []

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'devnet-state-'))
})
afterAll(() => rmSync(root, { recursive: true, force: true }))
beforeEach(() => {
  stateDir = mkdtempSync(join(root, 'chain-'))
})
afterEach(async () => {
  await Promise.all(running.splice(0).map(devnet => devnet.stop()))
})

async function start(overrides: Parameters<typeof startDevnet>[0] = {}): Promise<ChainADevnet> {
  const devnet = await startDevnet({ seed: 'state-test', stateDir, ...overrides })
  running.push(devnet)
  return devnet
}

async function stop(devnet: ChainADevnet) {
  running.splice(running.indexOf(devnet), 1)
  await devnet.stop()
}

/** Sends 5 ADA from one test wallet to another over the HTTP API; answers the transaction hash. */
async function transfer(devnet: ChainADevnet, from: WalletKeyPair, to: WalletKeyPair): Promise<string> {
  const cbor = buildTx({ inputs: [largestUtxo(devnet, from.address)], outputs: [{ address: to.address, coin: 5n * ADA }], signers: [from.payment] })
  const { status, body } = await submitHttp(devnet, cbor)
  expect(status).toBe(200)
  return body
}

/** What must be the same after a restart. */
function chainState(devnet: ChainADevnet) {
  const ledger = devnet.ledger
  return {
    systemStart: ledger.systemStart,
    tip: ledger.tip,
    blocks: ledger.blocks.length,
    unspent: [...ledger.outputs.values()].filter(output => !output.spentBy).map(output => `${output.ref} ${output.address} ${output.value.coin}`).sort(),
    mempool: ledger.mempoolTransactions().map(tx => tx.hash),
    pots: { ...ledger.pots },
    accounts: [...ledger.accounts.values()].map(account => [account.stakeAddress, String(account.rewards), account.pool, account.drep]),
    supply: ledger.accountedSupply(),
  }
}

const genesisRefs = (devnet: ChainADevnet) => devnet.ledger.blocks[0].txs

it('resumes its chain after a stop: same system start, tip, UTxOs and mempool, and the transactions sent before', async () => {
  let devnet = await start()
  const [w1, w2] = [devnet.walletKeys('wallet-1'), devnet.walletKeys('wallet-2')]
  const included = await transfer(devnet, w1, w2)
  devnet.produceBlock()
  devnet.produceBlock()
  const pending = await transfer(devnet, w2, w1)
  const before = chainState(devnet)
  const genesisBefore = (await getJson(devnet, '/genesis')).body
  await stop(devnet)

  devnet = await start()
  expect(chainState(devnet)).toEqual(before)
  expect((await getJson(devnet, '/genesis')).body).toEqual(genesisBefore)
  const { status, body } = await getJson(devnet, `/txs/${included}`)
  expect(body).toMatchObject({ hash: included, block_height: 1 })
  expect(status).toBe(200)
  const next = devnet.produceBlock()
  expect(next).toMatchObject({ height: before.tip.height + 1, previousBlock: before.tip.hash, txs: [pending] })
})

it('resumes a chain that ran for several epochs, with the activity generator minting new tokens after the restart', async () => {
  const rounds = (devnet: ChainADevnet, count: number) => {
    for (let i = 0; i < count; i++) {
      devnet.activity.round()
      devnet.produceBlock()
    }
  }
  let devnet = await start({ activity: true, epochLength: 20 })
  rounds(devnet, 50)
  const before = chainState(devnet)
  expect(before.tip.epoch).toBeGreaterThan(1)
  await stop(devnet)

  devnet = await start({ activity: true, epochLength: 20 })
  expect(chainState(devnet)).toEqual(before)
  rounds(devnet, 50)
  const generatorTokens = [...devnet.ledger.assets.values()].filter(asset => asset.policyId === devnet.activity.policyId)
  expect(generatorTokens.length).toBeGreaterThan(0)
  for (const token of generatorTokens) expect(token.history.filter(entry => entry.action === 'minted')).toHaveLength(1)
})

it('keeps the saved chain\'s seed and wallets when the configuration changed, and says so', async () => {
  const first = await start({ wallets: 2 })
  const addresses = first.wallets().map(wallet => wallet.address)
  await stop(first)
  const warn = jest.spyOn(console, 'warn').mockImplementation(() => {})
  try {
    const again = await start({ wallets: 5, seed: 'another-seed' })
    expect(again.wallets().map(wallet => wallet.address)).toEqual(addresses)
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/seed "state-test", wallets 2 .*npm run devnet -- reset/))
  } finally {
    warn.mockRestore()
  }
})

it('refuses a second devnet on a state folder in use, and releases the folder when stopped', async () => {
  const first = await start()
  await expect(start()).rejects.toThrow(new RegExp(`in use by process ${process.pid}: stop it first`))
  await stop(first)
  expect(existsSync(join(stateDir, 'lock'))).toBe(false)
  await expect(start()).resolves.toBeDefined()
})

it('takes over a lock left by a process that ended, also when this process has the same pid', async () => {
  const ended = spawnSync(process.execPath, ['-e', ''])
  for (const pid of [ended.pid, process.pid]) {
    const devnet = await start()
    await stop(devnet)
    writeFileSync(join(stateDir, 'lock'), `${pid}\n`)
    const again = await start()
    expect(readFileSync(join(stateDir, 'lock'), 'utf8')).toBe(`${process.pid}\n`)
    await stop(again)
  }
})

it('drops a last line cut off by a crash and resumes the chain as it was before that line', async () => {
  const devnet = await start()
  devnet.produceBlock()
  const before = chainState(devnet)
  await stop(devnet)
  const log = join(stateDir, 'chain.ndjson')
  const complete = readFileSync(log, 'utf8')
  appendFileSync(log, '{"block":2,"slot":9,"ha')
  const warn = jest.spyOn(console, 'warn').mockImplementation(() => {})
  try {
    expect(chainState(await start())).toEqual(before)
  } finally {
    warn.mockRestore()
  }
  expect(readFileSync(log, 'utf8')).toBe(complete)
})

describe('a state folder that cannot be resumed refuses to start with one line that names the reset', () => {
  const replaceLine = (file: string, index: number, change: (line: string) => string) => {
    const lines = readFileSync(file, 'utf8').split('\n')
    lines[index] = change(lines[index])
    writeFileSync(file, lines.join('\n'))
  }
  const cases: [string, RegExp, (dir: string) => void][] = [
    ['genesis.json is not JSON', /genesis\.json is not JSON/, dir => writeFileSync(join(dir, 'genesis.json'), '{"format": 1, "seed": ')],
    ['genesis.json of another format', /format 99/, dir => replaceLine(join(dir, 'genesis.json'), 1, () => '  "format": 99,')],
    ['genesis.json is missing', /genesis\.json is missing/, dir => rmSync(join(dir, 'genesis.json'))],
    ['a line of the log is not JSON', /chain\.ndjson line 1 is not JSON/, dir => replaceLine(join(dir, 'chain.ndjson'), 0, line => line.slice(0, 20))],
    ['a line is neither entry', /line 2 is neither a transaction nor a block entry/, dir => replaceLine(join(dir, 'chain.ndjson'), 1, () => '{"block":"one"}')],
    ['a block names a transaction the log lacks', /includes transaction 0{64}, which no earlier line holds/, dir => replaceLine(join(dir, 'chain.ndjson'), 1, line => line.replace(/"txs":\[[^\]]*\]/, `"txs":["${'0'.repeat(64)}"]`))],
    ['a block replays to another hash', /replays to hash [0-9a-f]{64}, the log says f{64}/, dir => replaceLine(join(dir, 'chain.ndjson'), 1, line => line.replace(/"hash":"[0-9a-f]{64}"/, `"hash":"${'f'.repeat(64)}"`))],
    ['a transaction\'s hash was altered', /lists transaction 1{64}, whose CBOR hashes to [0-9a-f]{64}/, dir => {
      replaceLine(join(dir, 'chain.ndjson'), 0, line => line.replace(/"tx":"[0-9a-f]{64}"/, `"tx":"${'1'.repeat(64)}"`))
      replaceLine(join(dir, 'chain.ndjson'), 1, line => line.replace(/"txs":\["[0-9a-f]{64}"\]/, `"txs":["${'1'.repeat(64)}"]`))
    }],
    ['a transaction\'s CBOR was altered', /line 2 \(block #1\) no longer validates \(\w+: /, dir => replaceLine(join(dir, 'chain.ndjson'), 0, line => line.replace('1a004c4b40', '1a004c4b41'))],
  ]
  it.each(cases)('%s', async (_name, problem, corrupt) => {
    const devnet = await start()
    const [w1, w2] = [devnet.walletKeys('wallet-1'), devnet.walletKeys('wallet-2')]
    await transfer(devnet, w1, w2)
    devnet.produceBlock()
    await stop(devnet)
    corrupt(stateDir)
    const failure = await start().then(() => undefined, (error: unknown) => error as Error)
    expect(failure).toBeInstanceOf(DevnetStateError)
    expect(failure!.message).toMatch(problem)
    expect(failure!.message).toMatch(/run `npm run devnet -- reset` to start a new chain/)
    expect(failure!.message).not.toContain('\n')
    expect(existsSync(join(stateDir, 'lock'))).toBe(false)
  })
})

describe('reset', () => {
  it('deletes the saved chain; the next start makes a new chain with its own system start and transaction hashes', async () => {
    const first = await start()
    const [w1, w2] = [first.walletKeys('wallet-1'), first.walletKeys('wallet-2')]
    const firstTransfer = await transfer(first, w1, w2)
    first.produceBlock()
    const firstGenesis = genesisRefs(first)
    const firstStart = first.ledger.systemStart
    await stop(first)

    expect(resetState(stateDir)).toEqual({ dir: stateDir, deleted: { systemStart: new Date(firstStart * 1000).toISOString(), createdAt: expect.any(String), tipHeight: 1 } })
    expect(existsSync(stateDir)).toBe(false)
    // System starts are whole seconds: the next chain starts in a later one.
    await new Promise(resolve => setTimeout(resolve, 1000 - (Date.now() % 1000) + 10))

    const second = await start()
    expect(second.ledger.systemStart).toBeGreaterThan(firstStart)
    expect(second.wallets().map(wallet => wallet.address)).toEqual(first.wallets().map(wallet => wallet.address))
    expect(genesisRefs(second).filter(hash => firstGenesis.includes(hash))).toEqual([])
    expect(await transfer(second, w1, w2)).not.toBe(firstTransfer)
    expect((await getJson(second, `/txs/${firstTransfer}`)).status).toBe(404)
  })

  it('refuses while a devnet serves the folder, and deletes nothing', async () => {
    await start()
    expect(() => resetState(stateDir)).toThrow(new RegExp(`in use by process ${process.pid}: stop it first`))
    expect(existsSync(join(stateDir, 'genesis.json'))).toBe(true)
  })

  it('says when there is nothing to delete', () => {
    expect(resetState(join(root, 'never-used'))).toEqual({ dir: join(root, 'never-used'), deleted: undefined })
  })
})

describe('where the state folder is', () => {
  const saved = process.env.DEVNET_STATE_DIR
  afterEach(() => {
    if (saved === undefined) delete process.env.DEVNET_STATE_DIR
    else process.env.DEVNET_STATE_DIR = saved
  })

  it('is none in the test profile: the chain stays in memory', () => {
    delete process.env.DEVNET_STATE_DIR
    expect(devnetConfig().stateDir).toBeUndefined()
  })

  it('is DEVNET_STATE_DIR, relative to the project, and none when it says none', () => {
    process.env.DEVNET_STATE_DIR = 'tmp/chain-state'
    expect(devnetConfig().stateDir).toBe(join(__dirname, '..', '..', 'tmp', 'chain-state'))
    process.env.DEVNET_STATE_DIR = 'none'
    expect(devnetConfig().stateDir).toBeUndefined()
  })
})
