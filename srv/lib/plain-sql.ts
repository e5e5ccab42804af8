import cds from '@sap/cds'

/**
 * Plain SQL for the few statements CQL cannot say (ON CONFLICT DO NOTHING) or that run on a hot
 * path. They are written once with `?` placeholders and run unchanged on SQLite and PostgreSQL.
 */

/** The statement as the database in use expects it: `?` numbered ($1, $2, …) on PostgreSQL. */
export function forDatabase(sql: string): string {
  if ((cds.db as any)?.kind !== 'postgres') return sql
  let n = 0
  return sql.replace(/\?/g, () => '$' + ++n)
}

/** How many rows a write changed, whichever database answered. */
export const rowsChanged = (result: any): number => Number(result?.changes ?? result)

/** Runs a write in the current transaction and answers how many rows it changed. */
export async function runWrite(sql: string, values: unknown[]): Promise<number> {
  return rowsChanged(await cds.run(forDatabase(sql), values))
}
