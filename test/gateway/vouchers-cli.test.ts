import cds from '@sap/cds'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { hasValidCheck } from '../../srv/key-lanes/voucher-codes.ts'

/**
 * The operator's voucher commands, run as the README says (`npm run gateway -- vouchers …`),
 * against a SQLite file of their own: each code is printed once with how to redeem it, the list
 * shows hints and counts but never a code, a revoked voucher says so.
 */
const root = join(__dirname, '..', '..')
const run = promisify(execFile)
let dataDir: string
let env: NodeJS.ProcessEnv

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'chain-access-vouchers-cli-'))
  env = { ...process.env, cds_requires_db_credentials_url: join(dataDir, 'db.sqlite') }
  // The development profile's SQLite file, whichever database the suite runs on.
  for (const name of ['NODE_ENV', 'CDS_ENV', 'CDS_REQUIRES_DB_CREDENTIALS_DATABASE']) delete env[name]
})

afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const gateway = async (...args: string[]) => (await run('npm', ['run', '-s', 'gateway', '--', ...args], { cwd: root, env })).stdout
const CODE_LINE = /^ {2}([0-9A-HJKMNP-TV-Z]{4}(?:-[0-9A-HJKMNP-TV-Z]{4}){4}) {2}id ([0-9a-f-]{36}) {2}units (\d+) {2}uses (\d+) {2}expires (\S+)$/gm

test('vouchers create, list and revoke', async () => {
  const printed = await gateway('vouchers', 'create', '--units', '500', '--count', '3', '--uses', '2', '--expires', '30d', '--label', 'meetup')
  const lines = [...printed.matchAll(CODE_LINE)]
  expect(lines).toHaveLength(3)
  for (const [, code, , units, uses, expires] of lines) {
    expect(hasValidCheck(code.replace(/-/g, ''))).toBe(true)
    expect([units, uses]).toEqual(['500', '2'])
    expect(Date.parse(expires) - Date.now()).toBeGreaterThan(29 * 86_400_000)
  }
  expect(new Set(lines.map(line => line[1])).size).toBe(3)
  expect(printed).toContain(`curl -X POST -H 'content-type: application/json' -d '{"code":"${lines[0][1]}"}' http://localhost:`)
  expect(printed).toMatch(/\/vouchers\/redeem\n?$/)

  const listed = await gateway('vouchers', 'list')
  for (const [, code, id] of lines) {
    expect(listed).toContain(`${id}  ${code.slice(0, 4)}…  500 units  redeemed 0/2  until `)
    expect(listed).not.toContain(code)
  }
  expect(listed).toContain('meetup')

  const revokedId = lines[0][2]
  expect(await gateway('vouchers', 'revoke', revokedId)).toContain(`revoked voucher ${revokedId}`)
  expect(await gateway('vouchers', 'list')).toMatch(new RegExp(`${revokedId} .* revoked \\d{4}-`))
  await expect(gateway('vouchers', 'revoke', revokedId)).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('The voucher was revoked at') })
  const unknown = cds.utils.uuid()
  await expect(gateway('vouchers', 'revoke', unknown)).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining(`There is no voucher ${unknown}`) })
  // Both changes are in the operator audit, whose chain verifies.
  expect(await gateway('audit', 'verify')).toMatch(/^the operator audit verifies: 2 entries/m)
}, 120_000)

test('vouchers create: one use and no expiry by default; an ISO expiry is taken as given', async () => {
  const printed = await gateway('vouchers', 'create', '--units', '5', '--count', '1')
  expect([...printed.matchAll(CODE_LINE)].map(line => [line[3], line[4], line[5]])).toEqual([['5', '1', 'never']])
  const until = new Date(Date.now() + 86_400_000).toISOString()
  expect([...(await gateway('vouchers', 'create', '--units', '5', '--count', '1', '--expires', until)).matchAll(CODE_LINE)][0][5]).toBe(until)
}, 120_000)

test('vouchers create refuses bad input with a message, and creates nothing', async () => {
  const before = await gateway('vouchers', 'list')
  for (const args of [['--count', '1'], ['--units', '5', '--count', '0'], ['--units', '5', '--count', '1', '--expires', 'soon'], ['--units', '5', '--count', '1', '--expires', '2001-01-01']]) {
    await expect(gateway('vouchers', 'create', ...args)).rejects.toMatchObject({ code: 1, stderr: expect.stringMatching(/--units is required|count must be|--expires must be|expiry must lie in the future/) })
  }
  expect(await gateway('vouchers', 'list')).toBe(before)
}, 120_000)
