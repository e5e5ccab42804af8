import { administer, databasesOfRun, onPostgres, quoted } from './postgres.ts'

/** Removes this run's databases: the template and every test file's copy. */
export default async function globalTeardown() {
  const template = process.env.CAG_TEST_TEMPLATE
  if (!onPostgres() || !template) return
  const databases = await databasesOfRun(template)
  await administer(...databases.reverse().map(name => `DROP DATABASE IF EXISTS ${quoted(name)} WITH (FORCE)`))
}
