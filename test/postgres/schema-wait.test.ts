import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { administer, quoted } from '../setup/postgres.ts'

/**
 * A server on PostgreSQL whose database has no schema yet (a first deploy, the deployer task still
 * running) waits for it, saying so once, and serves once the schema is deployed. A server outside
 * the test profile (development: the embedded devnets) on an empty database of this test's own.
 */

const ROOT = join(__dirname, '..', '..')
const PASSWORD = `pw-${Math.random().toString(36).slice(2)}-not-for-logs`
const database = `cag_wait_${process.pid}_${Date.now().toString(36)}`
const env = {
  ...process.env, NODE_ENV: 'development', CDS_ENV: 'pg', CDS_REQUIRES_DB_CREDENTIALS_DATABASE: database, CDS_REQUIRES_DB_CREDENTIALS_PASSWORD: PASSWORD,
  PORT: '0', CDS_TYPESCRIPT: 'true', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', CDS_SCHEMA_WAIT_RETRY_MS: '300',
  CHAIN_A_DEVNET_ACTIVITY: 'false', CHAIN_B_DEVNET_ACTIVITY: 'false', CHAIN_B_DEVNET_STATE_DIR: 'none', CHAIN_A_DEVNET_STATE_DIR: 'none',
}

let server: ChildProcess | undefined
let output = ''

beforeAll(async () => {
  await administer(`CREATE DATABASE ${quoted(database)}`)
})
afterAll(async () => {
  if (server?.pid && server.exitCode === null) {
    const exited = new Promise(resolve => server!.once('exit', resolve))
    process.kill(-server.pid, 'SIGTERM')
    await exited
  }
  await administer(`DROP DATABASE IF EXISTS ${quoted(database)} WITH (FORCE)`)
})

async function until(what: string, probe: () => boolean, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${output}`)
    if (server?.exitCode !== null) throw new Error(`the server exited with ${server?.exitCode}:\n${output}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}


test('the server waits for the schema with one clear line, then serves once it is deployed', async () => {
  server = spawn(join(ROOT, 'node_modules', '.bin', 'cds-serve'), [], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  server.stdout!.on('data', chunk => (output += chunk))
  server.stderr!.on('data', chunk => (output += chunk))

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
