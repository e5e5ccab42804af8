import cds from '@sap/cds'

/**
 * Secondary indexes, declared in the model: an entity annotated
 * `@db.indexes: ['blockHash', 'chain, network, resolution, metric, bucketStart']` gets one index per
 * entry (its columns in order). CAP creates tables and keys but no other indexes, so they are
 * created once the services are served, `IF NOT EXISTS` (the same statement on SQLite and
 * PostgreSQL), for whichever deployer made the tables. An index that cannot be made (another
 * instance making it at the same moment) is logged and left to the next start.
 */

const LOG = cds.log('db')

interface Indexed { name: string; '@db.indexes'?: string[] }

export function indexStatements(model: { definitions: Record<string, unknown> }): string[] {
  const statements: string[] = []
  for (const definition of Object.values(model.definitions) as (Indexed & { kind?: string; query?: unknown; projection?: unknown })[]) {
    if (definition.kind !== 'entity' || definition.query || definition.projection || !definition['@db.indexes']) continue
    const table = definition.name.replace(/\./g, '_')
    for (const entry of definition['@db.indexes']) {
      const columns = entry.split(',').map(column => column.trim())
      if (!columns.every(column => /^[A-Za-z_][A-Za-z0-9_]*$/.test(column))) throw new Error(`@db.indexes of ${definition.name}: '${entry}' is not a list of columns`)
      statements.push(`CREATE INDEX IF NOT EXISTS ${table}_${columns.join('_')} ON ${table} (${columns.join(', ')})`)
    }
  }
  return statements
}

/** How long a statement is tried again while the pool hands out no connection in time (a small pool on a busy machine at start). */
const BUSY_POOL_PATIENCE_MS = 30_000

export async function createSecondaryIndexes(): Promise<void> {
  if (!cds.db || !cds.model) return
  const deadline = Date.now() + BUSY_POOL_PATIENCE_MS
  for (const statement of indexStatements(cds.model as never)) {
    for (;;) {
      const error = await cds.db.run(statement).then(() => undefined, (error: Error) => error)
      if (!error) break
      if (error.name === 'TimeoutError' && Date.now() < deadline) {
        await new Promise(resolve => setTimeout(resolve, 100))
        continue
      }
      LOG.warn(`index not created (${statement}):`, error.message)
      break
    }
  }
}
