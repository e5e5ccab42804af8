import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

/**
 * The operator's command line, run as the README says (`npm run gateway -- keys issue …`), against
 * a SQLite file of its own: a key issued there is an operator key unless --plan says otherwise, and
 * its print-out offers nothing that does not exist yet.
 */
const root = join(__dirname, '..', '..')
const run = promisify(execFile)
let dataDir: string
let env: NodeJS.ProcessEnv

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'chain-access-cli-'))
  env = { ...process.env, cds_requires_db_credentials_url: join(dataDir, 'db.sqlite') }
  // The development profile's SQLite file, whichever database the suite runs on.
  for (const name of ['NODE_ENV', 'CDS_ENV', 'CDS_REQUIRES_DB_CREDENTIALS_DATABASE']) delete env[name]
})

afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const gateway = async (...args: string[]) => (await run('npm', ['run', '-s', 'gateway', '--', ...args], { cwd: root, env })).stdout

test('keys issue: an operator key by default, shown once, with a curl example and the MCP client configuration of both tool servers', async () => {
  const printed = await gateway('keys', 'issue', '--units', '7')
  expect(printed).toMatch(/^API key \(shown once, store it now\):\n\n {2}cag_[A-Za-z0-9_-]{49}\n/)
  const key = /cag_[A-Za-z0-9_-]{49}/.exec(printed)![0]
  expect(printed).toMatch(/ plan operator {2}units 7 /)
  expect(printed).toContain(`curl -H "Authorization: Bearer ${key}" http://localhost:`)
  const configuration = JSON.parse(printed.slice(printed.indexOf('{')))
  expect(configuration.mcpServers['chain-a']).toEqual({ command: 'npx', args: ['--prefix', root, 'cag-mcp-chain-a'], env: { CHAIN_ACCESS_API_KEY: key, CHAIN_ACCESS_URL: expect.stringMatching(/^http:\/\/localhost:/) } })
  expect(configuration.mcpServers['chain-b']).toMatchObject({ command: 'npx', args: ['--prefix', root, 'cag-mcp-chain-b'] })
}, 60_000)

test('keys issue --quiet prints the key alone, for scripts', async () => {
  expect(await gateway('keys', 'issue', '--quiet', '--units', '7')).toMatch(/^cag_[A-Za-z0-9_-]{49}\n$/)
}, 60_000)

test('keys issue --plan names another plan', async () => {
  expect(await gateway('keys', 'issue', '--units', '7', '--plan', 'trial')).toMatch(/ plan trial {2}units 7 /)
}, 60_000)

test('keys credit, debit, suspend, resume and plan run as the operator cli:<system user>, each audited; audit verify checks the chain', async () => {
  const printed = await gateway('keys', 'issue', '--units', '10')
  const id = /^id (\S+)/m.exec(printed)![1]
  expect(await gateway('keys', 'credit', id, '5', '--reason', 'support ticket 4')).toBe(`credited 5 units to ${id}; 15 left\n`)
  expect(await gateway('keys', 'debit', id, '3')).toBe(`debited 3 units from ${id}; 12 left\n`)
  expect(await gateway('keys', 'suspend', id)).toMatch(/^suspended /)
  expect(await gateway('keys', 'resume', id)).toBe(`resumed ${id}\n`)
  expect(await gateway('keys', 'plan', id, 'scale')).toBe(`${id} is on plan scale now\n`)
  expect(await gateway('audit', 'verify')).toMatch(/^the operator audit verifies: \d+ entries, every link intact\n$/)
  const failed = await run('npm', ['run', '-s', 'gateway', '--', 'keys', 'debit', id, '100'], { cwd: root, env }).catch(error => error)
  expect(failed.stderr).toMatch(/12 units left: a debit of 100 would take it below zero/)
  expect(failed.code).toBe(1)

  const { DatabaseSync } = require('node:sqlite')
  const db = new DatabaseSync(env.cds_requires_db_credentials_url)
  const entries = db.prepare('SELECT actor, action, reason FROM operator_OperatorAuditLog WHERE target = ? ORDER BY sequence').all(`key:${id}`)
  db.close()
  const actor = `cli:${require('node:os').userInfo().username}`
  expect(entries).toEqual([
    { actor, action: 'key.issue', reason: null },
    { actor, action: 'key.credit', reason: 'support ticket 4' },
    { actor, action: 'key.debit', reason: 'operator debit' },
    { actor, action: 'key.suspend', reason: null },
    { actor, action: 'key.resume', reason: null },
    { actor, action: 'key.change-plan', reason: null },
  ])
}, 120_000)
