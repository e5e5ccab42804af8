import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, stopAndWait, type RunningServer } from '../support/server.ts'

/**
 * An exception or a rejection that escapes every handler is logged with its stack and the server
 * goes on serving: the server runs as `npm start` runs it (CAP's own setting for uncaught errors
 * in force, not jest's), with a preload that throws outside any request on demand.
 */
const root = join(__dirname, '..', '..')
let server: RunningServer
let dataDir: string
let trigger: string

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'chain-access-keeps-serving-'))
  trigger = join(dataDir, 'throw-now')
  const env: NodeJS.ProcessEnv = {
    ...process.env, CDS_ENV: 'self-hosted', PORT: '0', CDS_TYPESCRIPT: 'true', STRAY_ERRORS_TRIGGER: trigger,
    NODE_OPTIONS: `--disable-warning=MODULE_TYPELESS_PACKAGE_JSON --import=${join(root, 'test', 'support', 'stray-errors.ts')}`,
    cds_requires_db_credentials_url: join(dataDir, 'db.sqlite'),
  }
  delete env.NODE_ENV
  delete env.CDS_REQUIRES_DB_CREDENTIALS_DATABASE
  server = await startServer(join(root, 'node_modules', '.bin', 'cds-serve'), [], { cwd: root, env })
}, 60_000)

afterAll(async () => {
  if (server) await stopAndWait(server)
  rmSync(dataDir, { recursive: true, force: true })
}, 30_000)

test('a stray exception and an unhandled rejection are logged with their stacks, and the server answers on', async () => {
  writeFileSync(trigger, '')
  const logged = () => server.output().includes('stray exception from a timer') && server.output().includes('stray rejection')
  for (let i = 0; i < 100 && !logged(); i++) await new Promise(resolve => setTimeout(resolve, 50))
  const log = server.output()
  expect(existsSync(trigger)).toBe(false)
  expect(log).toMatch(/uncaught exception \(the server goes on serving\)[\s\S]*stray exception from a timer[\s\S]*at /)
  expect(log).toMatch(/unhandled rejection \(the server goes on serving\)[\s\S]*stray rejection/)
  const health = await fetch(`${server.url}/health`)
  expect(health.status).toBe(200)
  expect(server.running()).toBe(true)
})
