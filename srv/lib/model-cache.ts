import cds from '@sap/cds'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'

/**
 * The model compiled for the runtime, kept between runs of a command (`npm run gateway -- …`):
 * compiling it takes seconds, reading it back a fraction of one. It is keyed by everything it is
 * compiled from (the model's sources and seed files, the compiler's version, the settings that
 * shape it), so a changed model is compiled again, never read stale.
 */

const SKIPPED = new Set(['node_modules', '.git', 'gen', '@cds-models', 'coverage', '.ci', '.artifacts', 'test', 'bench'])
const SOURCE = /\.(cds|csv)$|^csn\.json$/

function sources(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return SKIPPED.has(entry.name) || entry.name.startsWith('.') ? [] : sources(path)
    return SOURCE.test(entry.name) ? [path] : []
  })
}

/** The hash of what the model is compiled from. */
export function modelKey(): string {
  const env = cds.env as unknown as Record<string, unknown>
  const hash = createHash('sha256').update(cds.version).update(JSON.stringify([env.roots, env.cdsc, env.features, env.odata]))
  for (const file of sources(cds.root).sort()) hash.update(relative(cds.root, file)).update('\0').update(readFileSync(file)).update('\0')
  return hash.digest('hex')
}

/** The runtime model: read back when this model was compiled before, else compiled and kept (where the install is writable). */
export async function compiledModel(): Promise<cds.linked.LinkedCSN> {
  const file = join(cds.root, 'node_modules', '.cache', 'cag-model', `${modelKey()}.json`)
  if (existsSync(file)) {
    try {
      const model = cds.linked(JSON.parse(readFileSync(file, 'utf8')))
      // CAP's mark of a model compiled for the runtime (cds.compile.for.nodejs), so that connecting
      // to the database does not compile it again.
      Object.defineProperty(model, '_4nodejs', { value: model })
      return model
    } catch {
      // A file cut short (a full disk): compiled again below.
    }
  }
  const model = cds.compile.for.nodejs(await cds.load('*'))
  try {
    mkdirSync(dirname(file), { recursive: true })
    const partial = `${file}.${process.pid}`
    writeFileSync(partial, JSON.stringify(model))
    renameSync(partial, file)
  } catch {
    // A read-only install compiles at every run.
  }
  return model
}
