import { spawn, spawnSync } from 'node:child_process'
import path from 'node:path'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { productionReason } from '../../srv/chains/chain-a/devnet/cli.ts'

/** `npm run devnet` and `npm run devnet -- wallets`, run with the project's Node (process.execPath). */

const ROOT = path.resolve(__dirname, '../..')
const CLI = path.join(ROOT, 'srv/chains/chain-a/devnet/cli.ts')
const env = (extra: Record<string, string>) => ({ ...process.env, NODE_ENV: 'development', CDS_ENV: '', ...extra })

const keyOf = (envelope: { cborHex: string }) => CSL.PrivateKey.from_normal_bytes(Buffer.from(envelope.cborHex.slice(4), 'hex'))

it('prints the test wallets as JSON whose signing keys re-derive the addresses', () => {
  const run = spawnSync(process.execPath, [CLI, 'wallets'], { cwd: ROOT, env: env({ DEVNET_WALLETS: '2', DEVNET_SEED: 'cli-test' }), encoding: 'utf8' })
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

it('refuses to run in production', () => {
  for (const extra of [{ NODE_ENV: 'production' }, { CDS_ENV: 'pg,production' }] as Record<string, string>[]) {
    const run = spawnSync(process.execPath, [CLI, 'wallets'], { cwd: ROOT, env: env(extra), encoding: 'utf8' })
    expect(run.status).toBe(1)
    expect(run.stdout).toBe('')
    expect(run.stderr).toMatch(/refuses to run in production/)
  }
  expect(productionReason({ NODE_ENV: 'development', CDS_ENV: 'hybrid' })).toBeUndefined()
})

it('serves the devnet on PORT and prints its URL', async () => {
  const child = spawn(process.execPath, [CLI], { cwd: ROOT, env: env({ PORT: '0', DEVNET_SEED: 'cli-test', DEVNET_ACTIVITY: 'false' }) })
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let output = ''
      child.stdout.on('data', chunk => {
        output += chunk
        const match = /^(http:\/\/127\.0\.0\.1:\d+)$/m.exec(output)
        if (match) resolve(match[1])
      })
      child.once('exit', code => reject(new Error(`devnet exited with ${code}: ${output}`)))
    })
    const health = await fetch(url + '/health').then(r => r.json())
    expect(health).toEqual({ is_healthy: true })
  } finally {
    child.kill('SIGTERM')
  }
})
