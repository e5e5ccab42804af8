import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { administer, onDatabase, quoted } from '../setup/postgres.ts'
import { startServer, stopAndWait, type RunningServer } from '../support/server.ts'

/**
 * A hosted instance on a PostgreSQL database of its own, with a small pool:
 * - 200 concurrent metered reads on 2 connections with a 100 ms acquire time-out (a pool far too
 *   small for the burst): every answer is 200, or 503 with a code and Retry-After (never a 500,
 *   never a pool time-out without a code), and the units are exact at once (no reservation left
 *   for the sweeper);
 * - the database taken away (connections refused, every backend terminated) and given back:
 *   meanwhile metered calls answer 503 DATABASE_UNAVAILABLE uncharged; afterwards the same
 *   instance serves again without a restart, and every balance equals its ledger.
 */

jest.setTimeout(300_000)

const ROOT = join(__dirname, '..', '..')
const database = `cag_outage_${process.pid}_${Date.now().toString(36)}`
const READ = '/odata/v4/chaina-odata/Transactions?$top=1'
const PRICE = 1
const UNITS = 1000
const env: NodeJS.ProcessEnv = {
  ...process.env, NODE_ENV: 'development', CDS_ENV: 'pg', CDS_REQUIRES_DB_CREDENTIALS_DATABASE: database, PORT: '0', CDS_TYPESCRIPT: 'true',
  NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON',
  DEVNET_ACTIVITY: 'false', CHAIN_B_DEVNET_ACTIVITY: 'false', DEVNET_STATE_DIR: 'none', CHAIN_B_DEVNET_STATE_DIR: 'none',
  // One key sends every call: its own limits stay out of the way of the instance's.
  GATEWAY_RATE_PER_SECOND: '100000', GATEWAY_BURST: '100000', GATEWAY_MAX_CALLS_IN_FLIGHT: '100000',
}
delete env.GATEWAY_MAX_INSTANCE_CALLS

let server: RunningServer | undefined

beforeAll(async () => {
  await administer(`CREATE DATABASE ${quoted(database)}`)
  await promisify(execFile)(process.execPath, ['db/deploy.js'], { cwd: ROOT, env: { ...env, NODE_ENV: 'test' } })
}, 240_000)

afterAll(async () => {
  await administer(`ALTER DATABASE ${quoted(database)} ALLOW_CONNECTIONS true`, `DROP DATABASE IF EXISTS ${quoted(database)} WITH (FORCE)`)
}, 60_000)

/** An instance with this pool (`cds.requires.db.pool`) for the tests of a describe block. */
function instanceWithPool(pool: { max: number; acquireTimeoutMillis: number }) {
  beforeAll(async () => {
    const config = JSON.stringify({ requires: { db: { pool } } })
    server = await startServer(join(ROOT, 'node_modules', '.bin', 'cds-serve'), [], { cwd: ROOT, env: { ...env, CDS_CONFIG: config }, timeoutMs: 120_000 })
  }, 120_000)
  afterAll(async () => {
    if (server) await stopAndWait(server)
    server = undefined
  }, 60_000)
}

async function issueKey(units: number): Promise<{ id: string; key: string }> {
  const args = ['run', '-s', 'gateway', '--', 'keys', 'issue', '--units', String(units), '--quiet']
  const { stdout } = await promisify(execFile)('npm', args, { cwd: ROOT, env })
  const key = stdout.trim().split('\n').pop()!
  const [row] = await query('SELECT id FROM gateway_apikeys ORDER BY createdat DESC LIMIT 1')
  return { id: row.id, key }
}

/** A statement on the instance's database, from a connection of the test's own. */
const query = async (sql: string): Promise<any[]> => (await onDatabase(database, sql))[0]

interface Answer {
  status: number
  code?: string
  charged: string | null
  retryAfter: string | null
}

async function read(key: string): Promise<Answer> {
  const response = await fetch(server!.url + READ, { headers: { authorization: `Bearer ${key}` } })
  const text = await response.text()
  const code = response.status === 200 ? undefined : JSON.parse(text).error?.code
  return { status: response.status, code, charged: response.headers.get('x-access-units-charged'), retryAfter: response.headers.get('retry-after') }
}

/** Balance, ledger sum and charges still pending of a key, read from the database. */
async function accountOf(id: string) {
  const [key] = await query(`SELECT unitsleft FROM gateway_apikeys WHERE id = '${id}'`)
  const [ledger] = await query(`SELECT coalesce(sum(units), 0) AS sum, count(*) FILTER (WHERE state = 'pending') AS pending FROM gateway_ledgerentries WHERE apikey_id = '${id}'`)
  return { balance: Number(key.unitsleft), ledger: Number(ledger.sum), pending: Number(ledger.pending) }
}

/** Polls until the key's charges are all resolved: commits follow the answer by milliseconds, refunds precede it. */
async function settledAccountOf(id: string) {
  for (let i = 0; i < 300; i++) {
    const account = await accountOf(id)
    if (account.pending === 0) return account
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  return accountOf(id)
}

const BUSY_CODES = ['SERVER_BUSY', 'DATABASE_BUSY']

describe('a burst on a pool far too small', () => {
  instanceWithPool({ max: 2, acquireTimeoutMillis: 100 })

  test('200 concurrent metered reads on a small pool: 200 or 503 with a code and Retry-After, never a 500; units exact at once', async () => {
    const { id, key } = await issueKey(UNITS)
    const answers = await Promise.all(Array.from({ length: 200 }, () => read(key)))
    const served = answers.filter(answer => answer.status === 200)
    const refused = answers.filter(answer => answer.status !== 200)
    expect(refused.filter(answer => answer.status !== 503 || !BUSY_CODES.includes(answer.code!) || !answer.retryAfter || answer.charged !== '0')).toEqual([])
    expect(served.every(answer => answer.charged === String(PRICE))).toBe(true)
    // A client that honours Retry-After is served once the burst has passed.
    let retried = await read(key)
    for (let i = 0; i < 30 && retried.status === 503; i++) {
      await new Promise(resolve => setTimeout(resolve, Number(retried.retryAfter) * 1000))
      retried = await read(key)
    }
    expect(retried).toMatchObject({ status: 200, charged: String(PRICE) })
    served.push(retried)
    // Refunds happen before the answer leaves, commits right after it: nothing waits for the sweeper.
    const account = await settledAccountOf(id)
    expect(account).toEqual({ balance: UNITS - PRICE * served.length, ledger: UNITS - PRICE * served.length, pending: 0 })
  })
})

describe('a database outage', () => {
  instanceWithPool({ max: 4, acquireTimeoutMillis: 1000 })

  test('the database taken away and given back: 503 DATABASE_UNAVAILABLE uncharged meanwhile, then the same instance serves again without a restart', async () => {
    const { id, key } = await issueKey(UNITS)
    expect((await read(key)).status).toBe(200)
    let charged = PRICE
    // Its commit written first: a commit the outage cuts is left to the sweeper, by design.
    expect((await settledAccountOf(id)).pending).toBe(0)

    await administer(`ALTER DATABASE ${quoted(database)} ALLOW_CONNECTIONS false`, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${database}' AND pid <> pg_backend_pid()`)
    const during: Answer[] = []
    for (let i = 0; i < 3; i++) during.push(await read(key))
    for (const answer of during) expect(answer).toEqual({ status: 503, code: 'DATABASE_UNAVAILABLE', charged: '0', retryAfter: '2' })

    await administer(`ALTER DATABASE ${quoted(database)} ALLOW_CONNECTIONS true`)
    const after: Answer[] = []
    for (let i = 0; i < 120 && after.at(-1)?.status !== 200; i++) {
      after.push(await read(key))
      if (after.at(-1)!.status !== 200) await new Promise(resolve => setTimeout(resolve, 250))
    }
    // Until a new connection is made, the pool may still be waiting on its time-out: a 503 with a code either way.
    expect(after.filter(answer => answer.status !== 200 && !(answer.status === 503 && ['DATABASE_UNAVAILABLE', 'DATABASE_BUSY'].includes(answer.code!) && answer.charged === '0'))).toEqual([])
    expect(after.at(-1)).toMatchObject({ status: 200, charged: String(PRICE) })
    charged += PRICE
    // And keeps serving: not one lucky connection.
    for (let i = 0; i < 5; i++) {
      expect(await read(key)).toMatchObject({ status: 200 })
      charged += PRICE
    }

    expect(await settledAccountOf(id)).toEqual({ balance: UNITS - charged, ledger: UNITS - charged, pending: 0 })
    expect(server!.output()).toMatch(/\[db\] - .*database (connection was lost|cannot be reached)/)
    expect(server!.output()).toMatch(/\[db\] - the database answers again/)
  })
})
