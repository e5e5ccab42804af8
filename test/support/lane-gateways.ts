import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import type { ChainADevnet } from '../../devnet/chain-a/index.ts'
import { signDataWithWallet } from '../../devnet/chain-a/dev-signer.ts'
import { ADA, buildTx, largestUtxo } from './devnet.ts'
import { sendFrom, type Reply } from './gateway.ts'
import { startServer, stopAndWait, type RunningServer } from './server.ts'
import { administer, onPostgres, quoted } from '../setup/postgres.ts'

/**
 * The key lanes against gateway processes of their own (`cds-serve`, the gateway on): one or more
 * instances sharing a database of their own (a SQLite file, or a PostgreSQL database copied from
 * the run's template) and one chain-A devnet the test runs in its own process, so that it can put
 * transactions on chain for the addresses it signs in with.
 */

const root = join(__dirname, '..', '..')
/** Every instance shares it: a challenge issued by one is signed in at another. */
export const PUBLIC_URL = 'https://gateway.lanes.test'

export interface Gateways {
  servers: RunningServer[]
  /** The instances' environment: a command line run with it works on their database. */
  env: NodeJS.ProcessEnv
  stop(): Promise<void>
}

export async function startGateways(count: number, devnet: ChainADevnet, settings: Record<string, string> = {}): Promise<Gateways> {
  const database = await ownDatabase()
  const env: NodeJS.ProcessEnv = {
    ...process.env, ...database.env, PORT: '0', CDS_TYPESCRIPT: 'true', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON',
    GATEWAY_ENABLED: 'true', GATEWAY_PUBLIC_URL: PUBLIC_URL, CHAIN_A_DEVNET: 'false', BLOCKFROST_URL: devnet.url, CHAIN_A_NETWORK: 'devnet',
    CHAIN_B_CRAWLER_ENABLED: 'false', ...settings,
  }
  const servers: RunningServer[] = []
  const stop = async () => {
    for (const server of servers) if (server.running()) await stopAndWait(server)
    database.remove()
  }
  try {
    // One after the other: the first creates the SQLite file's schema.
    for (let i = 0; i < count; i++) servers.push(await startServer(join(root, 'node_modules', '.bin', 'cds-serve'), [], { cwd: root, env, timeoutMs: 120_000 }))
  } catch (error) {
    await stop()
    throw error
  }
  return { servers, env, stop }
}

/** A database no other server of the run uses: a fresh SQLite file, or on PostgreSQL a copy of the run's template. */
async function ownDatabase(): Promise<{ env: NodeJS.ProcessEnv; remove(): void }> {
  if (onPostgres()) {
    const template = process.env.CAG_TEST_TEMPLATE!
    // Named after the template, so the run's teardown drops it with the others.
    const name = `${template}_lanes_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`
    await administer(`CREATE DATABASE ${quoted(name)} TEMPLATE ${quoted(template)}`)
    return { env: { CDS_REQUIRES_DB_CREDENTIALS_DATABASE: name }, remove: () => undefined }
  }
  const folder = mkdtempSync(join(tmpdir(), 'cag-lanes-'))
  return { env: { CDS_REQUIRES_DB_CREDENTIALS_URL: join(folder, 'lanes.sqlite') }, remove: () => rmSync(folder, { recursive: true, force: true }) }
}

/** Voucher codes made by the operator's command line on the instances' database, one per line. */
export async function voucherCodes(gateways: Gateways, units: number, count: number, uses = 1): Promise<string[]> {
  const args = ['run', '-s', 'gateway', '--', 'vouchers', 'create', '--units', String(units), '--count', String(count), '--uses', String(uses), '--quiet']
  const { stdout } = await promisify(execFile)('npm', args, { cwd: root, env: gateways.env })
  return stdout.trim().split('\n')
}

/** A key of `units` issued by the operator's command line on the instances' database. */
export async function issueKey(gateways: Gateways, units: number): Promise<string> {
  const args = ['run', '-s', 'gateway', '--', 'keys', 'issue', '--units', String(units), '--quiet']
  const { stdout } = await promisify(execFile)('npm', args, { cwd: root, env: gateways.env })
  return stdout.trim().split('\n').pop()!
}

export interface JsonReply {
  status: number
  headers: Headers
  body: any
}

/** A GET to an instance, with the key when one is given; the body parsed. */
export async function getJson(url: string, path: string, key?: string): Promise<JsonReply> {
  const response = await fetch(url + path, { headers: key ? { authorization: `Bearer ${key}` } : {} })
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined }
}

// ---- wallets -------------------------------------------------------------------------------

export interface Wallet {
  payment: CSL.PrivateKey
  stake: CSL.PrivateKey
  /** The base address of both keys. */
  address: string
  stakeAddress: string
  /** The enterprise address of the payment key. */
  enterpriseAddress: string
}

const credential = (key: CSL.PrivateKey) => CSL.Credential.from_keyhash(key.to_public().hash())
const NETWORK = 0

/** A wallet of fresh keys: its addresses never appeared on chain. */
export function freshWallet(payment = CSL.PrivateKey.generate_ed25519(), stake = CSL.PrivateKey.generate_ed25519()): Wallet {
  return {
    payment, stake,
    address: CSL.BaseAddress.new(NETWORK, credential(payment), credential(stake)).to_address().to_bech32(),
    stakeAddress: CSL.RewardAddress.new(NETWORK, credential(stake)).to_address().to_bech32(),
    enterpriseAddress: CSL.EnterpriseAddress.new(NETWORK, credential(payment)).to_address().to_bech32(),
  }
}

/** Pays each address `coin` from a devnet test wallet, in one transaction, in the next block. */
export function payTo(devnet: ChainADevnet, addresses: string[], coin = 2n * ADA) {
  const funder = devnet.walletKeys('wallet-1')
  devnet.submit(buildTx({ inputs: [largestUtxo(devnet, funder.address)], outputs: addresses.map(address => ({ address, coin })), signers: [funder.payment] }))
  devnet.produceBlock()
}

/** A challenge for the address and its signature by the wallet (as signData answers), ready for POST /auth/verify. */
export async function signedChallenge(url: string, from: string, wallet: Wallet, address: string) {
  const challenge = await sendFrom(url, 'POST', '/auth/challenge', { from, body: { address } })
  if (challenge.status !== 200) throw new Error(`POST /auth/challenge answered ${challenge.status}: ${JSON.stringify(challenge.body)}`)
  return { address, nonce: challenge.body.nonce as string, ...signDataWithWallet(address, challenge.body.payloadHex, wallet) }
}

/** A whole sign-in as the address: challenge, signData, verify. */
export async function signIn(url: string, from: string, wallet: Wallet, address = wallet.address): Promise<Reply> {
  return sendFrom(url, 'POST', '/auth/verify', { from, body: await signedChallenge(url, from, wallet, address) })
}
