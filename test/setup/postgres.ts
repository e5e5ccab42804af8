import { Client } from 'pg'

/**
 * On PostgreSQL every test file gets a database of its own, copied from a template that holds the
 * deployed schema and seed data. Files then never see each other's rows: a devnet started in the
 * same second as the previous file's would otherwise look like the same chain to the start-up
 * checks, and its cached blocks, locks and submissions would leak into the next file.
 */

export const onPostgres = () => (process.env.CDS_ENV ?? '').split(',').map(p => p.trim()).includes('pg')

/** Administrative statements go through the database the profile names (`test`). */
export async function administer(...statements: string[]): Promise<any[][]> {
  return onDatabase('test', ...statements)
}

/** Statements on a database, one after the other, from a connection of the test's own: each one's rows. */
export async function onDatabase(database: string, ...statements: string[]): Promise<any[][]> {
  const client = new Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database })
  await client.connect()
  try {
    const results = []
    for (const statement of statements) results.push((await client.query(statement)).rows)
    return results
  } finally {
    await client.end()
  }
}

/** The template of a run and the copies made from it, template first. */
export async function databasesOfRun(template: string): Promise<string[]> {
  const [rows] = await administer(`SELECT datname FROM pg_database WHERE datname = '${template}' OR datname LIKE '${template}\\_%' ORDER BY length(datname), datname`)
  return rows.map(row => row.datname)
}

/** Databases left by runs whose process is gone (a run that was killed). */
export async function databasesOfEndedRuns(): Promise<string[]> {
  const [rows] = await administer(`SELECT datname FROM pg_database WHERE datname ~ '^cag_test_[0-9]+'`)
  return rows.map(row => row.datname as string).filter(name => !isAlive(Number(/^cag_test_(\d+)/.exec(name)![1])))
}

function isAlive(pid: number) {
  try {
    process.kill(pid, 0)
    return true
  } catch (error: any) {
    return error.code === 'EPERM'
  }
}

export const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`
