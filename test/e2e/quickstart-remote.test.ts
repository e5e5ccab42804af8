import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { streamedUpload } from '../support/raw-http.ts'
import { startServer, stopAndWait, type RunningServer } from '../support/server.ts'

/**
 * The README's chain-B quick start, as written, against a hosted gateway whose chain B is a remote
 * instance (docs/remote-products.md): `CDS_ENV=self-hosted npm start` as the remote, and `npm start`
 * with `CHAIN_B_REMOTE_URL` and chain B turned off as the gateway in front of it. The key is the
 * gateway's; the remote sees only the grant the gateway holds there for it.
 */
const root = join(__dirname, '..', '..')
const README = readFileSync(join(root, 'README.md'), 'utf8')
let remote: RunningServer
let gateway: RunningServer
let dataDir: string
let env: NodeJS.ProcessEnv

function shBlockAfter(marker: string): string {
  const block = /```sh\n([\s\S]*?)```/.exec(README.slice(README.indexOf(marker)))
  if (!block) throw new Error(`README.md has no sh block after '${marker}'`)
  return block[1]
}

function runSteps(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise(resolve => {
    execFile('bash', ['-e', '-c', script], { cwd: root, env, timeout: 150_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as NodeJS.ErrnoException).code ?? 1) || 1 : 0, stdout, stderr }))
  })
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'chain-access-remote-'))
  const base: NodeJS.ProcessEnv = { ...process.env, PORT: '0' }
  // The development profile, as a newcomer's `npm start` runs it, whichever database the suite runs on.
  for (const name of ['NODE_ENV', 'CDS_ENV', 'CDS_REQUIRES_DB_CREDENTIALS_DATABASE']) delete base[name]
  // Each in a folder of its own: the devnets keep their state beside the database.
  for (const folder of ['remote', 'gateway']) mkdirSync(join(dataDir, folder))
  remote = await startServer('npm', ['start'], { cwd: root, env: { ...base, CDS_ENV: 'self-hosted', cds_requires_db_credentials_url: join(dataDir, 'remote', 'db.sqlite') }, timeoutMs: 90_000 })
  env = {
    ...base, cds_requires_db_credentials_url: join(dataDir, 'gateway', 'db.sqlite'), CHAIN_B_ENABLED: 'false',
    CHAIN_B_REMOTE_URL: remote.url, CHAIN_B_REMOTE_AUTHORIZATION: `Basic ${Buffer.from('alice:').toString('base64')}`,
  }
  gateway = await startServer('npm', ['start'], { cwd: root, env, timeoutMs: 90_000 })
}, 200_000)

afterAll(async () => {
  if (gateway) await stopAndWait(gateway)
  if (remote) await stopAndWait(remote)
  rmSync(dataDir, { recursive: true, force: true })
}, 60_000)

test('the chain-B steps run unchanged through the gateway: anchored, verified, read under both spellings, proven and verified on the free lane', async () => {
  const steps = shBlockAfter('<!-- quickstart-steps')
  const setUp = steps.slice(0, steps.indexOf('\n# 1.'))
  const chainB = shBlockAfter('<!-- quickstart-chain-b-steps')
  const run = await runSteps(`${setUp}\n${chainB}`.replaceAll('http://localhost:4004', gateway.url))
  expect(run.code === 0 ? 'exit 0' : `exit ${run.code}\n${run.stderr.slice(-2000)}\n${run.stdout.slice(-2000)}`).toBe('exit 0')

  expect(run.stdout).toMatch(/"status":"confirmed"/)
  const lines = run.stdout.split('\n').map(line => line.trimEnd())
  const documents = lines.filter(line => line.includes('"payloadHash"'))
  expect(documents).toHaveLength(2)
  expect(JSON.parse(documents[0]).value).toEqual([expect.objectContaining({ status: 'anchored', anchorHeight: expect.any(Number) })])
  expect(lines.filter(Boolean).slice(-2)).toEqual(['VALID', 'true'])
  const charged = [...run.stderr.matchAll(/x-access-units-charged: (\d+)/g)].map(m => Number(m[1]))
  expect(charged.slice(0, 2)).toEqual([2, 25])
  expect(charged).toContain(50)

  // The remote holds one grant for the key, made by the gateway; it never saw the key.
  const grants = await fetch(`${remote.url}/odata/v4/operator/Grants?$filter=startswith(subject,'hosted:')`, { headers: { authorization: env.CHAIN_B_REMOTE_AUTHORIZATION! } })
  expect((await grants.json()).value).toEqual([expect.objectContaining({ product: 'chain-b', status: 'active' })])
  expect(remote.output()).not.toMatch(/cag_[A-Za-z0-9]/)
}, 200_000)

test('hostile calls to the remote product: answered with codes, charged nothing, and both processes keep serving', async () => {
  const issued = await runSteps('npm run -s gateway -- keys issue --units 100 --quiet')
  const key = issued.stdout.trim()
  expect(key).toMatch(/^cag_/)
  const send = async (path: string, init: RequestInit = {}) => {
    const response = await fetch(gateway.url + path, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers } })
    const text = await response.text()
    return { status: response.status, charged: response.headers.get('x-access-units-charged'), code: text.startsWith('{') ? JSON.parse(text).error?.code : undefined }
  }
  const answers = [
    await send('/odata/v4/chainb/anchorDocument', { method: 'POST', body: '{"sha256":' }),
    await send('/odata/v4/chainb/anchorDocument', { method: 'POST', body: JSON.stringify({ sha256: 'x'.repeat(2 * 1024 * 1024) }) }),
    await send('/odata/v4/chainb/anchorDocument', { method: 'POST', body: 'null' }),
    await send('/odata/v4/chainb/Jobs?$filter=' + encodeURIComponent("status eq '"), {}),
    await send('/odata/v4/chainb/getJobStatus', { method: 'POST', body: JSON.stringify({ jobId: 'not-a-uuid' }), headers: { 'x-agent-token': 'cgb_forged' } }),
  ]
  for (const answer of answers) {
    expect(answer.status).toBeGreaterThanOrEqual(400)
    expect(answer.status).toBeLessThan(500)
    expect(answer.code).toMatch(/^[A-Z_]+$/)
    expect(answer.charged).toBe('0')
  }
  // A body streamed without a length, past the 1 MiB a forwarded call takes: 413 before the rest is read.
  const streamed = await streamedUpload(`${gateway.url}/odata/v4/chainb/anchorDocument`, { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, 4)
  expect(streamed).toEqual({ status: 413, code: 'BODY_TOO_LARGE', charged: '0' })
  expect((await fetch(gateway.url + '/health')).status).toBe(200)
  expect((await fetch(remote.url + '/health')).status).toBe(200)
  expect(gateway.running() && remote.running()).toBe(true)
}, 60_000)
