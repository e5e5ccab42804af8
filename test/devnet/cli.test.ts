import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { productionReason } from '../../devnet/shared/cli.ts'
import { runCommand } from '../support/devnet.ts'

/** `npm run devnet` and its commands, run with the project's Node (process.execPath). */

const ROOT = path.resolve(__dirname, '../..')
const CLI = path.join(ROOT, 'devnet/cli.ts')
let stateRoot: string
let stateDir: string
beforeAll(() => {
  stateRoot = mkdtempSync(path.join(tmpdir(), 'devnet-cli-'))
})
afterAll(() => rmSync(stateRoot, { recursive: true, force: true }))
beforeEach(() => {
  stateDir = mkdtempSync(path.join(stateRoot, 'chain-'))
})
const serving = new Set<{ stop(): Promise<void> }>()
afterEach(() => Promise.all([...serving].map(devnet => devnet.stop())))
const env = (extra: Record<string, string> = {}) => ({
  ...process.env, NODE_ENV: 'development', CDS_ENV: '', DEVNET_STATE_DIR: stateDir, NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', ...extra,
})
const cli = (args: string[], extra: Record<string, string> = {}) => runCommand(process.execPath, [CLI, ...args], { cwd: ROOT, env: env(extra) })

/** Serves the devnet until stopped; answers its URL once it listens. */
async function serve(extra: Record<string, string> = {}) {
  const child = spawn(process.execPath, [CLI], { cwd: ROOT, env: env({ PORT: '0', DEVNET_SEED: 'cli-test', DEVNET_ACTIVITY: 'false', ...extra }) })
  let output = ''
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  child.stderr.on('data', chunk => { output += chunk })
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', chunk => {
      output += chunk
      const match = /^(http:\/\/127\.0\.0\.1:\d+)$/m.exec(output)
      if (match) resolve(match[1])
    })
    child.once('exit', code => reject(new Error(`devnet exited with ${code}: ${output}`)))
  })
  const devnet = {
    url,
    output: () => output,
    async stop() {
      serving.delete(devnet)
      child.kill('SIGTERM')
      await exited
    },
  }
  serving.add(devnet)
  return devnet
}

const keyOf = (envelope: { cborHex: string }) => CSL.PrivateKey.from_normal_bytes(Buffer.from(envelope.cborHex.slice(4), 'hex'))

it('prints the test wallets as JSON whose signing keys re-derive the addresses', async () => {
  const run = await cli(['wallets'], { DEVNET_WALLETS: '2', DEVNET_SEED: 'cli-test' })
  expect(run.status).toBe(0)
  const wallets = JSON.parse(run.stdout)
  expect(wallets).toHaveLength(2)
  for (const wallet of wallets) {
    expect(wallet.signingKey).toMatchObject({ type: 'PaymentSigningKeyShelley_ed25519', description: 'Payment Signing Key', cborHex: expect.stringMatching(/^5820[0-9a-f]{64}$/) })
    expect(wallet.stakeSigningKey.type).toBe('StakeSigningKeyShelley_ed25519')
    const payment = CSL.Credential.from_keyhash(keyOf(wallet.signingKey).to_public().hash())
    const stake = CSL.Credential.from_keyhash(keyOf(wallet.stakeSigningKey).to_public().hash())
    expect(CSL.BaseAddress.new(0, payment, stake).to_address().to_bech32()).toBe(wallet.address)
    expect(CSL.RewardAddress.new(0, stake).to_address().to_bech32()).toBe(wallet.stakeAddress)
  }
})

it('refuses to run in production', async () => {
  for (const extra of [{ NODE_ENV: 'production' }, { CDS_ENV: 'pg,production' }] as Record<string, string>[]) {
    const run = await cli(['wallets'], extra)
    expect(run.status).toBe(1)
    expect(run.stdout).toBe('')
    expect(run.stderr).toMatch(/refuses to run in production/)
  }
  expect(productionReason({ NODE_ENV: 'development', CDS_ENV: 'hybrid' })).toBeUndefined()
})

it('serves the devnet on PORT, prints its URL and the other commands', async () => {
  const devnet = await serve()
  try {
    const health = await fetch(devnet.url + '/health').then(r => r.json())
    expect(health).toEqual({ is_healthy: true })
    expect(devnet.output()).toMatch(/chain kept in .*chain-/)
    expect(devnet.output()).toMatch(/Commands: npm run devnet -- wallets \| reset \| sign --wallet <n> --tx <cbor hex or file> \| help/)
  } finally {
    await devnet.stop()
  }
})

it('lists its commands, reset and sign among them', async () => {
  const run = await cli(['help'])
  expect(run.stdout).toMatch(/^Usage: npm run devnet -- <command>/)
  for (const command of ['serve', 'wallets', 'reset', 'sign --wallet <n> --tx <tx>', 'help']) expect(run.stdout).toMatch(new RegExp(`^  ${command} `, 'm'))
  expect(run.status).toBe(0)
})

it('answers an unknown command with one line that points to help', async () => {
  const run = await cli(['frobnicate'])
  expect(run.stderr).toBe("Unknown command 'frobnicate'; `npm run devnet -- help` lists the commands.\n")
  expect(run.status).toBe(2)
})

it('serves the same chain after a restart, and a new one after a reset', async () => {
  const first = await serve()
  const genesis = await fetch(first.url + '/genesis').then(r => r.json())
  const refused = await cli(['reset'])
  expect(refused.stderr).toMatch(/^The chain-A devnet state in .* is in use by process \d+: stop it first/)
  expect(refused.status).toBe(1)
  await first.stop()

  const second = await serve()
  expect(await fetch(second.url + '/genesis').then(r => r.json())).toEqual(genesis)
  expect(second.output()).toMatch(/chain resumed from/)
  await second.stop()

  const reset = await cli(['reset'])
  expect(reset.stdout).toMatch(/^Deleted the chain-A devnet chain saved in .* \(system start .*, tip #\d+\)\. The next start makes a new chain/)
  expect(reset.status).toBe(0)
  expect(existsSync(path.join(stateDir, 'genesis.json'))).toBe(false)
  expect((await cli(['reset'])).stdout).toMatch(/^No saved chain-A devnet chain in /)
  await new Promise(resolve => setTimeout(resolve, 1000))
  const third = await serve()
  expect((await fetch(third.url + '/genesis').then(r => r.json())).system_start).toBeGreaterThan(genesis.system_start)
  await third.stop()
})

it('refuses to serve a saved chain it cannot resume, with one line that names the reset', async () => {
  const devnet = await serve()
  await devnet.stop()
  const genesisFile = path.join(stateDir, 'genesis.json')
  writeFileSync(genesisFile, readFileSync(genesisFile, 'utf8').slice(0, 30))
  const run = await cli([], { PORT: '0' })
  expect(run.stdout).toBe('')
  expect(run.stderr).toMatch(/^The chain-A devnet cannot resume the chain saved in .*: genesis\.json is not JSON\. Restore the folder, or run `npm run devnet -- reset` to start a new chain \(this deletes the saved chain\)\.\n$/)
  expect(run.status).toBe(1)
  expect((await cli(['reset'])).stdout).toMatch(/^Deleted the unreadable chain-A devnet chain saved in /)
})
