import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Output } from '../../devnet/chain-a/types.ts'
import { buildTx, runCommand } from '../support/devnet.ts'
import { startServer, stopAndWait, type RunningServer } from '../support/server.ts'

/**
 * `npm start` twice on the same data folder serves the same chain-A devnet chain: the chain lives
 * beside the SQLite file (here a temporary folder) and is resumed at the next start. A transaction
 * signed with `npm run devnet -- sign` and submitted before the restart is still on chain after it.
 * A saved chain that cannot be resumed stops the start with one line; `npm run devnet -- reset`
 * then makes the next start begin a new chain.
 */

const root = join(__dirname, '..', '..')
let dataDir: string
let env: NodeJS.ProcessEnv
let server: RunningServer | undefined

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'chain-access-restart-'))
  env = {
    ...process.env, CDS_ENV: 'self-hosted', PORT: '0', cds_requires_db_credentials_url: join(dataDir, 'db.sqlite'),
    DEVNET_BLOCK_TIME_MS: '300', DEVNET_ACTIVITY: 'false',
  }
  for (const name of ['NODE_ENV', 'CDS_REQUIRES_DB_CREDENTIALS_DATABASE', 'DEVNET_STATE_DIR', 'BLOCKFROST_URL', 'CHAIN_A_DEVNET']) delete env[name]
})

afterEach(() => stop())
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

async function start(): Promise<string> {
  server = await startServer('npm', ['start'], { cwd: root, env, timeoutMs: 90_000 })
  const match = /embedded devnet serving a Blockfrost-compatible API at (http:\/\/\S+)/.exec(server.output())
  if (!match) throw new Error(`the server did not say where its devnet is:\n${server.output()}`)
  return match[1]
}

async function stop() {
  if (!server) return
  await stopAndWait(server)
  server = undefined
}

const devnetCli = (...args: string[]) => runCommand('npm', ['run', '-s', 'devnet', '--', ...args], { cwd: root, env })
const getJson = async (url: string) => {
  const response = await fetch(url)
  return { status: response.status, body: await response.json() }
}

async function onChain(devnetUrl: string, hash: string) {
  for (let attempt = 0; attempt < 100; attempt++) {
    const { status, body } = await getJson(`${devnetUrl}/txs/${hash}`)
    if (status === 200) return body
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  throw new Error(`transaction ${hash} did not reach a block`)
}

/** An unsigned transfer of 4 ADA from wallet 1 to wallet 2, built on the devnet's UTxOs of wallet 1. */
async function unsignedTransfer(devnetUrl: string): Promise<string> {
  const [w1, w2] = JSON.parse((await devnetCli('wallets')).stdout)
  const utxos: any[] = (await getJson(`${devnetUrl}/addresses/${w1.address}/utxos`)).body
  const richest = utxos.sort((a, b) => Number(BigInt(b.amount[0].quantity) - BigInt(a.amount[0].quantity)))[0]
  const input = { txHash: richest.tx_hash, index: richest.output_index, address: w1.address, value: { coin: BigInt(richest.amount[0].quantity), assets: new Map() } } as Output
  return Buffer.from(buildTx({ inputs: [input], outputs: [{ address: w2.address, coin: 4_000_000n }], fee: 300_000n, signers: [] })).toString('hex')
}

let firstGenesis: { system_start: number }
let transferHash: string
let transferBlock: number

test('npm start resumes the devnet chain, with a transaction signed by the dev signer before the restart', async () => {
  const first = await start()
  firstGenesis = (await getJson(`${first}/genesis`)).body
  const signing = await devnetCli('sign', '--wallet', '1', '--tx', await unsignedTransfer(first))
  expect(signing.stderr).toBe('')
  const { txHash, signedTxCbor } = JSON.parse(signing.stdout)
  const submitted = await fetch(`${first}/tx/submit`, { method: 'POST', headers: { 'Content-Type': 'application/cbor' }, body: Buffer.from(signedTxCbor, 'hex') })
  expect(await submitted.json()).toBe(txHash)
  transferHash = txHash
  transferBlock = (await onChain(first, txHash)).block_height

  const resetWhileServing = await devnetCli('reset')
  expect(resetWhileServing.stderr).toMatch(/^The chain-A devnet state in .*devnet-chain-a is in use by process \d+: stop it first/)
  expect(resetWhileServing.status).toBe(1)
  await stop()

  const second = await start()
  expect((await getJson(`${second}/genesis`)).body).toEqual(firstGenesis)
  expect(await onChain(second, transferHash)).toMatchObject({ hash: transferHash, block_height: transferBlock })
  expect((await getJson(`${second}/blocks/latest`)).body.height).toBeGreaterThanOrEqual(transferBlock)
  await stop()
}, 240_000)

test('a saved chain that cannot be resumed stops npm start with one line; after npm run devnet -- reset a new chain starts', async () => {
  const log = join(dataDir, 'devnet-chain-a', 'chain.ndjson')
  writeFileSync(log, readFileSync(log, 'utf8').replace(/^.*\n/, 'garbage\n'))
  const failure = await start().then(() => '', (error: Error) => error.message)
  expect(failure).toMatch(/\nThe chain-A devnet cannot resume the chain saved in .*devnet-chain-a: chain\.ndjson line 1 is not JSON\. Restore the folder, or run `npm run devnet -- reset` to start a new chain \(this deletes the saved chain\)\.\n/)
  expect(failure).not.toMatch(/^\s+at /m)

  const reset = await devnetCli('reset')
  expect(reset.stdout).toMatch(/^Deleted the chain-A devnet chain saved in .*devnet-chain-a \(system start .*, tip #\d+\)\. The next start makes a new chain/)
  expect(reset.status).toBe(0)

  const fresh = await start()
  expect((await getJson(`${fresh}/genesis`)).body.system_start).toBeGreaterThan(firstGenesis.system_start)
  expect((await getJson(`${fresh}/txs/${transferHash}`)).status).toBe(404)
  await stop()
}, 240_000)
