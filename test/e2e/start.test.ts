import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * The README's commands, for real: `CDS_ENV=self-hosted PORT=… npm start` serves the chain-A read
 * service on the embedded devnet, with mocked users (alice, no password).
 */
const root = join(__dirname, '..', '..')
let server: ChildProcess
let url: string
let dataDir: string

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'chain-access-start-'))
  const env: NodeJS.ProcessEnv = { ...process.env, CDS_ENV: 'self-hosted', PORT: '0', cds_requires_db_credentials_url: join(dataDir, 'db.sqlite') }
  delete env.NODE_ENV
  server = spawn('npm', ['start'], { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  url = await new Promise<string>((resolve, reject) => {
    let output = ''
    const timer = setTimeout(() => reject(new Error(`npm start did not listen in time:\n${output}`)), 45_000)
    const watch = (chunk: Buffer) => {
      output += chunk
      const listening = /server listening on \{ url: '([^']+)'/.exec(output)
      if (listening) {
        clearTimeout(timer)
        resolve(listening[1])
      }
    }
    server.stdout!.on('data', watch)
    server.stderr!.on('data', watch)
    server.on('exit', code => reject(new Error(`npm start exited with ${code}:\n${output}`)))
  })
}, 60_000)

afterAll(() => {
  if (server?.pid) process.kill(-server.pid, 'SIGTERM')
  rmSync(dataDir, { recursive: true, force: true })
})

test('the read service answers the tip of the embedded devnet to alice', async () => {
  const response = await fetch(`${url}/odata/v4/chaina-odata/Blocks?$orderby=height desc&$top=1&$select=height,hash,time`, {
    headers: { authorization: 'Basic ' + Buffer.from('alice:').toString('base64') },
  })
  const body = await response.json()
  expect(body.value).toEqual([{ height: expect.any(Number), hash: expect.stringMatching(/^[0-9a-f]{64}$/), time: expect.any(String) }])
  expect(response.status).toBe(200)
})

test('without credentials the self-hosted instance answers 401', async () => {
  const response = await fetch(`${url}/odata/v4/chaina-odata/Blocks`)
  expect(response.status).toBe(401)
})
