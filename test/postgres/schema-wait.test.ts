import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { administer, onDatabase, quoted } from '../setup/postgres.ts'

/**
 * A server on PostgreSQL whose database has no schema yet (a first deploy, the deployer task still
 * running) waits for it, saying so once, and serves once the schema is deployed. A server outside
 * the test profile (development: the embedded devnets) on an empty database of this test's own.
 * The same for a database that refuses connections at start, and for a pool that cannot hand out
 * a connection in time (a small pool on a busy machine): the server waits, never exits.
 */

const ROOT = join(__dirname, '..', '..')
const PASSWORD = `pw-${Math.random().toString(36).slice(2)}-not-for-logs`
const database = `cag_wait_${process.pid}_${Date.now().toString(36)}`
const env = {
  ...process.env, NODE_ENV: 'development', CDS_ENV: 'pg', CDS_REQUIRES_DB_CREDENTIALS_DATABASE: database, CDS_REQUIRES_DB_CREDENTIALS_PASSWORD: PASSWORD,
  PORT: '0', CDS_TYPESCRIPT: 'true', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', CDS_SCHEMA_WAIT_RETRY_MS: '300',
  DEVNET_ACTIVITY: 'false', CHAIN_B_DEVNET_ACTIVITY: 'false', CHAIN_B_DEVNET_STATE_DIR: 'none', DEVNET_STATE_DIR: 'none',
}

let server: ChildProcess | undefined
let output = ''

beforeAll(async () => {
  await administer(`CREATE DATABASE ${quoted(database)}`)
})
afterEach(async () => {
  if (server?.pid && server.exitCode === null) {
    const exited = new Promise(resolve => server!.once('exit', resolve))
    process.kill(-server.pid, 'SIGTERM')
    await exited
  }
  server = undefined
  output = ''
  await administer(`ALTER DATABASE ${quoted(database)} ALLOW_CONNECTIONS true`)
})
afterAll(async () => {
  await administer(`ALTER DATABASE ${quoted(database)} ALLOW_CONNECTIONS true`, `DROP DATABASE IF EXISTS ${quoted(database)} WITH (FORCE)`)
})

function serve(extraEnv: NodeJS.ProcessEnv = {}) {
  server = spawn(join(ROOT, 'node_modules', '.bin', 'cds-serve'), [], { cwd: ROOT, env: { ...env, ...extraEnv }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  server.stdout!.on('data', chunk => (output += chunk))
  server.stderr!.on('data', chunk => (output += chunk))
}

const LISTENING = /server listening on \{ url: '([^']+)'/

async function until(what: string, probe: () => boolean, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${output}`)
    if (server?.exitCode !== null) throw new Error(`the server exited with ${server?.exitCode}:\n${output}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}


test('the server waits for the schema with one clear line, then serves once it is deployed', async () => {
  serve()

  await until('the waiting line', () => /waiting for the database schema/.test(output))
  expect(output).toMatch(/waiting for the database schema: (\d+) of \1 tables are missing .*deploy it with the deployer task/)
  await new Promise(resolve => setTimeout(resolve, 1000))
  expect(output.match(/waiting for the database schema/g)).toHaveLength(1)
  expect(output).not.toMatch(/server listening/)

  await promisify(execFile)(process.execPath, ['db/deploy.js'], { cwd: ROOT, env: { ...env, NODE_ENV: 'test' } })
  await until('the server to listen', () => /server listening on \{ url: '([^']+)'/.test(output))
  expect(output).toMatch(/the database schema is deployed; starting/)
  const url = /server listening on \{ url: '([^']+)'/.exec(output)![1]
  const prices = await fetch(`${url}/prices`)
  expect(prices.status).toBe(200)
  expect(JSON.stringify(await prices.json())).toContain('chainb-write')
  expect(output).not.toContain(PASSWORD)
}, 120_000)

test('a database that refuses connections at start: the server says so once and starts when it answers', async () => {
  await administer(`ALTER DATABASE ${quoted(database)} ALLOW_CONNECTIONS false`)
  serve()
  await until('the not-answering line', () => /the database does not answer yet/.test(output))
  await new Promise(resolve => setTimeout(resolve, 1500))
  expect(output.match(/the database does not answer yet/g)).toHaveLength(1)
  expect(output).not.toMatch(LISTENING)

  await administer(`ALTER DATABASE ${quoted(database)} ALLOW_CONNECTIONS true`)
  await until('the server to listen', () => LISTENING.test(output))
  expect((await fetch(`${LISTENING.exec(output)![1]}/prices`)).status).toBe(200)
  expect(output).not.toContain(PASSWORD)
}, 120_000)

test('a pool that cannot hand out a connection in time at start (1 connection, 1 ms): the server starts and serves, and its secondary indexes are made', async () => {
  await onTheDatabase('DROP INDEX IF EXISTS chaina_blocks_time')
  serve({ CDS_CONFIG: JSON.stringify({ requires: { db: { pool: { max: 1, acquireTimeoutMillis: 1 } } } }) })
  await until('the server to listen', () => LISTENING.test(output))
  expect(output).toMatch(/the database does not answer yet \(ResourceRequest timed out\)/)
  expect(output).not.toMatch(/index not created/)
  let prices = await fetch(`${LISTENING.exec(output)![1]}/prices`)
  for (let i = 0; i < 20 && prices.status !== 200; i++) prices = await fetch(`${LISTENING.exec(output)![1]}/prices`)
  expect(prices.status).toBe(200)
  expect(await onTheDatabase("SELECT indexname FROM pg_indexes WHERE indexname = 'chaina_blocks_time'")).toHaveLength(1)
}, 120_000)

const onTheDatabase = async (sql: string): Promise<unknown[]> => (await onDatabase(database, sql))[0]
