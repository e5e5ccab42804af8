import { execFile } from 'node:child_process'
import { startServer, stopAndWait, type RunningServer } from '../support/server.ts'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

/**
 * The operator's path, for real: `npm run gateway -- keys …` against the development database, and
 * `npm start` running the hosted gateway on it.
 */
const root = join(__dirname, '..', '..')
const run = promisify(execFile)
let server: RunningServer | undefined
let url: string
let dataDir: string
let env: NodeJS.ProcessEnv

const gateway = async (...args: string[]) => (await run('npm', ['run', '-s', 'gateway', '--', ...args], { cwd: root, env })).stdout

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'chain-access-hosted-'))
  env = { ...process.env, PORT: '0', cds_requires_db_credentials_url: join(dataDir, 'db.sqlite') }
  delete env.NODE_ENV
  delete env.CDS_REQUIRES_DB_CREDENTIALS_DATABASE // the PostgreSQL run's per-file database; this server keeps its SQLite file
  delete env.CDS_ENV
}, 10_000)

afterAll(async () => {
  if (server) await stopAndWait(server)
  rmSync(dataDir, { recursive: true, force: true })
}, 30_000)

async function start() {
  server = await startServer('npm', ['start'], { cwd: root, env })
  url = server.url
}

test('a key issued on the command line is metered by the hosted gateway; credit and revoke take effect', async () => {
  const issued = await gateway('keys', 'issue', '--units', '5', '--plan', 'trial', '--label', 'e2e')
  const key = /(cag_[A-Za-z0-9_-]{49})/.exec(issued)![1]
  const id = /id ([0-9a-f-]{36})/.exec(issued)![1]
  expect(issued).toContain('plan trial')
  expect(await gateway('keys', 'list')).toContain(id)

  await start()
  const authorization = { authorization: `Bearer ${key}` }
  const read = await fetch(`${url}/odata/v4/chaina-odata/Blocks?$top=1`, { headers: authorization })
  expect(read.status).toBe(200)
  expect([read.headers.get('x-access-units-charged'), read.headers.get('x-access-units-left')]).toEqual(['1', '4'])
  expect((await fetch(`${url}/odata/v4/chaina-odata/Blocks`)).status).toBe(401)

  expect(await gateway('keys', 'credit', id, '10')).toContain('14 left')
  expect((await (await fetch(`${url}/me`, { headers: authorization })).json()).unitsLeft).toBe(14)

  expect(await gateway('keys', 'revoke', id)).toContain('revoked')
  expect((await fetch(`${url}/odata/v4/chaina-odata/Blocks?$top=1`, { headers: authorization })).status).toBe(401)
}, 90_000)
