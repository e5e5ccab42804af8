import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { administer, databasesOfEndedRuns, onPostgres, quoted } from './postgres.ts'

/**
 * Runs once before all suites. TypeScript handlers are only loaded by CAP when CDS_TYPESCRIPT is
 * set. With the `pg` profile the schema is deployed into a template database, which every test
 * file copies (test/setup/database.ts).
 */
export default async function globalSetup() {
  process.env.CDS_TYPESCRIPT = 'true'
  if (!onPostgres()) return
  const template = `cag_test_${process.pid}`
  const leftovers = await databasesOfEndedRuns()
  await administer(...[...leftovers, template].map(name => `DROP DATABASE IF EXISTS ${quoted(name)} WITH (FORCE)`), `CREATE DATABASE ${quoted(template)}`)
  const root = join(__dirname, '..', '..')
  execFileSync(process.execPath, [join(root, 'db', 'deploy.js')], {
    cwd: root, stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test', CDS_REQUIRES_DB_CREDENTIALS_DATABASE: template },
  })
  process.env.CAG_TEST_TEMPLATE = template
}
