import cds from '@sap/cds'
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { modelKey } from './model-cache.ts'
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
 * rows an operator changed keep their change. A file the same model was deployed to (its stamp,
 * `<file>.model`, holds the model's key) is left as it is. PostgreSQL is deployed by its own deployer
 * (db/deploy.js: `npm run deploy:pg`, the CF task);
 * in-memory databases by CAP itself. `model` is the model already loaded, when there is one (the
 * server's), else the model files.
 */
export async function deploySqliteFile(model: string | object = '*'): Promise<void> {
  const db = (cds.env.requires as any).db
  const url: string | undefined = db?.credentials?.url ?? db?.credentials?.database
  if (db?.kind !== 'sqlite' || !url || url === ':memory:') return
  const file = resolve(cds.root, url)
  // The model last deployed to the file: when it is this one, there is nothing to do (and a
  // command of the command line starts without compiling the model for SQL).
  const stamp = `${file}.model`
  if (existsSync(file) && existsSync(stamp) && readFileSync(stamp, 'utf8') === modelKey()) return
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
  writeFileSync(stamp, modelKey())
}
