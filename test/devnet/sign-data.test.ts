import path from 'node:path'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { buildGenesis } from '../../devnet/chain-a/genesis.ts'
import { verifyDataSignature } from '../../srv/chains/chain-a/signing/data-signature.ts'
import { runCommand, type Run } from '../support/devnet.ts'

/**
 * `npm run devnet -- sign-data --wallet <n> (--payload <hex> | --message <text>) [--address …]`:
 * CIP-30 signData by a devnet test wallet, run as its own process; what it answers passes the
 * gateway's verifier for the address it signed for.
 */

const ROOT = path.resolve(__dirname, '../..')
const CLI = path.join(ROOT, 'devnet/cli.ts')
const SEED = 'sign-data-test'
const [w1, w2] = buildGenesis(SEED, 2).testWallets
const MESSAGE = '{\n  "action": "Sign in",\n  "nonce": "0f0f"\n}'

function signData(args: string[], extra: Record<string, string> = {}) {
  const env: NodeJS.ProcessEnv = {
    ...process.env, NODE_ENV: 'development', CDS_ENV: '', DEVNET_SEED: SEED, DEVNET_WALLETS: '2', DEVNET_STATE_DIR: 'none',
    NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', ...extra,
  }
  for (const name of ['BLOCKFROST_URL', 'CHAIN_A_DEVNET'] as const) if (!(name in extra)) delete env[name]
  return runCommand(process.execPath, [CLI, 'sign-data', ...args], { cwd: ROOT, env })
}

function answered(run: Run) {
  expect(run.stderr).toBe('')
  expect(run.status).toBe(0)
  const answer = JSON.parse(run.stdout) as { signature: string; key: string }
  expect(Object.keys(answer).sort()).toEqual(['key', 'signature'])
  return answer
}

it('signs a message for the wallet\'s base address with its payment key', async () => {
  const answer = answered(await signData(['--wallet', '1', '--message', MESSAGE]))
  expect(verifyDataSignature({ address: w1.address, ...answer, payload: Buffer.from(MESSAGE, 'utf8') }))
    .toEqual({ valid: true, signerKeyHash: w1.payment.to_public().hash().to_hex(), credential: 'payment' })
})

it('signs hex bytes (--payload), the same as the message they encode', async () => {
  const hex = Buffer.from(MESSAGE, 'utf8').toString('hex')
  const answer = answered(await signData(['--wallet=wallet-1', `--payload=${hex}`, '--address', w1.address]))
  expect(answer).toEqual(answered(await signData(['--wallet', '1', '--message', MESSAGE])))
})

it('signs for the stake address with the stake key (--address stake, or the address itself)', async () => {
  const answer = answered(await signData(['--wallet', '2', '--message', MESSAGE, '--address', 'stake']))
  expect(verifyDataSignature({ address: w2.stakeAddress, ...answer, payload: Buffer.from(MESSAGE, 'utf8') }))
    .toEqual({ valid: true, signerKeyHash: w2.stake.to_public().hash().to_hex(), credential: 'stake' })
  expect(answered(await signData(['--wallet', '2', '--message', MESSAGE, '--address', w2.stakeAddress]))).toEqual(answer)
})

describe('refuses, with one line on stderr and nothing on stdout', () => {
  const mainnet = () => CSL.BaseAddress.new(1, CSL.Credential.from_keyhash(w1.payment.to_public().hash()), CSL.Credential.from_keyhash(w1.stake.to_public().hash())).to_address().to_bech32()
  const refusals: [string, () => string[], Record<string, string>, RegExp][] = [
    ['in production', () => ['--wallet', '1', '--message', 'hi'], { NODE_ENV: 'production' }, /refuses to run in production \(NODE_ENV is production\)/],
    ['when chain A does not use the devnet', () => ['--wallet', '1', '--message', 'hi'], { CHAIN_A_DEVNET: 'false' }, /signs for the chain-A devnet only/],
    ['a mainnet address', () => ['--wallet', '1', '--message', 'hi', '--address', mainnet()], {}, /^refusing to sign for a mainnet address \(network id 1\)/],
    ['another wallet\'s address', () => ['--wallet', '1', '--message', 'hi', '--address', w2.address], {}, /is not this wallet's: its payment credential is not the wallet's key \(CIP-30: AddressNotPK\)$/],
    ['no address', () => ['--wallet', '1', '--message', 'hi', '--address', 'nowhere'], {}, /^--address is not an address in bech32 or hex: nowhere$/],
    ['a payload that is not hex', () => ['--wallet', '1', '--payload', 'xyz'], {}, /^--payload must be hex bytes: xyz$/],
    ['both --payload and --message', () => ['--wallet', '1', '--payload', '00', '--message', 'hi'], {}, /^Give either --payload or --message; usage: npm run devnet -- sign-data/],
    ['neither', () => ['--wallet', '1'], {}, /^Give either --payload or --message/],
    ['a missing --wallet', () => ['--message', 'hi'], {}, /^Missing --wallet; usage: npm run devnet -- sign-data --wallet <n> \(--payload <hex> \| --message <text>\)/],
    ['an unknown wallet', () => ['--wallet', '9', '--message', 'hi'], {}, /^No devnet test wallet '9'/],
    ['an unknown option', () => ['--wallet', '1', '--message', 'hi', '--tx', '00'], {}, /^Unexpected argument '--tx'; the command takes --wallet, --payload, --message and --address\.$/],
  ]
  it.each(refusals)('%s', async (_name, args, extra, message) => {
    const run = await signData(args(), extra)
    expect(run.stdout).toBe('')
    expect(run.stderr.trimEnd()).toMatch(message)
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(run.status).not.toBe(0)
  })
})
