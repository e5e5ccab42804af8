import { administer, onPostgres, quoted } from './postgres.ts'

// Runs in every test file before the file itself: on PostgreSQL, a database of the file's own
// (removed with the template when the run ends, after every server has stopped).
const template = process.env.CAG_TEST_TEMPLATE
if (onPostgres() && template) {
  const database = `${template}_${process.env.JEST_WORKER_ID ?? 0}_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`
  // CAP reads this when the file first loads @sap/cds; servers the file starts inherit it.
  process.env.CDS_REQUIRES_DB_CREDENTIALS_DATABASE = database
  beforeAll(() => administer(`CREATE DATABASE ${quoted(database)} TEMPLATE ${quoted(template)}`))
}
