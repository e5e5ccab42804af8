import cds from '@sap/cds'
import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'

/**
 * A SQLite file database (development, self-hosted) is created on first start and upgraded in
 * place afterwards (`schema_evolution: auto` keeps its rows). PostgreSQL is deployed by its own
 * deployer (`npm run deploy:pg`, the CF deployer task); in-memory databases by CAP itself.
 */
export async function deploySqliteFile(): Promise<void> {
  const db = (cds.env.requires as any).db
  const url: string | undefined = db?.credentials?.url ?? db?.credentials?.database
  if (db?.kind !== 'sqlite' || !url || url === ':memory:') return
  mkdirSync(dirname(resolve(cds.root, url)), { recursive: true })
  await cds.deploy('*').to('db')
}
