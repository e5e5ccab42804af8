import cds from '@sap/cds'

/**
 * Plain SQL for the few statements CQL cannot say (ON CONFLICT DO NOTHING) or that run on a hot
 * path. They are written once with `?` placeholders and run unchanged on SQLite and PostgreSQL.
 * Table names come from the model (`tableOf`), never typed by hand.
 */

/** The database in use is PostgreSQL (else SQLite). */
export const isPostgres = (): boolean => (cds.db as { kind?: string } | undefined)?.kind === 'postgres'

/**
 * The table of an entity, named as CAP names it in SQL: the linked definition's own string form
 * (the qualified name with dots as underscores). Takes the generated entity (`#cds-models/...`),
 * so a renamed or removed entity fails here instead of in a query.
 */
export function tableOf(entity: { name: string }): string {
  const definition = cds.model?.definitions[entity.name]
  if (definition?.kind !== 'entity') throw new Error(`${entity.name} is not an entity of the loaded model`)
  return String(definition)
}

/** The statement as the database in use expects it: `?` numbered ($1, $2, …) on PostgreSQL. */
export function forDatabase(sql: string): string {
  if (!isPostgres()) return sql
  let n = 0
  return sql.replace(/\?/g, () => '$' + ++n)
}

/** How many rows a write changed, whichever database answered. */
export const rowsChanged = (result: unknown): number => Number((result as { changes?: number } | undefined)?.changes ?? result)

/** Runs a write in the current transaction and answers how many rows it changed. */
export async function runWrite(sql: string, values: unknown[]): Promise<number> {
  return rowsChanged(await cds.run(forDatabase(sql), values))
}

/**
 * Whether a write failed on a unique constraint (another writer got there first), as SQLite,
 * PostgreSQL and CAP's database services each report it.
 */
export function isUniqueViolation(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown }
  if (code === '23505' || code === 'UNIQUE_CONSTRAINT_VIOLATION' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'ENTITY_ALREADY_EXISTS') return true
  return typeof message === 'string' && /UNIQUE constraint failed|duplicate key value violates unique constraint/i.test(message)
}
