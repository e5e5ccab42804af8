import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Client } from 'pg'
import { administer, onPostgres, quoted } from '../setup/postgres.ts'

/**
 * The schema deployer (db/deploy.js, the deployer task's command): deployed again, the seed rows
 * (db/seed) an operator changed keep their change and a seed row that is missing is added; its
 * output never holds the database password. On PostgreSQL it deploys as the deployer task does
 * (schema evolution on) into a database of its own; on SQLite into a file.
 */

const ROOT = join(__dirname, '..', '..')
const PASSWORD = `pw-${Math.random().toString(36).slice(2)}-not-for-logs`
const run = promisify(execFile)

interface Target {
  env: NodeJS.ProcessEnv
  sql(statement: string): Promise<any[]>
  drop(): Promise<void>
}

async function postgresTarget(): Promise<Target> {
  const database = `cag_seed_${process.pid}_${Date.now().toString(36)}`
  await administer(`CREATE DATABASE ${quoted(database)}`)
  return {
    env: { CDS_ENV: 'pg', CDS_REQUIRES_DB_SCHEMA__EVOLUTION: 'auto', CDS_REQUIRES_DB_CREDENTIALS_DATABASE: database, CDS_REQUIRES_DB_CREDENTIALS_PASSWORD: PASSWORD },
    async sql(statement) {
      // Trust authentication here: the password is accepted and not checked.
      const client = new Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database })
      await client.connect()
      try {
        return (await client.query(statement)).rows
      } finally {
        await client.end()
      }
    },
    drop: () => administer(`DROP DATABASE IF EXISTS ${quoted(database)} WITH (FORCE)`).then(() => undefined),
  }
}

async function sqliteTarget(): Promise<Target> {
  const directory = mkdtempSync(join(tmpdir(), 'schema-deploy-'))
  const file = join(directory, 'db.sqlite')
  const { DatabaseSync } = await import('node:sqlite')
  return {
    env: { CDS_ENV: '', CDS_REQUIRES_DB_CREDENTIALS_URL: file, CDS_REQUIRES_DB_CREDENTIALS_PASSWORD: PASSWORD },
    async sql(statement) {
      const db = new DatabaseSync(file)
      try {
        return /^\s*select/i.test(statement) ? db.prepare(statement).all() : (db.exec(statement), [])
      } finally {
        db.close()
      }
    },
    drop: async () => rmSync(directory, { recursive: true, force: true }),
  }
}

let target: Target
beforeAll(async () => {
  target = onPostgres() ? await postgresTarget() : await sqliteTarget()
})
afterAll(() => target?.drop())

async function deploy() {
  const { stdout, stderr } = await run(process.execPath, ['db/deploy.js'], {
    cwd: ROOT, env: { ...process.env, NODE_ENV: 'test', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', ...target.env },
  })
  return stdout + stderr
}

const units = async (routeClass: string) => Number((await target.sql(`SELECT units FROM gateway_Prices WHERE routeClass = '${routeClass}'`))[0]?.units)
const planNames = async () => (await target.sql('SELECT name FROM gateway_Plans ORDER BY name')).map(row => row.name)

test('a first deploy creates the schema and seeds it; the output names no password', async () => {
  const output = await deploy()
  expect(output).toMatch(/successfully deployed/)
  expect(output).not.toContain(PASSWORD)
  expect(await units('chainb-write')).toBe(25)
  expect(await planNames()).toEqual(['operator', 'scale', 'standard', 'trial'])
  expect(await target.sql('SELECT name FROM gateway_Packs ORDER BY name')).toHaveLength(3)
  expect(await target.sql('SELECT name FROM chainasign_SigningPolicies')).toEqual([{ name: 'permissive' }])
})

test('deployed again: an operator\'s changes survive, a seed row that is missing is added, nothing is doubled', async () => {
  await target.sql('UPDATE gateway_Prices SET units = 40 WHERE routeClass = \'chainb-write\'')
  await target.sql('UPDATE gateway_Plans SET units = 123 WHERE name = \'trial\'')
  await target.sql('DELETE FROM gateway_Packs WHERE name = \'scale\'')
  await target.sql('INSERT INTO gateway_Prices (routeClass, units, description) VALUES (\'operator-own\', 7, \'a class the operator added\')')

  const output = await deploy()
  expect(output).not.toContain(PASSWORD)
  expect(await units('chainb-write')).toBe(40)
  expect(Number((await target.sql('SELECT units FROM gateway_Plans WHERE name = \'trial\''))[0].units)).toBe(123)
  expect((await target.sql('SELECT name FROM gateway_Packs ORDER BY name')).map(row => row.name)).toEqual(['builder', 'scale', 'starter'])
  expect(await units('operator-own')).toBe(7)
  expect(await planNames()).toEqual(['operator', 'scale', 'standard', 'trial'])
})
