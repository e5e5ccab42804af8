import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import type { ChainADevnet, WalletKeyPair } from '../../devnet/chain-a/index.ts'
import { mergeSignerAnswer } from '../../srv/chains/chain-a/signing/witnesses.ts'
import { ADA, buildTx, largestUtxo, runCommand, startDevnet, submitHttp, type Run, type TxSpec } from '../support/devnet.ts'

/**
 * `npm run devnet -- sign --wallet <n> --tx <tx>`: the development signer, run as its own process
 * against a devnet of the same seed; what it signs is submitted to that devnet.
 */

const ROOT = path.resolve(__dirname, '../..')
const CLI = path.join(ROOT, 'devnet/cli.ts')
const SEED = 'sign-test'

let devnet: ChainADevnet
let w1: WalletKeyPair
let w2: WalletKeyPair
let files: string

beforeAll(async () => {
  devnet = await startDevnet({ seed: SEED, wallets: 2 })
  w1 = devnet.walletKeys('wallet-1')
  w2 = devnet.walletKeys('wallet-2')
  files = mkdtempSync(path.join(tmpdir(), 'devnet-sign-'))
})
afterAll(async () => {
  await devnet.stop()
  rmSync(files, { recursive: true, force: true })
})

function sign(args: string[], extra: Record<string, string> = {}) {
  const env: NodeJS.ProcessEnv = {
    ...process.env, NODE_ENV: 'development', CDS_ENV: '', DEVNET_SEED: SEED, DEVNET_WALLETS: '2', DEVNET_STATE_DIR: 'none',
    NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', ...extra,
  }
  for (const name of ['BLOCKFROST_URL', 'CHAIN_A_DEVNET'] as const) if (!(name in extra)) delete env[name]
  return runCommand(process.execPath, [CLI, 'sign', ...args], { cwd: ROOT, env })
}

/** An unsigned transfer from wallet 1 (room in the fee for the witnesses to come). */
const unsigned = (spec: Partial<TxSpec> = {}) => Buffer.from(buildTx({
  inputs: [largestUtxo(devnet, w1.address)], outputs: [{ address: w2.address, coin: 3n * ADA }], fee: 300_000n, ...spec, signers: [],
})).toString('hex')

const file = (name: string, content: string) => {
  const target = path.join(files, name)
  writeFileSync(target, content)
  return target
}

function signed(run: Run) {
  expect(run.stderr).toBe('')
  expect(run.status).toBe(0)
  return JSON.parse(run.stdout) as { txHash: string; witnessSetCbor: string; signedTxCbor: string }
}

const vkeysOf = (witnessSetCbor: string) => {
  const vkeys = CSL.TransactionWitnessSet.from_hex(witnessSetCbor).vkeys()!
  return Array.from({ length: vkeys.len() }, (_, i) => vkeys.get(i))
}

it('answers the witness set a CIP-30 wallet would and the signed transaction, which the devnet accepts', async () => {
  const tx = unsigned()
  const answer = signed(await sign(['--wallet', '1', '--tx', tx]))
  expect(Object.keys(answer).sort()).toEqual(['signedTxCbor', 'txHash', 'witnessSetCbor'])
  const bodyHash = CSL.FixedTransaction.from_hex(tx).transaction_hash()
  expect(answer.txHash).toBe(bodyHash.to_hex())
  const [witness, ...others] = vkeysOf(answer.witnessSetCbor)
  expect(others).toEqual([])
  expect(witness.vkey().public_key().hash().to_hex()).toBe(w1.payment.to_public().hash().to_hex())
  expect(witness.vkey().public_key().verify(bodyHash.to_bytes(), witness.signature())).toBe(true)
  expect(mergeSignerAnswer(tx, answer.witnessSetCbor).cborHex).toBe(answer.signedTxCbor)
  expect(Buffer.from(CSL.FixedTransaction.from_hex(answer.signedTxCbor).raw_body()).toString('hex')).toBe(Buffer.from(CSL.FixedTransaction.from_hex(tx).raw_body()).toString('hex'))

  const { status, body } = await submitHttp(devnet, Buffer.from(answer.signedTxCbor, 'hex'))
  expect(body).toBe(answer.txHash)
  expect(status).toBe(200)
  devnet.produceBlock()
  expect(devnet.ledger.txs.get(answer.txHash)?.included.blockHeight).toBe(devnet.ledger.tip.height)
})

it('reads the transaction from a file: CBOR hex, or a cardano-cli text envelope; wallet-n names work too', async () => {
  const tx = unsigned()
  const fromHex = signed(await sign(['--wallet=1', '--tx', tx]))
  const envelope = JSON.stringify({ type: 'Unwitnessed Tx ConwayEra', description: 'Ledger Cddl Format', cborHex: tx }, null, 4)
  expect(signed(await sign(['--wallet', '1', '--tx', file('tx.hex', `${tx}\n`)]))).toEqual(fromHex)
  expect(signed(await sign(['--wallet', 'wallet-1', '--tx', file('tx.raw', envelope)]))).toEqual(fromHex)
})

it('adds the stake key\'s witness when the transaction withdraws from the wallet\'s stake address', async () => {
  const answer = signed(await sign(['--wallet', '1', '--tx', unsigned({ withdrawals: [{ stakeAddress: w1.stakeAddress, amount: 0n }] })]))
  expect(vkeysOf(answer.witnessSetCbor).map(w => w.vkey().public_key().hash().to_hex()).sort())
    .toEqual([w1.payment.to_public().hash().to_hex(), w1.stake.to_public().hash().to_hex()].sort())
  const { status, body } = await submitHttp(devnet, Buffer.from(answer.signedTxCbor, 'hex'))
  expect(body).toBe(answer.txHash)
  expect(status).toBe(200)
})

describe('refuses, with one line on stderr and nothing on stdout', () => {
  const refusals: [string, () => string[], Record<string, string>, RegExp][] = [
    ['in production (NODE_ENV)', () => ['--wallet', '1', '--tx', unsigned()], { NODE_ENV: 'production' }, /refuses to run in production \(NODE_ENV is production\)/],
    ['in production (CDS_ENV)', () => ['--wallet', '1', '--tx', unsigned()], { CDS_ENV: 'pg,production' }, /refuses to run in production \(CDS_ENV includes the production profile\)/],
    ['when chain A does not use the devnet', () => ['--wallet', '1', '--tx', unsigned()], { CHAIN_A_DEVNET: 'false' }, /signs for the chain-A devnet only, .*CHAIN_A_DEVNET\) is false/],
    ['when chain A points at another server', () => ['--wallet', '1', '--tx', unsigned()], { BLOCKFROST_URL: 'http://127.0.0.1:9/api' }, /signs for the chain-A devnet only, .*BLOCKFROST_URL points it at http:\/\/127\.0\.0\.1:9\/api/],
    ['a transaction for mainnet', () => ['--wallet', '1', '--tx', unsigned({ outputs: [{ address: mainnetAddress(), coin: 3n * ADA }] })], {}, /refusing to sign a transaction for mainnet \(network id 1\): output 0 pays addr1/],
    ['text that is neither hex nor a file', () => ['--wallet', '1', '--tx', 'not a transaction'], {}, /^--tx is neither transaction CBOR in hex nor a file: not a transaction$/],
    ['odd-length hex', () => ['--wallet', '1', '--tx', 'abc'], {}, /^--tx must be CBOR in hex$/],
    ['hex that is not CBOR', () => ['--wallet', '1', '--tx', 'ffff'], {}, /^--tx is not well-formed CBOR/],
    ['CBOR that is not a transaction', () => ['--wallet', '1', '--tx', 'a0'], {}, /^--tx is not a transaction \(a CBOR array was expected\)$/],
    ['an array that is not a transaction', () => ['--wallet', '1', '--tx', '83010203'], {}, /^--tx is not a Conway-era transaction/],
    ['a file of something else', () => ['--wallet', '1', '--tx', file('notes.txt', 'hello')], {}, /holds neither CBOR hex nor a cardano-cli text envelope$/],
    ['a JSON file without cborHex', () => ['--wallet', '1', '--tx', file('other.json', '{"type": "Tx ConwayEra"}')], {}, /is a JSON file without a cborHex field/],
    ['an unknown wallet', () => ['--wallet', '7', '--tx', unsigned()], {}, /^No devnet test wallet '7': the devnet has wallet-1, wallet-2/],
    ['a missing --tx', () => ['--wallet', '1'], {}, /^Missing --tx; usage: npm run devnet -- sign --wallet <n> --tx <cbor hex or file>\.$/],
    ['an unknown option', () => ['--wallet', '1', '--tx', unsigned(), '--force'], {}, /^Unexpected argument '--force'/],
  ]
  it.each(refusals)('%s', async (_name, args, extra, message) => {
    const run = await sign(args(), extra)
    expect(run.stdout).toBe('')
    expect(run.stderr.trimEnd()).toMatch(message)
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(run.status).not.toBe(0)
  })
})

function mainnetAddress(): string {
  const payment = CSL.Credential.from_keyhash(w2.payment.to_public().hash())
  const stake = CSL.Credential.from_keyhash(w2.stake.to_public().hash())
  return CSL.BaseAddress.new(1, payment, stake).to_address().to_bech32()
}
