import cds from '@sap/cds'
import { existsSync, mkdirSync, renameSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { requiresOptions, type Tree } from './requires-options.ts'

const db = requiresOptions<Tree>('db', {})

/** The SQLite database file as configured (`cds.requires.db`), absolute; undefined for another database or one in memory. */
export function sqliteFile(): string | undefined {
  const read = db.reader(db.options())
  const url = read.optional('credentials.url') ?? read.optional('credentials.database')
  return read.optional('kind') === 'sqlite' && url && url !== ':memory:' ? resolve(cds.root, url) : undefined
}

/**
 * A SQLite file database (development, self-hosted) is created on first start and upgraded in
 * place afterwards (`schema_evolution: auto` keeps its rows). When the model changed in a way that
 * cannot be applied in place (a lossy type change), the old file is kept as a backup and a fresh
 * one is created. Either way the seed rows are added where their key is absent (db/init.js), so
 * rows an operator changed keep their change. PostgreSQL is deployed by its own deployer
 * (db/deploy.js: `npm run deploy:pg`, the CF task);
 * in-memory databases by CAP itself. `model` is the model already loaded, when there is one (the
 * server's), else the model files.
 */
export async function deploySqliteFile(model: string | object = '*'): Promise<void> {
  const db = (cds.env.requires as any).db
  const url: string | undefined = db?.credentials?.url ?? db?.credentials?.database
  if (db?.kind !== 'sqlite' || !url || url === ':memory:') return
  const file = resolve(cds.root, url)
  mkdirSync(dirname(file), { recursive: true })
  try {
    await (cds as any).deploy(model).to('db')
  } catch (error) {
    if (!existsSync(file) || !/lossy|not supported|will not work/i.test(String((error as Error).message))) throw error
    const backup = `${file}.backup-${new Date().toISOString().replace(/[:.]/g, '-')}`
    await (cds as any).db?.disconnect?.()
    renameSync(file, backup)
    cds.log('db').warn(`the model changed incompatibly with ${url}; kept it as ${backup} and created a new database`)
    await (cds as any).deploy('*').to('db')
  }
}
