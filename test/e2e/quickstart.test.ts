import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { answerOf, connectToolServer, type ServerConfiguration } from '../support/mcp.ts'
import { startServer, stopAndWait, type RunningServer } from '../support/server.ts'

/**
 * The README's quick start, run as written: `npm start` as its set-up block says, then its steps
 * block in bash, from issuing a key to a confirmed, metered transfer. Only the port differs.
 */
const root = join(__dirname, '..', '..')
const README = readFileSync(join(root, 'README.md'), 'utf8')
let server: RunningServer
let dataDir: string
let env: NodeJS.ProcessEnv

/** The first ```sh block after `marker`. */
function shBlockAfter(marker: string): string {
  const at = README.indexOf(marker)
  if (at < 0) throw new Error(`README.md has no '${marker}'`)
  const block = /```sh\n([\s\S]*?)```/.exec(README.slice(at))
  if (!block) throw new Error(`README.md has no sh block after '${marker}'`)
  return block[1]
}

function runSteps(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise(resolve => {
    execFile('bash', ['-e', '-c', script], { cwd: root, env, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as NodeJS.ErrnoException).code ?? 1) || 1 : 0, stdout, stderr }))
  })
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'chain-access-quickstart-'))
  env = { ...process.env, PORT: '0', cds_requires_db_credentials_url: join(dataDir, 'db.sqlite') }
  // The development profile, as a newcomer's `npm start` runs it, whichever database the suite runs on.
  for (const name of ['NODE_ENV', 'CDS_ENV', 'CDS_REQUIRES_DB_CREDENTIALS_DATABASE']) delete env[name]
  server = await startServer('npm', ['start'], { cwd: root, env, timeoutMs: 90_000 })
}, 120_000)

afterAll(async () => {
  if (server) await stopAndWait(server)
  rmSync(dataDir, { recursive: true, force: true })
}, 30_000)

test('chain A is read through the kind CHAIN_A_KIND names (test/koios/ and test/ogmios/ run this file on those kinds)', () => {
  expect(server.output()).toContain(`connect to chain-a > ${process.env.CHAIN_A_KIND ?? 'blockfrost'}`)
})

test('the steps keep what they write in fresh temporary files (runs side by side, as the kinds\' quick starts in CI, share none)', () => {
  for (const block of ['<!-- quickstart-steps', '<!-- quickstart-chain-b-steps', '<!-- quickstart-analytics-steps', '<!-- quickstart-lanes-steps']) {
    expect({ block, fixed: shBlockAfter(block).match(/\/tmp\/[\w.-]+/g) }).toEqual({ block, fixed: null })
  }
})

test('the set-up is the two commands npm ci and npm start', () => {
  expect(shBlockAfter('## Quick start').trim().split('\n')).toEqual(['npm ci', 'npm start'])
})

test('the steps reach a signed, submitted, confirmed transfer, each call charged as the price table says', async () => {
  const steps = shBlockAfter('<!-- quickstart-steps')
  expect(steps).toContain('http://localhost:4004')
  const run = await runSteps(steps.replaceAll('http://localhost:4004', server.url))
  expect({ code: run.code, stderr: run.stderr.slice(-2000) }).toMatchObject({ code: 0 })

  expect(run.stdout).toMatch(/"value":\[\{"height":\d+,"hash":"[0-9a-f]{64}"/)
  expect(run.stdout).toMatch(/\npending\n/)
  expect(run.stdout).toMatch(/\nsubmitted\n/)
  expect(run.stdout).toMatch(/"status":"confirmed","confirmations":\d+,"blockHeight":\d+/)

  const charged = [...run.stderr.matchAll(/x-access-units-charged: (\d+)/g)].map(m => Number(m[1]))
  const left = [...run.stderr.matchAll(/x-access-units-left: (\d+)/g)].map(m => Number(m[1]))
  // The tip 1, the build 10, the signing request 5, the submission 20, then 2 a status look; the ledger read is free.
  expect(charged.slice(0, 4)).toEqual([1, 10, 5, 20])
  expect(charged.slice(4, -1).every(units => units === 2)).toBe(true)
  expect(charged.at(-1)).toBe(0)
  expect(left.at(-1)).toBe(1000 - charged.reduce((sum, units) => sum + units, 0))

  const lines = run.stdout.split('\n').map(line => line.trimEnd())
  if (charged.length <= 20) expect(lines).toContain('1000 issued')
  expect(lines).toContain('-20 submit POST /odata/v4/chaina-sign/SubmitVerifiedTransaction')
  expect(lines).toContain('-10 build POST /odata/v4/chaina-transaction/BuildSimpleAdaTransaction')
}, 150_000)

test('the chain-B steps anchor a document with its content root, verify it, read it, prove a field predicate and verify that on the free lane', async () => {
  const steps = shBlockAfter('<!-- quickstart-steps')
  const setUp = steps.slice(0, steps.indexOf('\n# 1.'))
  const chainB = shBlockAfter('<!-- quickstart-chain-b-steps')
  const run = await runSteps(`${setUp}\n${chainB}`.replaceAll('http://localhost:4004', server.url))
  expect(run.code === 0 ? 'exit 0' : `exit ${run.code}\n${run.stderr.slice(-2000)}\n${run.stdout.slice(-2000)}`).toBe('exit 0')

  expect(run.stdout).toMatch(/"status":"confirmed"/)
  const lines = run.stdout.split('\n').map(line => line.trimEnd())
  expect(lines).toContain('true')
  const documents = lines.filter(line => line.includes('"payloadHash"'))
  expect(documents).toHaveLength(2)
  expect(JSON.parse(documents[0]).value).toEqual([expect.objectContaining({ status: 'anchored', anchorHeight: expect.any(Number) })])
  expect(JSON.parse(documents[1]).value).toEqual(JSON.parse(documents[0]).value)

  // The free lane, without a key: the attestation is valid, and the vault records the predicate.
  expect(lines.filter(Boolean).slice(-2)).toEqual(['VALID', 'true'])

  const charged = [...run.stderr.matchAll(/x-access-units-charged: (\d+)/g)].map(m => Number(m[1]))
  // The preparation 2, the anchor 25, then 1 a job look, the verification 2, each document read 1; the proof 50, then 1 a job look.
  expect(charged.slice(0, 2)).toEqual([2, 25])
  const proof = charged.indexOf(50)
  expect(charged.slice(2, proof - 3).every(units => units === 1)).toBe(true)
  expect(charged.slice(proof - 3, proof)).toEqual([2, 1, 1])
  expect(charged.slice(proof + 1).every(units => units === 1)).toBe(true)
}, 150_000)

test('the analytics steps show live figures of both devnets, 3 units a call', async () => {
  const steps = shBlockAfter('<!-- quickstart-steps')
  const setUp = steps.slice(0, steps.indexOf('\n# 1.'))
  const analytics = shBlockAfter('<!-- quickstart-analytics-steps')
  const run = await runSteps(`${setUp}\n${analytics}`.replaceAll('http://localhost:4004', server.url))
  expect(run.code === 0 ? 'exit 0' : `exit ${run.code}\n${run.stderr.slice(-2000)}\n${run.stdout.slice(-2000)}`).toBe('exit 0')

  const lines = run.stdout.split('\n').map(line => line.trimEnd()).filter(Boolean)
  // The two chains' transaction counts and a key figure: numbers (the devnets' activity makes them grow).
  for (const line of [lines[0], lines[1], lines[3]]) expect(line).toMatch(/^\d+$/)
  const overview = JSON.parse(lines[2])
  for (const chain of ['chain-a', 'chain-b']) {
    expect(overview.chains.find((entry: any) => entry.chain === chain)).toMatchObject({ network: 'devnet', indexedHeight: expect.any(Number), blocks24h: expect.any(Number) })
  }
  expect(overview.chains.every((entry: any) => entry.indexedHeight > 0 && entry.blocks24h > 0)).toBe(true)
  const charged = [...run.stderr.matchAll(/x-access-units-charged: (\d+)/g)].map(m => Number(m[1]))
  expect(charged).toEqual([3, 3, 3, 3])
}, 150_000)

test('the key-lane steps buy a key with x402, top it up, sign in with a wallet and redeem a voucher, each key shown once', async () => {
  const steps = shBlockAfter('<!-- quickstart-steps')
  const setUp = steps.slice(0, steps.indexOf('\n# 1.'))
  const chainBSetUp = shBlockAfter('<!-- quickstart-chain-b-steps')
  const bodyHelper = chainBSetUp.slice(0, chainBSetUp.indexOf('\n# 8.'))
  const lanes = shBlockAfter('<!-- quickstart-lanes-steps')
  const run = await runSteps(`${setUp}\n${bodyHelper}\n${lanes}`.replaceAll('http://localhost:4004', server.url))
  expect(run.code === 0 ? 'exit 0' : `exit ${run.code}\n${run.stderr.slice(-2000)}\n${run.stdout.slice(-2000)}`).toBe('exit 0')

  const lines = run.stdout.split('\n').map(line => line.trimEnd()).filter(Boolean)
  // Bought: the starter pack's units and where the MCP servers send the key; topped up; the wallet's free units and plan; the voucher's units.
  expect(lines.slice(0, 6)).toEqual(['10000', expect.stringMatching(/^http:\/\/localhost:\d+$/), '20000', '500', 'trial', '2000'])
  const ledger = lines.slice(6)
  expect(ledger.filter(line => /^credit 10000 payment:[0-9a-f]{64}$/.test(line))).toHaveLength(2)
}, 150_000)


test('the MCP configuration printed with a key starts both tool servers against npm start, from any folder', async () => {
  // As in a second terminal, which knows nothing of the server's port: the configuration names the default one.
  const { PORT: _port, ...terminal } = env
  const printed = (await promisify(execFile)('npm', ['run', '-s', 'gateway', '--', 'keys', 'issue', '--units', '300'], { cwd: root, env: terminal })).stdout
  const { mcpServers } = JSON.parse(printed.slice(printed.indexOf('{\n  "mcpServers"')).replaceAll('http://localhost:4004', server.url)) as { mcpServers: Record<string, ServerConfiguration> }
  expect(Object.keys(mcpServers)).toEqual(['chain-a', 'chain-b'])
  const chainA = await connectToolServer(mcpServers['chain-a'])
  const chainB = await connectToolServer(mcpServers['chain-b'])
  try {
    const tip = answerOf(await chainA.call('query_entity', { entity: 'Blocks', orderby: 'height desc', top: 1, select: 'height,hash' }))
    expect(tip).toMatchObject({ rows: [{ height: expect.any(Number), hash: expect.stringMatching(/^[0-9a-f]{64}$/) }], units: { charged: 1, left: 299 } })
    const prepared = answerOf(await chainB.call('prepare_document_proof', { document: { invoice: 'INV-9', total: 12 }, proofFields: ['total'] }))
    expect(prepared).toMatchObject({ payloadHash: expect.stringMatching(/^[0-9a-f]{64}$/), units: { charged: 2, left: 297 } })
    const verdict = answerOf(await chainB.call('verify_document', { sha256: prepared.payloadHash }))
    expect(verdict).toMatchObject({ verified: false, code: 'NOT_ANCHORED' })
  } finally {
    await Promise.all([chainA.close(), chainB.close()])
  }
}, 120_000)

test('the server wrote none of the secrets the steps used (keys, the session, the voucher code, the payment signatures), and an access line for every request', () => {
  const output = server.output()
  const secretShaped = [
    /\b(cag|cga|cgb|cgs)_[A-Za-z0-9_-]{40,}/g, // keys, grant tokens, wallet sessions (not a 12-character hint, not a database name)
    /\b[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){4}\b/g, // voucher codes
    /eyJ4NDAyVmVyc2lvbiI6[A-Za-z0-9+/=]*/g, // a PAYMENT-SIGNATURE: base64 of {"x402Version":
  ]
  for (const shape of secretShaped) expect(output.match(shape) ?? []).toEqual([])
  const access = output.split('\n').filter(line => line.startsWith('{"type":"access"')).map(line => JSON.parse(line))
  const families = new Set(access.map(line => line.route_family))
  for (const family of ['chaina-odata', 'chaina-transaction', 'chaina-sign', 'chainb', 'analytics', 'me', 'keys', 'topup', 'auth', 'vouchers']) expect(families).toContain(family)
  expect(access.filter(line => line.route_family === 'keys').map(line => line.status)).toContain(402)
  expect(access.filter(line => line.units_charged === 20)).toEqual([expect.objectContaining({ method: 'POST', path: '/odata/v4/chaina-sign/SubmitVerifiedTransaction', status: 200, key_id: expect.any(String) })])
})
