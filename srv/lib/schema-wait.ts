import cds from '@sap/cds'
import { profiles } from './settings.ts'

const LOG = cds.log('db')

/** How often a server whose database has no schema yet looks again. */
const RETRY_MS = Number(process.env.CDS_SCHEMA_WAIT_RETRY_MS) || 5000

/**
 * On PostgreSQL the schema is deployed by its own task (the deployer, `npm run deploy:pg`), which
 * may finish after the server starts (a first deploy to Cloud Foundry runs both at once). Before
 * serving, the server waits until every table of its model is there: it says so once, looks again
 * every few seconds, and then goes on. SQLite files and in-memory databases are deployed by the
 * server itself; the test profile's databases are deployed before its servers start.
 */
export async function untilTheSchemaIsDeployed(retryMs = RETRY_MS): Promise<void> {
  if ((cds.env.requires as any).db?.kind !== 'postgres' || profiles().includes('test')) return
  // A connection of its own: cds.connect.to('db') made now, before the model is loaded, would be
  // the one CAP serves with, and a database service without the model cannot resolve its queries.
  const db = await cds.connect.to('db', { ...(cds.env.requires as any).db })
  try {
    await untilTheTablesAreThere(db, tablesOf(cds.linked(await cds.load('*')) as any), retryMs)
  } finally {
    await (db as { disconnect?: () => Promise<void> }).disconnect?.()
  }
}

async function untilTheTablesAreThere(db: cds.Service, expected: string[], retryMs: number): Promise<void> {
  let waited = false
  let unanswered = false
  for (;;) {
    // A database that cannot be reached yet, or a pool that found no connection in time (a small
    // pool on a busy machine), is asked again: the server starts once it answers.
    const missing = await missingTables(db, expected).catch((error: Error) => {
      if (!unanswered) LOG.warn(`the database does not answer yet (${error.message}); looking again every ${Math.round(retryMs / 1000)} s`)
      unanswered = true
      return undefined
    })
    if (missing && !missing.length) break
    if (!missing) {
      await new Promise(resolve => setTimeout(resolve, Math.min(retryMs, 1000)))
      continue
    }
    if (!waited) LOG.warn(`waiting for the database schema: ${missing.length} of ${expected.length} tables are missing (${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', …' : ''}); `
      + `deploy it with the deployer task (on Cloud Foundry the chain-access-postgres-deployer app's task deploy-to-postgresql; locally npm run deploy:pg). Looking again every ${Math.round(retryMs / 1000)} s`)
    waited = true
    await new Promise(resolve => setTimeout(resolve, retryMs))
  }
  if (waited || unanswered) LOG.info('the database schema is deployed; starting')
}

/** The tables the model's persisted entities need (not views, not entities kept elsewhere), as PostgreSQL names them. */
function tablesOf(model: { definitions: Record<string, any> }): string[] {
  return Object.values(model.definitions)
    .filter(definition => definition.kind === 'entity' && !definition.query && !definition.projection && !definition.abstract
      && !definition['@cds.persistence.skip'] && !definition['@cds.persistence.exists'] && !definition['@cds.persistence.table'])
    .map(entity => (entity.name as string).replace(/\./g, '_').toLowerCase())
}

async function missingTables(db: cds.Service, expected: string[]): Promise<string[]> {
  const rows = await db.run('SELECT lower(tablename) AS name FROM pg_tables WHERE schemaname = current_schema()') as { name: string }[]
  const present = new Set(rows.map(row => row.name))
  return expected.filter(table => !present.has(table))
}
