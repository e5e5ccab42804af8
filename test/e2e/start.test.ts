import { startServer, stopAndWait, type RunningServer } from '../support/server.ts'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * The README's commands, for real: `CDS_ENV=self-hosted PORT=… npm start` serves the chain-A read
 * service on the embedded devnet, with mocked users (alice, no password).
 */
const root = join(__dirname, '..', '..')
let server: RunningServer
let url: string
let dataDir: string

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'chain-access-start-'))
  const env: NodeJS.ProcessEnv = { ...process.env, CDS_ENV: 'self-hosted', PORT: '0', cds_requires_db_credentials_url: join(dataDir, 'db.sqlite') }
  delete env.NODE_ENV
  delete env.CDS_REQUIRES_DB_CREDENTIALS_DATABASE // the PostgreSQL run's per-file database; this server keeps its SQLite file
  server = await startServer('npm', ['start'], { cwd: root, env })
  url = server.url
}, 60_000)

afterAll(async () => {
  if (server) await stopAndWait(server)
  rmSync(dataDir, { recursive: true, force: true })
}, 30_000)

test('the read service answers the tip of the embedded devnet to alice', async () => {
  const response = await fetch(`${url}/odata/v4/chaina-odata/Blocks?$orderby=height desc&$top=1&$select=height,hash,time`, {
    headers: { authorization: 'Basic ' + Buffer.from('alice:').toString('base64') },
  })
  const body = await response.json()
  expect(body.value).toEqual([{ height: expect.any(Number), hash: expect.stringMatching(/^[0-9a-f]{64}$/), time: expect.any(String) }])
  expect(response.status).toBe(200)
})

test('without credentials the self-hosted instance answers 401 as JSON with a code, asking for a login', async () => {
  const response = await fetch(`${url}/odata/v4/chaina-odata/Blocks`)
  expect((await response.json()).error.code).toBe('UNAUTHORIZED')
  expect(response.headers.get('www-authenticate')).toMatch(/^Basic/)
  expect(response.status).toBe(401)
})

test('what nothing serves answers 404 as JSON with a code, never an HTML page', async () => {
  const response = await fetch(`${url}/nothing/here`)
  expect((await response.json()).error.code).toBe('UNKNOWN_RESOURCE')
  expect(response.status).toBe(404)
})

test('the model is loaded once at start, the SQLite file deployed with it', () => {
  expect(server.output().match(/loaded model from/g)).toHaveLength(1)
  expect(server.output()).toMatch(/successfully deployed to .*db\.sqlite/)
})
