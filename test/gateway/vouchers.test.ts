import cds from '@sap/cds'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { runningDevnet } from '../support/chain-a.ts'
import { balanceOf, freshClientAddress, issueTestKey, ledgerOf, ledgerSum, sendFrom } from '../support/gateway.ts'
import { startServer, stopAndWait, type RunningServer } from '../support/server.ts'
import { onPostgres } from '../setup/postgres.ts'
import { createVouchers, revokeVoucher } from '../../srv/key-lanes/vouchers.ts'
import { newVoucherCode } from '../../srv/key-lanes/voucher-codes.ts'

/**
 * The code lane over HTTP: POST /vouchers/redeem without a key creates a key, with a key tops it
 * up; a code never redeems beyond its limit (concurrently, and across two gateway processes);
 * unknown, used-up, revoked and expired codes answer alike; failed attempts are limited per
 * address, or per key when one is presented, and never stop a valid code.
 *
 * Each test sends from a loopback address of its own (127.0.0.N), so the failure limit of one
 * test never reaches another.
 */
process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_VOUCHER_FAILURES = '4'
const app: { url: string } = cds.test(__dirname + '/../..') as any

const REDEEM = '/vouchers/redeem'
const NOT_REDEEMABLE = { error: { code: 'VOUCHER_NOT_REDEEMABLE', message: 'This code is unknown, used up or expired' } }

afterAll(() => {
  delete process.env.GATEWAY_ENABLED
  delete process.env.GATEWAY_VOUCHER_FAILURES
})

const freshAddress = freshClientAddress

/** POSTs raw `body` text from the local address `from`, with the key when one is given. */
const postFrom = (from: string, body: string, key?: string, url = app.url, path = REDEEM) => sendFrom(url, 'POST', path, { from, raw: body, token: key })

const redeem = (from: string, code: unknown, key?: string) => postFrom(from, JSON.stringify({ code }), key)

async function oneVoucher(units: number, uses = 1) {
  const [voucher] = await createVouchers({ units, count: 1, uses })
  return voucher
}

async function voucherRow(id: string) {
  const { Vouchers } = cds.entities('gateway')
  const row = await cds.tx(() => SELECT.one.from(Vouchers).where({ ID: id }))
  return { ...row, redeemedCount: Number(row.redeemedCount) }
}

async function redemptionsOf(voucherId: string): Promise<any[]> {
  const { VoucherRedemptions } = cds.entities('gateway')
  return cds.tx(() => SELECT.from(VoucherRedemptions).where({ voucher_ID: voucherId }))
}

/** A valid code with one character changed to the next of the alphabet: its check character no longer matches. */
function withTypo(code: string): string {
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
  const next = alphabet[(alphabet.indexOf(code[0]) + 1) % alphabet.length]
  return next + code.slice(1)
}

beforeAll(() => runningDevnet())

test('without a key: a new key, shown once with its client configuration, credited with the units under the voucher reference', async () => {
  const voucher = await oneVoucher(250)
  const answer = await redeem(freshAddress(), voucher.code)
  expect(answer.body).toMatchObject({
    key: expect.stringMatching(/^cag_/), plan: 'standard', unitsLeft: 250, voucher: { id: voucher.id, units: 250 },
    configuration: { mcpServers: { 'chain-a': expect.any(Object), 'chain-b': expect.any(Object) } }, curl: expect.stringContaining(answer.body.key),
  })
  expect(answer.status).toBe(200)
  const { id, key } = answer.body
  const [redemption] = await redemptionsOf(voucher.id)
  expect(redemption).toMatchObject({ apiKey_ID: id })
  const ledger = await ledgerOf(id)
  expect(ledger).toEqual([expect.objectContaining({ kind: 'credit', units: 250, note: `voucher ${voucher.code.slice(0, 4)}…`, reference: `voucher:${voucher.id}:${redemption.ID}` })])
  const account = await fetch(`${app.url}/me`, { headers: { authorization: `Bearer ${key}` } }).then(response => response.json())
  expect(account).toMatchObject({ unitsLeft: 250 })
  expect((await voucherRow(voucher.id)).redeemedCount).toBe(1)
})

test('with a key: a top-up of that key, its ledger entry naming the voucher and the key', async () => {
  const { id, key } = await issueTestKey({ units: 100 })
  const voucher = await oneVoucher(40)
  const answer = await redeem(freshAddress(), voucher.code, key)
  expect(answer.body).toEqual({ id, credited: 40, unitsLeft: 140 })
  expect(answer.status).toBe(200)
  expect(answer.headers['x-access-units-left']).toBe('140')
  expect(await balanceOf(id)).toBe(140)
  const ledger = await ledgerOf(id)
  expect(ledger.at(-1)).toMatchObject({ kind: 'credit', units: 40, reference: `voucher:${voucher.id}:${id}` })
  expect(ledgerSum(ledger)).toBe(140)
})

test('a key redeems a code once: the second time is 409 and counts nothing, also when the code has uses left', async () => {
  const { id, key } = await issueTestKey({ units: 0 })
  const from = freshAddress()
  const multi = await oneVoucher(5, 3)
  expect((await redeem(from, multi.code, key)).status).toBe(200)
  const again = await redeem(from, multi.code, key)
  expect(again.body.error.code).toBe('VOUCHER_ALREADY_REDEEMED')
  expect(again.status).toBe(409)
  expect((await voucherRow(multi.id)).redeemedCount).toBe(1)
  expect(await balanceOf(id)).toBe(5)

  const single = await oneVoucher(7)
  expect((await redeem(from, single.code, key)).status).toBe(200)
  expect((await redeem(from, single.code, key)).body.error.code).toBe('VOUCHER_ALREADY_REDEEMED')
  expect(await balanceOf(id)).toBe(12)
})

test('a code of 3 uses serves 3 different callers, then answers like an unknown code', async () => {
  const voucher = await oneVoucher(10, 3)
  const [first, second] = [await issueTestKey({ units: 0 }), await issueTestKey({ units: 0 })]
  const answers = [await redeem(freshAddress(), voucher.code), await redeem(freshAddress(), voucher.code, first.key), await redeem(freshAddress(), voucher.code, second.key)]
  expect(answers.map(answer => answer.status)).toEqual([200, 200, 200])
  const fourth = await redeem(freshAddress(), voucher.code)
  expect(fourth.body).toEqual(NOT_REDEEMABLE)
  expect(fourth.status).toBe(404)
  const third = await issueTestKey({ units: 0 })
  expect((await redeem(freshAddress(), voucher.code, third.key)).body).toEqual(NOT_REDEEMABLE)
  expect((await voucherRow(voucher.id)).redeemedCount).toBe(3)
  expect(await redemptionsOf(voucher.id)).toHaveLength(3)
})

test('unknown, expired and revoked codes answer alike', async () => {
  const [unknown, expired, revoked] = await createVouchers({ units: 1, count: 3 })
  const { Vouchers } = cds.entities('gateway')
  await cds.tx(() => DELETE.from(Vouchers).where({ ID: unknown.id }))
  await cds.tx(() => UPDATE.entity(Vouchers).set({ expiresAt: new Date(Date.now() - 1000).toISOString() }).where({ ID: expired.id }))
  expect(await revokeVoucher(revoked.id)).toBe(true)
  expect(await revokeVoucher(revoked.id)).toBe(false)
  const answers = await Promise.all([unknown, expired, revoked].map(voucher => redeem(freshAddress(), voucher.code)))
  for (const answer of answers) {
    expect(answer.body).toEqual(NOT_REDEEMABLE)
    expect(answer.status).toBe(404)
  }
  expect((await voucherRow(expired.id)).redeemedCount).toBe(0)
})

test('a code with an expiry redeems until then', async () => {
  const [voucher] = await createVouchers({ units: 3, count: 1, expiresAt: new Date(Date.now() + 3_600_000).toISOString() })
  expect((await redeem(freshAddress(), voucher.code)).status).toBe(200)
  await expect(createVouchers({ units: 3, count: 1, expiresAt: new Date(Date.now() - 1000).toISOString() })).rejects.toThrow(/future/)
})

test('confusable spellings redeem: lower case, spaces instead of hyphens, O for 0 and l for 1', async () => {
  const vouchers = await createVouchers({ units: 2, count: 20 })
  const voucher = vouchers.find(candidate => /[01]/.test(candidate.code))!
  const spelt = voucher.code.toLowerCase().replace(/-/g, ' ').replace(/0/g, 'O').replace(/1/g, 'l')
  const answer = await redeem(freshAddress(), `  ${spelt} `)
  expect(answer.body.voucher).toEqual({ id: voucher.id, units: 2 })
  expect(answer.status).toBe(200)
})

test('a mistyped code is told at once: 400 VOUCHER_MALFORMED, and the code itself still redeems', async () => {
  const voucher = await oneVoucher(1)
  const from = freshAddress()
  const typo = await redeem(from, withTypo(voucher.code))
  expect(typo.body.error).toMatchObject({ code: 'VOUCHER_MALFORMED', message: expect.stringMatching(/check character/) })
  expect(typo.status).toBe(400)
  const wrongLength = await redeem(from, voucher.code.slice(0, -1))
  expect(wrongLength.body.error).toMatchObject({ code: 'VOUCHER_MALFORMED', message: expect.stringMatching(/20 characters/) })
  const withU = await redeem(from, 'U' + voucher.code.slice(1))
  expect(withU.body.error).toMatchObject({ code: 'VOUCHER_MALFORMED', message: expect.stringMatching(/'U'/) })
  expect((await redeem(from, voucher.code)).status).toBe(200)
})

test('a code of 3 uses redeemed by 10 callers at once: exactly 3 win', async () => {
  const voucher = await oneVoucher(9, 3)
  const keys = await Promise.all(Array.from({ length: 5 }, () => issueTestKey({ units: 0 })))
  const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => redeem(freshAddress(), voucher.code, i < 5 ? keys[i].key : undefined)))
  const statuses = answers.map(answer => answer.status)
  expect(statuses.filter(status => status === 200)).toHaveLength(3)
  expect(statuses.filter(status => status === 404)).toHaveLength(7)
  for (const loser of answers.filter(answer => answer.status === 404)) expect(loser.body).toEqual(NOT_REDEEMABLE)
  expect((await voucherRow(voucher.id)).redeemedCount).toBe(3)
  expect(await redemptionsOf(voucher.id)).toHaveLength(3)
  const toppedUp = (await Promise.all(keys.map(key => balanceOf(key.id)))).filter(units => units === 9)
  const newKeys = answers.filter(answer => answer.status === 200 && answer.body.key)
  expect(toppedUp.length + newKeys.length).toBe(3)
})

test('one key redeeming one code 5 times at once is credited once', async () => {
  const { id, key } = await issueTestKey({ units: 0 })
  const voucher = await oneVoucher(11, 5)
  const from = freshAddress()
  const answers = await Promise.all(Array.from({ length: 5 }, () => redeem(from, voucher.code, key)))
  expect(answers.map(answer => answer.status).sort()).toEqual([200, 409, 409, 409, 409])
  expect(await balanceOf(id)).toBe(11)
  expect((await voucherRow(voucher.id)).redeemedCount).toBe(1)
})

test('failed attempts: past the limit that address\'s failing attempts answer 429, while valid codes from it still redeem, with a key or without', async () => {
  const from = freshAddress()
  const [first, second] = await createVouchers({ units: 6, count: 2 })
  const typo = await redeem(from, withTypo(first.code))
  expect([typo.status, typo.body.error.code]).toEqual([400, 'VOUCHER_MALFORMED'])
  const failures = await Promise.all([1, 2, 3, 4].map(() => redeem(from, newVoucherCode())))
  expect(failures.map(failure => failure.status)).toEqual([404, 404, 404, 404])
  const limited = await redeem(from, newVoucherCode())
  expect(limited.body.error.code).toBe('TOO_MANY_FAILED_ATTEMPTS')
  expect(limited.status).toBe(429)
  expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)

  const withoutKey = await redeem(from, first.code)
  expect(withoutKey.body).toMatchObject({ unitsLeft: 6, voucher: { id: first.id, units: 6 } })
  const { id, key } = await issueTestKey({ units: 0 })
  const withKey = await redeem(from, second.code, key)
  expect(withKey.body).toEqual({ id, credited: 6, unitsLeft: 6 })
  expect((await redeem(freshAddress(), newVoucherCode())).body).toEqual(NOT_REDEEMABLE)
})

test('a key is limited by its own failures, from whatever address; the addresses are not', async () => {
  const { key } = await issueTestKey({ units: 0 })
  const addresses = [freshAddress(), freshAddress(), freshAddress(), freshAddress()]
  for (const from of addresses) expect((await redeem(from, newVoucherCode(), key)).status).toBe(404)
  const limited = await redeem(freshAddress(), newVoucherCode(), key)
  expect(limited.body.error.code).toBe('TOO_MANY_FAILED_ATTEMPTS')
  expect(limited.status).toBe(429)
  expect(limited.headers['x-access-units-left']).toBe('0')
  const voucher = await oneVoucher(2)
  expect((await redeem(freshAddress(), voucher.code, key)).body).toMatchObject({ credited: 2, unitsLeft: 2 })
  expect((await redeem(addresses[0], newVoucherCode())).status).toBe(404)
})

test('a code used up moments ago was lost to a race and counts nothing; one used up a while ago is a failed attempt', async () => {
  const [recent, old] = await createVouchers({ units: 1, count: 2 })
  for (const voucher of [recent, old]) expect((await redeem(freshAddress(), voucher.code)).status).toBe(200)
  const { VoucherRedemptions } = cds.entities('gateway')
  await cds.tx(() => UPDATE.entity(VoucherRedemptions).set({ redeemedAt: new Date(Date.now() - 120_000).toISOString() }).where({ voucher_ID: old.id }))

  const from = freshAddress()
  const answers = []
  for (let i = 0; i < 5; i++) answers.push(await redeem(from, recent.code))
  expect(answers.map(answer => answer.body)).toEqual(Array(5).fill(NOT_REDEEMABLE))
  for (let i = 0; i < 4; i++) expect((await redeem(from, old.code)).body).toEqual(NOT_REDEEMABLE)
  expect((await redeem(from, old.code)).body.error.code).toBe('TOO_MANY_FAILED_ATTEMPTS')
})

test('hostile bodies answer 4xx with a stable code, never 5xx, and redeem nothing', async () => {
  const cases: [string, string][] = [
    ['', 'INVALID_CODE'], ['null', 'INVALID_CODE'], ['[]', 'INVALID_CODE'], ['{}', 'INVALID_CODE'], ['42', 'INVALID_CODE'], ['"text"', 'INVALID_CODE'], ['true', 'INVALID_CODE'],
    ['{"code": null}', 'INVALID_CODE'], ['{"code": 42}', 'INVALID_CODE'], ['{"code": []}', 'INVALID_CODE'], ['{"code": {"$ne": 1}}', 'INVALID_CODE'], ['{"code": ["AAAA"]}', 'INVALID_CODE'],
    ['{"code": ""}', 'VOUCHER_MALFORMED'], ['{"code": "\\u0000"}', 'VOUCHER_MALFORMED'], [JSON.stringify({ code: 'A'.repeat(10_000) }), 'VOUCHER_MALFORMED'],
    [JSON.stringify({ code: "' OR 1=1 --" }), 'VOUCHER_MALFORMED'], ['{"code": ', 'INVALID_JSON'], ['['.repeat(10_000), 'INVALID_JSON'],
  ]
  const { id, key } = await issueTestKey({ units: 0 })
  for (const [body, code] of cases) {
    for (const presented of [undefined, key]) {
      const answer = await postFrom(freshAddress(), body, presented)
      expect([body.slice(0, 20), answer.body.error.code]).toEqual([body.slice(0, 20), code])
      expect(answer.status).toBe(400)
    }
  }
  const huge = await postFrom(freshAddress(), JSON.stringify({ code: 'x'.repeat(100 * 1024) }))
  expect(huge.status).toBeGreaterThanOrEqual(400)
  expect(huge.status).toBeLessThan(500)
  expect(await balanceOf(id)).toBe(0)
})

// Two gateway processes on one database (a SQLite file of their own, or this file's PostgreSQL
// database): a single-use code sent to both at once is redeemed once.
describe('two gateway instances', () => {
  const root = join(__dirname, '..', '..')
  const servers: RunningServer[] = []
  let folder: string | undefined
  let env: NodeJS.ProcessEnv

  beforeAll(async () => {
    const shared: NodeJS.ProcessEnv = {}
    if (!onPostgres()) {
      folder = mkdtempSync(join(tmpdir(), 'cag-vouchers-'))
      shared.CDS_REQUIRES_DB_CREDENTIALS_URL = join(folder, 'shared.sqlite')
    }
    env = {
      ...process.env, ...shared, PORT: '0', CDS_TYPESCRIPT: 'true', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON',
      GATEWAY_ENABLED: 'true', CHAIN_A_DEVNET: 'false', BLOCKFROST_URL: runningDevnet().url, CHAIN_A_NETWORK: 'devnet', CHAIN_B_CRAWLER_ENABLED: 'false',
    }
    for (let i = 0; i < 2; i++) servers.push(await startServer(join(root, 'node_modules', '.bin', 'cds-serve'), [], { cwd: root, env }))
  }, 120_000)

  afterAll(async () => {
    for (const server of servers) if (server.running()) await stopAndWait(server)
    if (folder) rmSync(folder, { recursive: true, force: true })
  })

  /** Codes made by the operator's command line against the instances' database. */
  async function codesFromCommandLine(...args: string[]): Promise<string[]> {
    const { stdout } = await promisify(execFile)('npm', ['run', '-s', 'gateway', '--', 'vouchers', 'create', ...args], { cwd: root, env })
    return [...stdout.matchAll(/^ {2}([0-9A-Z]{4}(?:-[0-9A-Z]{4}){4}) {2}id /gm)].map(match => match[1])
  }

  test('a single-use code sent to both instances at once is redeemed once', async () => {
    const codes = await codesFromCommandLine('--units', '8', '--count', '3')
    expect(codes).toHaveLength(3)
    for (const code of codes) {
      const answers = await Promise.all([0, 1, 0, 1].map(i => postFrom(freshAddress(), JSON.stringify({ code }), undefined, servers[i].url)))
      expect(answers.map(answer => answer.status).sort()).toEqual([200, 404, 404, 404])
      const winner = answers.find(answer => answer.status === 200)!
      const account = await fetch(`${servers[1].url}/me`, { headers: { authorization: `Bearer ${winner.body.key}` } }).then(response => response.json())
      expect(account).toMatchObject({ unitsLeft: 8 })
    }
  }, 120_000)
})
