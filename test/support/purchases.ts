import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { runningDevnet } from './chain-a.ts'
import { sendFrom, type Reply } from './gateway.ts'
import { startServer, stopAndWait, type RunningServer } from './server.ts'
import { signWith } from './sign.ts'
import { administer, onPostgres, quoted } from '../setup/postgres.ts'
import { Client } from 'pg'
import { CardanoExactClient } from '../../srv/chains/chain-a/payments/exact-client.ts'
import { forDatabase } from '../../srv/lib/plain-sql.ts'

/**
 * Gateway servers of the purchase lane as processes of their own, on one database of their own (a
 * SQLite file, or a PostgreSQL database copied from the run's template: the test process's server
 * would otherwise be one more instance sharing their limits) and on the devnet of the test process
 * (reached over its Blockfrost-compatible API, so the test makes its blocks and counts its reads),
 * with the buyer's and an observer's side.
 */

const root = join(__dirname, '..', '..')

export class PurchaseServers {
  readonly env: NodeJS.ProcessEnv
  /** The SQLite file the servers share; undefined on PostgreSQL. */
  readonly sqliteFile: string | undefined
  /** The PostgreSQL database the servers share (named after the run's template, so its teardown drops it); undefined on SQLite. */
  private readonly database: string | undefined
  private created: Promise<unknown> | undefined
  private readonly folder: string | undefined
  private readonly started: RunningServer[] = []

  constructor(settings: NodeJS.ProcessEnv = {}) {
    const devnet = runningDevnet()
    this.folder = onPostgres() ? undefined : mkdtempSync(join(tmpdir(), 'cag-purchases-'))
    this.sqliteFile = this.folder && join(this.folder, 'shared.sqlite')
    this.database = onPostgres() ? `${process.env.CAG_TEST_TEMPLATE}_purchases_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}` : undefined
    this.env = {
      ...process.env, PORT: '0', CDS_TYPESCRIPT: 'true', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON',
      ...(this.sqliteFile ? { CDS_REQUIRES_DB_CREDENTIALS_URL: this.sqliteFile } : { CDS_REQUIRES_DB_CREDENTIALS_DATABASE: this.database }),
      GATEWAY_ENABLED: 'true', CHAIN_A_DEVNET: 'false', BLOCKFROST_URL: devnet.url, CHAIN_A_NETWORK: 'devnet', CHAIN_B_CRAWLER_ENABLED: 'false',
      GATEWAY_X402_PAY_TO: devnet.wallets().at(-1)!.address, GATEWAY_X402_SETTLE_WAIT_MS: '200', GATEWAY_X402_CONFIRMATIONS: '1',
      ...settings,
    }
  }

  /** The servers' database exists (on PostgreSQL it is made on first use): a command line run with `env` may use it. */
  ready(): Promise<unknown> {
    if (!this.database) return Promise.resolve()
    return (this.created ??= administer(`CREATE DATABASE ${quoted(this.database)} TEMPLATE ${quoted(process.env.CAG_TEST_TEMPLATE!)}`))
  }

  /** A server with these settings on top of the shared ones. */
  async serve(settings: NodeJS.ProcessEnv = {}): Promise<RunningServer> {
    await this.ready()
    const server = await startServer(join(root, 'node_modules', '.bin', 'cds-serve'), [], { cwd: root, env: { ...this.env, ...settings } })
    this.started.push(server)
    return server
  }

  async stopAll() {
    for (const server of this.started) if (server.running()) await stopAndWait(server)
    if (this.folder) rmSync(this.folder, { recursive: true, force: true })
  }

  /** Rows of the purchases table the servers share. */
  async purchaseRows(): Promise<number> {
    const [{ count }] = await this.query('SELECT count(1) AS "count" FROM gateway_Purchases')
    return Number(count)
  }

  /**
   * What a read of the database the servers share answers: plain SQL with `?` placeholders, the
   * columns named with quoted aliases (PostgreSQL folds unquoted names to lower case).
   */
  async query(sql: string, ...values: SqlValue[]): Promise<Record<string, unknown>[]> {
    if (!this.sqliteFile) return this.onPostgres(sql, values)
    return this.onSqlite(true, db => db.prepare(sql).all(...values) as Record<string, unknown>[])
  }

  /** A write to the database the servers share, as `query` takes it: for a state a test cannot bring about through the servers. */
  async execute(sql: string, ...values: SqlValue[]): Promise<void> {
    if (!this.sqliteFile) return void (await this.onPostgres(sql, values))
    return this.onSqlite(false, db => {
      db.prepare(sql).run(...values)
    })
  }

  private async onPostgres(sql: string, values: SqlValue[]): Promise<Record<string, unknown>[]> {
    await this.ready()
    const client = new Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database: this.database! })
    await client.connect()
    try {
      return (await client.query(forDatabase(sql), values)).rows
    } finally {
      await client.end()
    }
  }

  private async onSqlite<T>(readOnly: boolean, work: (db: import('node:sqlite').DatabaseSync) => T): Promise<T> {
    const { DatabaseSync } = await import('node:sqlite')
    // The servers may be writing: wait for their lock rather than fail.
    const db = new DatabaseSync(this.sqliteFile!, { readOnly, timeout: 10_000 })
    try {
      return work(db)
    } finally {
      db.close()
    }
  }

  /** A key issued by the operator's command line on the servers' database (one server must have started: it made the schema). */
  async issueKey(units: number): Promise<string> {
    await this.ready()
    const args = ['run', '-s', 'gateway', '--', 'keys', 'issue', '--units', String(units), '--plan', 'standard', '--quiet']
    const { stdout } = await promisify(execFile)('npm', args, { cwd: root, env: this.env })
    return stdout.trim()
  }
}

type SqlValue = string | number | null

/** A POST from a chosen loopback address (limits count per client address). */
export function post(server: RunningServer, path: string, body: unknown, headers: Record<string, string> = {}, from = '127.0.0.1'): Promise<Reply> {
  return sendFrom(server.url, 'POST', path, { from, body, headers })
}

const headerOf = (reply: Reply) => (name: string) => {
  const value = reply.headers[name.toLowerCase()]
  return Array.isArray(value) ? value[0] : value
}

/** A quote from `server` for devnet wallet `wallet`, paid with the public x402 client: the PAYMENT-SIGNATURE header. */
export async function paymentFor(server: RunningServer, wallet: string, path: '/keys' | '/topup' = '/keys', headers: Record<string, string> = {}): Promise<Record<string, string>> {
  const keys = runningDevnet().walletKeys(wallet)
  const quote = await post(server, path, { pack: 'starter', payer: keys.address }, headers)
  if (quote.body?.error?.code !== 'PAYMENT_REQUIRED') throw new Error(`expected a quote, got ${quote.status} ${JSON.stringify(quote.body)}`)
  const http = new x402HTTPClient(new x402Client().setSpendControls(false).register('cardano:*', new CardanoExactClient(async (hex: string) => signWith(hex, keys.payment))))
  const payload = await http.createPaymentPayload(http.getPaymentRequiredResponse(headerOf(quote)))
  return http.encodePaymentSignatureHeader(payload)
}

export const paymentHeader = (payload: unknown) => ({ 'PAYMENT-SIGNATURE': Buffer.from(JSON.stringify(payload)).toString('base64') })

/** What anyone reading the chain learns of the newest x402 payment: its signed transaction, the quote id of its memo, an input to name as nonce. */
export interface ObservedPayment {
  txHash: string
  quoteId: string
  /** The signed transaction as the chain holds it (base64 of its CBOR), as a payload carries it. */
  transaction: string
  nonce: string
}

export async function newestObservedPayment(): Promise<ObservedPayment> {
  const devnet = runningDevnet()
  const read = async (path: string) => {
    const response = await fetch(devnet.url + path)
    if (!response.ok) throw new Error(`devnet ${path}: ${response.status}`)
    return response.json()
  }
  const memos: { tx_hash: string; json_metadata: { msg?: string[] } }[] = await read('/metadata/txs/labels/674?count=100&order=desc')
  const payment = memos.find(entry => entry.json_metadata.msg?.some(line => line.startsWith('x402 quote ')))
  if (!payment) throw new Error('no x402 payment on chain yet')
  const quoteId = payment.json_metadata.msg!.find(line => line.startsWith('x402 quote '))!.slice('x402 quote '.length)
  const { cbor } = await read(`/txs/${payment.tx_hash}/cbor`)
  const input = CSL.FixedTransaction.from_hex(cbor).body().inputs().get(0)
  return { txHash: payment.tx_hash, quoteId, transaction: Buffer.from(cbor, 'hex').toString('base64'), nonce: `${input.transaction_id().to_hex()}#${input.index()}` }
}
