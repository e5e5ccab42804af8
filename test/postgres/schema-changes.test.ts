import cds from '@sap/cds'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { administer, quoted } from '../setup/postgres.ts'

/**
 * Changing the schema of a deployed database (docs/schema-changes.md), on PostgreSQL as the
 * deployer task does it (db/deploy.js, schema evolution on): an added element is added by the next
 * deploy and the rows keep their data; a dropped element fails the plain deploy and changes
 * nothing, and takes the reviewed migration script (--script, then --apply <digest>), after which
 * the plain deploy passes again. A database of this file's own.
 */

const ROOT = join(__dirname, '..', '..')
const database = `cag_mig_${process.pid}_${Date.now().toString(36)}`
const credentials = { host: '127.0.0.1', port: 5432, user: 'postgres', database }
const run = promisify(execFile)
// Two CAP APIs its types leave out: compiling sources given as strings, and cds.deploy.
const capi = cds as unknown as { compile(sources: Record<string, string>): any, deploy(model: any): { to(db: any): Promise<any> } }

let db: any

beforeAll(async () => {
  await administer(`CREATE DATABASE ${quoted(database)}`)
  db = await cds.connect.to('schema-changes', { kind: 'postgres', impl: '@cap-js/postgres', credentials, schema_evolution: 'auto' } as any)
})
afterAll(async () => {
  await db?.disconnect?.()
  await administer(`DROP DATABASE IF EXISTS ${quoted(database)} WITH (FORCE)`)
})

/** The deployer task's command, with its output and exit code. */
async function deployer(...args: string[]) {
  const env = {
    ...process.env, NODE_ENV: 'test', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON',
    CDS_ENV: 'pg', CDS_REQUIRES_DB_SCHEMA__EVOLUTION: 'auto', CDS_REQUIRES_DB_CREDENTIALS_DATABASE: database,
  }
  try {
    const { stdout, stderr } = await run(process.execPath, ['db/deploy.js', ...args], { cwd: ROOT, env })
    return { code: 0, stdout, stderr }
  } catch (error: any) {
    return { code: error.code as number, stdout: error.stdout as string, stderr: error.stderr as string }
  }
}

const priceColumns = async () =>
  (await db.run('SELECT column_name FROM information_schema.columns WHERE table_name = \'gateway_prices\' ORDER BY ordinal_position')).map((row: any) => row.column_name)
// Named columns: a prepared `SELECT *` would not survive its table losing a column.
const ownPrice = async (...columns: string[]) =>
  (await db.run(`SELECT ${['routeClass', 'units', 'description', ...columns].join(', ')} FROM gateway_Prices WHERE routeClass = 'operator-own'`))[0]
const deployedModel = async () => (await db.run('SELECT csn FROM cds_model'))[0].csn as string
const seededPrices = async () => Number((await db.run('SELECT count(*) AS n FROM gateway_Prices WHERE routeClass <> \'operator-own\''))[0].n)

/** The project's model with one more element on a real entity, as a release would add it. */
async function modelWithNote() {
  const base = await cds.load('*')
  const extended = capi.compile({ 'model.json': JSON.stringify(base), 'note.cds': 'extend gateway.Prices with { note : String(40) }' })
  return Object.assign(cds.minify(extended), { $sources: base.$sources })
}

test('the first deploy creates the schema and records its model; an operator row is added', async () => {
  const { code, stdout } = await deployer()
  expect(code).toBe(0)
  expect(stdout).toMatch(/successfully deployed/)
  await db.run('INSERT INTO gateway_Prices (routeClass, units, description) VALUES (\'operator-own\', 7, \'a class the operator added\')')
  expect(await priceColumns()).toEqual(['routeclass', 'units', 'description'])
  expect(JSON.parse(await deployedModel()).definitions['gateway.Prices']).toBeDefined()
}, 120_000)

test('additive: a release adding an element adds the column; every row keeps its data', async () => {
  const seeded = await seededPrices()
  await capi.deploy(await modelWithNote()).to(db)

  expect(await priceColumns()).toEqual(['routeclass', 'units', 'description', 'note'])
  expect(await ownPrice('note')).toEqual({ routeclass: 'operator-own', units: 7, description: 'a class the operator added', note: null })
  expect(await seededPrices()).toBe(seeded)
  expect(JSON.parse(await deployedModel()).definitions['gateway.Prices'].elements.note).toMatchObject({ type: 'cds.String', length: 40 })
  await db.run('UPDATE gateway_Prices SET note = \'to be dropped\' WHERE routeClass = \'operator-own\'')
}, 120_000)

test('destructive: the plain deploy of a model without the element refuses and changes nothing', async () => {
  const before = await deployedModel()
  const { code, stderr } = await deployer()

  expect(code).toBe(1)
  expect(stderr).toMatch(/Error: Dropping elements is not supported \(in entity:“gateway\.Prices”\/element:“note”\)/)
  expect(stderr).toMatch(/see docs\/schema-changes\.md \(node db\/deploy\.js --script\)/)
  expect(await priceColumns()).toContain('note')
  expect((await ownPrice('note')).note).toBe('to be dropped')
  expect(await deployedModel()).toBe(before)
}, 120_000)

test('destructive: --script shows the lossy statement and its digest, and executes nothing', async () => {
  const before = await deployedModel()
  const { code, stdout } = await deployer('--script')

  expect(code).toBe(0)
  expect(stdout).toContain('-- db/gateway.cds:23:8: Warning: Dropping elements leads to data loss (in entity:“gateway.Prices”/element:“note”)')
  expect(stdout).toContain('-- [WARNING] this statement is lossy\nALTER TABLE gateway_Prices DROP note;')
  expect(stdout).toMatch(/-- digest [0-9a-f]{16}: after review, apply exactly these statements with node db\/deploy\.js --apply [0-9a-f]{16}/)
  expect(await priceColumns()).toContain('note')
  expect(await deployedModel()).toBe(before)
}, 120_000)

test('destructive: --apply with another digest applies nothing', async () => {
  const before = await deployedModel()
  const { code, stderr } = await deployer('--apply', '0123456789abcdef')

  expect(code).toBe(1)
  expect(stderr).toMatch(/the migration script's digest is [0-9a-f]{16}, not 0123456789abcdef: review it again/)
  expect(await priceColumns()).toContain('note')
  expect(await deployedModel()).toBe(before)
}, 120_000)

test('destructive: --apply with the reviewed digest drops the column, keeps the other data and records the model', async () => {
  const seeded = await seededPrices()
  const script = (await deployer('--script')).stdout
  const digest = /-- digest ([0-9a-f]{16})/.exec(script)![1]
  // The reviewed statements: the lossy ALTER, and the views over the table dropped before it and made again after.
  const statements = script.split('\n').filter(line => /^(ALTER|DROP|CREATE)\b/.test(line)).length
  expect(statements).toBeGreaterThanOrEqual(1)
  const { code, stdout } = await deployer('--apply', digest)

  expect(code).toBe(0)
  expect(stdout).toContain(`applied ${statements} statements; the deployed model is recorded`)
  expect(stdout).toMatch(/successfully deployed/)
  expect(await priceColumns()).toEqual(['routeclass', 'units', 'description'])
  expect(await ownPrice()).toEqual({ routeclass: 'operator-own', units: 7, description: 'a class the operator added' })
  expect(await seededPrices()).toBe(seeded)
  expect(JSON.parse(await deployedModel()).definitions['gateway.Prices'].elements.note).toBeUndefined()
}, 120_000)

test('after the migration the plain deploy passes again and finds nothing to change', async () => {
  const deploy = await deployer()
  expect(deploy.code).toBe(0)
  expect(deploy.stdout).toMatch(/successfully deployed/)

  const script = await deployer('--script')
  expect(script.stdout).toContain('-- no changes: the deployed schema is this model\'s')
}, 120_000)

test('a redeploy keeps an operator\'s change to a seeded row (a price, a plan) and adds a seeded row that is missing', async () => {
  const priceOf = async () => Number((await db.run('SELECT units FROM gateway_Prices WHERE routeClass = \'entity-read\''))[0].units)
  const seededPrice = await priceOf()
  await db.run(`UPDATE gateway_Prices SET units = ${seededPrice + 40} WHERE routeClass = 'entity-read'`)
  await db.run('UPDATE gateway_Plans SET ratePerSecond = 7 WHERE name = \'standard\'')
  await db.run('DELETE FROM gateway_Plans WHERE name = \'trial\'')

  const { code } = await deployer()

  expect(code).toBe(0)
  expect(await priceOf()).toBe(seededPrice + 40)
  expect(Number((await db.run('SELECT ratePerSecond AS "rate" FROM gateway_Plans WHERE name = \'standard\''))[0].rate)).toBe(7)
  expect((await db.run('SELECT name FROM gateway_Plans WHERE name = \'trial\'')).length).toBe(1)
}, 120_000)
