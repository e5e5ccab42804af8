import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ChainBPluginStandIn, PLUGIN_AUTHORIZATION } from '../support/chain-b-plugin.ts'
import { streamedUpload } from '../support/raw-http.ts'
import { startServer, stopAndWait, type RunningServer } from '../support/server.ts'

/**
 * Hostile calls against `npm start` as a hosted gateway whose chain B is the chain-B plugin's own API
 * (CHAIN_B_REMOTE_KIND=plugin), in a process of its own (jest keeps CAP from stopping on an uncaught
 * error; a real process does not): each answered with a code and charged nothing, also when the
 * plugin answers nonsense, and the gateway keeps serving.
 */
const root = join(__dirname, '..', '..')
const plugin = new ChainBPluginStandIn()
let gateway: RunningServer
let dataDir: string
let env: NodeJS.ProcessEnv

beforeAll(async () => {
  await plugin.start()
  dataDir = mkdtempSync(join(tmpdir(), 'chain-access-plugin-'))
  env = { ...process.env, PORT: '0', cds_requires_db_credentials_url: join(dataDir, 'db.sqlite') }
  // The development profile, as `npm start` runs it, whichever database the suite runs on.
  for (const name of ['NODE_ENV', 'CDS_ENV', 'CDS_REQUIRES_DB_CREDENTIALS_DATABASE']) delete env[name]
  Object.assign(env, {
    CHAIN_B_ENABLED: 'false', CHAIN_B_REMOTE_KIND: 'plugin', CHAIN_B_REMOTE_URL: plugin.url, CHAIN_B_REMOTE_AUTHORIZATION: PLUGIN_AUTHORIZATION,
    CHAIN_B_REMOTE_SESSION_ID: plugin.sessionId, CHAIN_B_REMOTE_CONTRACT_ADDRESS: plugin.contractAddress,
  })
  gateway = await startServer('npm', ['start'], { cwd: root, env, timeoutMs: 90_000 })
}, 120_000)

afterAll(async () => {
  if (gateway) await stopAndWait(gateway)
  await plugin.stop()
  rmSync(dataDir, { recursive: true, force: true })
}, 30_000)

function issueKey(): Promise<string> {
  return new Promise((resolve, reject) => execFile('npm', ['run', '-s', 'gateway', '--', 'keys', 'issue', '--units', '1000', '--quiet'], { cwd: root, env }, (error, stdout) =>
    (error ? reject(error) : resolve(stdout.trim()))))
}

test('hostile calls through the plugin kind: codes, nothing charged, the gateway keeps serving', async () => {
  const key = await issueKey()
  expect(key).toMatch(/^cag_/)
  const send = async (path: string, init: RequestInit = {}) => {
    const response = await fetch(gateway.url + path, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers } })
    const text = await response.text()
    return { path, status: response.status, charged: response.headers.get('x-access-units-charged'), code: text.startsWith('{') ? JSON.parse(text).error?.code : text.slice(0, 80) }
  }
  const anchoredAnswer = await fetch(gateway.url + '/odata/v4/chainb/anchorDocument', { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ sha256: 'ab'.repeat(32) }) })
  expect(anchoredAnswer.status).toBe(200)
  const { jobId: jobIdOf, documentId: documentIdOf } = (await anchoredAnswer.json()) as { jobId: string; documentId: string }

  const hostile = [
    ['/odata/v4/chainb/anchorDocument', { method: 'POST', body: '{"sha256":' }],
    ['/odata/v4/chainb/anchorDocument', { method: 'POST', body: '[{"sha256":"ab"}]' }],
    ['/odata/v4/chainb/anchorDocument', { method: 'POST', body: 'null' }],
    ['/odata/v4/chainb/anchorDocument', { method: 'POST', body: JSON.stringify({ sha256: null }) }],
    ['/odata/v4/chainb/anchorDocument', { method: 'POST', body: JSON.stringify({ sha256: ['ab'.repeat(32)] }) }],
    ['/odata/v4/chainb/anchorDocument', { method: 'POST', body: JSON.stringify({ sha256: { toString: 'ab'.repeat(32) } }) }],
    ['/odata/v4/chainb/getJobStatus', { method: 'POST', body: JSON.stringify({ jobId: null }) }],
    ['/odata/v4/chainb/getJobStatus', { method: 'POST', body: JSON.stringify({ jobId: ['x'] }) }],
    ['/odata/v4/chainb/anchorDocument', { method: 'POST', body: JSON.stringify({ sha256: 'x'.repeat(2 * 1024 * 1024) }) }],
    ['/odata/v4/chainb/anchorDocument', { method: 'POST', body: JSON.stringify({ sha256: 'ab'.repeat(32), idempotencyKey: ['a'] }) }],
    ['/odata/v4/chainb/getJobStatus', { method: 'POST', body: JSON.stringify({ jobId: { $ne: null } }) }],
    ['/odata/v4/chainb/getJobStatus', { method: 'POST', body: JSON.stringify({ jobId: '../../etc/passwd' }) }],
    ["/odata/v4/chainb/verifyDocument(documentId='a,b=c',providedSha256=''')", {}],
    ['/odata/v4/chainb/verifyDocument(documentId=@d)?@d=' + encodeURIComponent("'x'"), {}],
    ["/odata/v4/chainb/Documents('" + '%27'.repeat(50) + "')", {}],
    ['/odata/v4/chainb/Documents?$filter=' + encodeURIComponent("ID eq 'x') or (true"), {}],
    ['/odata/v4/chainb/Jobs', {}],
    ["/odata/v4/chainb-verify/verifyAttestation(attestationId='" + 'z'.repeat(5000), {}],
    ["/odata/v4/chainb-verify/verifyAttestation(attestationId='a',attestationId='b')", {}],
  ] as const
  for (const [path, init] of hostile) {
    const answer = await send(path, init as RequestInit)
    expect({ path: path.slice(0, 80), status: answer.status >= 400 && answer.status < 600 && answer.status !== 500, charged: answer.charged, code: typeof answer.code }).toEqual({ path: path.slice(0, 80), status: true, charged: '0', code: 'string' })
  }
  // A second key sees nothing of the first key's records, and cannot poll its job.
  const second = await issueKey()
  const asSecond = async (path: string, init: RequestInit = {}) => (await fetch(gateway.url + path, { ...init, headers: { authorization: `Bearer ${second}`, 'content-type': 'application/json' } }))
  expect((await asSecond('/odata/v4/chainb/getJobStatus', { method: 'POST', body: JSON.stringify({ jobId: jobIdOf }) })).status).toBe(404)
  expect((await asSecond(`/odata/v4/chainb/Documents(${documentIdOf})`)).status).toBe(404)
  expect(await (await asSecond('/odata/v4/chainb/Documents')).json()).toEqual({ value: [] })

  const streamed = await streamedUpload(`${gateway.url}/odata/v4/chainb/anchorDocument`, { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, 4)
  expect(streamed).toEqual({ status: 413, code: 'BODY_TOO_LARGE', charged: '0' })

  // A plugin that answers nonsense: 502, refunded.
  for (const nonsense of ['<html>', '[1,2', '"text"', '[]']) {
    plugin.answerRaw = nonsense
    const answer = await send('/odata/v4/chainb/anchorDocument', { method: 'POST', body: JSON.stringify({ sha256: 'cd'.repeat(32) }) })
    expect({ nonsense, status: answer.status, charged: answer.charged }).toEqual({ nonsense, status: 502, charged: '0' })
  }
  plugin.answerRaw = undefined
  expect((await fetch(gateway.url + '/health')).status).toBe(200)
  expect(gateway.running()).toBe(true)
  expect(gateway.output()).not.toContain(key)
  expect(gateway.output()).not.toMatch(/ngat_[0-9a-f]{64}/)
}, 120_000)
