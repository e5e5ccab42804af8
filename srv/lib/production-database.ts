import cds from '@sap/cds'

/**
 * The production database, `cds.requires.db` (PostgreSQL): its credentials come from a bound
 * `postgresql-db` service (CAP resolves the binding from VCAP_SERVICES) or are set explicitly
 * (`CDS_REQUIRES_DB_CREDENTIALS_HOST`...). The start checks that they are there before connecting,
 * and that the database answers once the services are served, naming the host and database (never
 * the password).
 */

interface DbCredentials {
  host?: string
  hostname?: string
  port?: number | string
  database?: string
  dbname?: string
  user?: string
  username?: string
  url?: string
}

const DATABASE_LABEL = 'postgresql-db'

const dbOptions = () => (cds.env.requires as unknown as Record<string, { kind?: string; credentials?: DbCredentials } | undefined>).db

/** The problem with the database's binding (lib/production-settings.ts), when its kind is PostgreSQL. */
export function databaseProductionProblems(): string[] {
  const db = dbOptions()
  if (db?.kind !== 'postgres') return []
  const credentials = db.credentials ?? {}
  if (credentials.host || credentials.hostname) return []
  return [`cds.requires.db has no PostgreSQL credentials (no host): ${bindingState()}; bind a ${DATABASE_LABEL} service to the app (cf bind-service), or set cds.requires.db.credentials (CDS_REQUIRES_DB_CREDENTIALS_HOST, _PORT, _DATABASE, _USER, _PASSWORD)`]
}

/** What VCAP_SERVICES says about a database binding. */
function bindingState(): string {
  const vcap = process.env.VCAP_SERVICES
  if (!vcap) return 'no service is bound (VCAP_SERVICES is not set)'
  let labels: string[]
  try {
    labels = Object.keys(JSON.parse(vcap) ?? {})
  } catch {
    return 'VCAP_SERVICES is not valid JSON'
  }
  return labels.includes(DATABASE_LABEL) ? `the ${DATABASE_LABEL} binding in VCAP_SERVICES carries no host` : `VCAP_SERVICES has no ${DATABASE_LABEL} service (bound: ${labels.join(', ') || 'none'})`
}

/** Where the database is, for messages: host, port, database and user, never the password. */
export function databaseAddress(): string {
  const credentials = dbOptions()?.credentials ?? {}
  const host = credentials.hostname ?? credentials.host ?? '(no host)'
  const database = credentials.dbname ?? credentials.database ?? '(default database)'
  const user = credentials.username ?? credentials.user
  return `${host}:${credentials.port ?? 5432}, database '${database}'${user ? `, user '${user}'` : ''}`
}

/** How long the start waits for the database's first answer. */
const FIRST_ANSWER_MS = 15_000

/**
 * First of all at a production start on PostgreSQL (before the schema is waited for): the database
 * answers a first statement, or the process ends with one line naming where it was looked for.
 */
export async function checkTheDatabaseAnswers(): Promise<void> {
  if (dbOptions()?.kind !== 'postgres') return
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${FIRST_ANSWER_MS / 1000} s`)), FIRST_ANSWER_MS)))
  try {
    await Promise.race([firstAnswer(), late])
  } catch (error) {
    const message = `The database does not answer (cds.requires.db, PostgreSQL at ${databaseAddress()}): ${(error as Error).message}`
    if (typeof (globalThis as { test?: unknown }).test === 'function') throw new Error(message, { cause: error })
    console.error(message)
    process.exit(1)
  } finally {
    clearTimeout(timer)
  }
}

/**
 * SELECT 1 on a connection of its own: cds.connect.to('db') made before the model is loaded would
 * be the one CAP serves with, and a database service without the model cannot resolve its queries.
 */
async function firstAnswer(): Promise<void> {
  const db = await cds.connect.to('db', { ...dbOptions() })
  try {
    await db.run('SELECT 1')
  } finally {
    await (db as { disconnect?: () => Promise<void> }).disconnect?.()
  }
}
