import cds from '@sap/cds'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

/**
 * Runs in every test file before the file itself. Each file's server compiles the same model as
 * every other file's: the sources to CSN, that CSN for OData (the runtime's model is made from it)
 * and the schema of its database (seconds of CPU each, a large share of the suite's time on two
 * cores). Here each result is kept in
 * node_modules/.cache/cag-test-model, keyed by every file the model is compiled from and the options
 * and settings that shape it, and read back by the next file: the same output the compiler gives,
 * which a changed source or setting compiles again. Tests only; the application compiles as CAP does.
 *
 * Servers the tests start as processes of their own load it too (`--import`, test/support/server.ts),
 * where it runs as an ES module: hence the cache's place found from the working folder (the
 * checkout's root, in jest and in those servers) and `require` made where jest has none to give.
 */

const CACHE = join(process.cwd(), 'node_modules', '.cache', 'cag-test-model')
// jest's own require (the module registry the test file's CAP is in), or Node's in a server process.
const requireHere = typeof require === 'function' ? require : createRequire(join(process.cwd(), 'package.json'))

const digest = (...parts: unknown[]) => {
  const hash = createHash('sha256').update(cds.version)
  for (const part of parts) hash.update(typeof part === 'string' ? part : JSON.stringify(part) ?? 'undefined').update('\0')
  return hash.digest('hex')
}

function kept<T>(key: string, make: () => T, write: (value: T) => string, read: (text: string) => T): T {
  const file = join(CACHE, `${key}.json`)
  if (existsSync(file)) {
    try {
      return read(readFileSync(file, 'utf8'))
    } catch {
      // Cut short (a full disk): made again below.
    }
  }
  const value = make()
  const text = write(value)
  if (text) writeKept(key, text)
  return value
}

function writeKept(key: string, text: string) {
  const file = join(CACHE, `${key}.json`)
  try {
    mkdirSync(dirname(file), { recursive: true })
    const partial = `${file}.${process.pid}`
    writeFileSync(partial, text)
    renameSync(partial, file)
  } catch {
    // Not writable: compiled each time.
  }
}

type Csn = { definitions: Record<string, any>; $sources?: string[] }
const env = cds.env as unknown as Record<string, unknown>
const settings = () => [env.cdsc, env.features, env.odata, env.requires ? Object.keys(env.requires as object).sort() : null, env.i18n]

/** The key of a model as loaded from these files: their names and contents. */
function sourcesKey(files: string[], options: unknown): string {
  return digest(settings(), options, ...files.flatMap(file => [file, readFileSync(file)]).map(part => (Buffer.isBuffer(part) ? part.toString('base64') : part)))
}

/** Identity of a CSN already read: the key it was kept under (or none: then nothing is cached for it). */
const keyOf = new WeakMap<object, string>()

/**
 * What the compiler leaves out of JSON (non-enumerable): each definition's `$location` (CAP finds a
 * service's implementation beside its source file by it) and `$syntax`, each element's `$location`.
 */
type Hidden = Record<string, { $location?: unknown; $syntax?: unknown; elements?: Record<string, unknown> }>

function hiddenOf(csn: Csn): Hidden {
  const hidden: Hidden = {}
  for (const [name, definition] of Object.entries(csn.definitions)) {
    const elements = Object.fromEntries(Object.entries(definition.elements ?? {}).map(([element, value]: [string, any]) => [element, value?.$location]).filter(([, location]) => location))
    hidden[name] = { $location: definition.$location, $syntax: definition.$syntax, elements }
  }
  return hidden
}

function restoreHidden(csn: Csn, hidden: Hidden) {
  const define = (target: object, name: string, value: unknown) => value !== undefined && Object.defineProperty(target, name, { value, enumerable: false, writable: true, configurable: true })
  for (const [name, { $location, $syntax, elements }] of Object.entries(hidden)) {
    const definition = csn.definitions[name]
    if (!definition) continue
    define(definition, '$location', $location)
    define(definition, '$syntax', $syntax)
    for (const [element, location] of Object.entries(elements ?? {})) if (definition.elements?.[element]) define(definition.elements[element], '$location', location)
  }
}

// Sources to CSN: `cds.load('*')`, as the server calls it (any other call compiles as usual).
const originalLoad = cds.load
const load = cds.load.bind(cds)
// Options that shape the CSN (cwd too: the files and their locations are found from it): such a load is not kept.
const COMPILER_OPTIONS = ['flavor', 'parse', 'plain', 'clean', 'files', 'sources', 'docs', 'locations', 'silent', 'cwd']
const cachedLoad = async function (models: unknown, options?: Record<string, unknown>) {
  const star = models === undefined || models === '*' || (Array.isArray(models) && models.length === 1 && models[0] === '*')
  const files = star && typeof options !== 'string' && !COMPILER_OPTIONS.some(option => options?.[option] !== undefined) ? cds.resolve('*') as string[] | undefined : undefined
  if (!files?.length) return load(models as any, options as any)
  const key = sourcesKey(files, null)
  let compiled = false
  const { csn, hidden } = await kept<Promise<{ csn: Csn; hidden: Hidden }>>(key, async () => {
    compiled = true
    const fresh = await load(models as any, options as any) as Csn
    return { csn: fresh, hidden: hiddenOf(fresh) }
  }, () => '', text => Promise.resolve(JSON.parse(text)))
  if (compiled) writeKept(key, JSON.stringify({ csn: { ...csn, $sources: csn.$sources }, hidden }))
  // Services CAP marks as external when it compiles: with any, the kept CSN would lack the mark.
  if (Object.keys(csn.definitions).some(name => csn.definitions[name].kind === 'service' && (cds.requires as any)[name]?.external)) return compiled ? csn : load(models as any, options as any)
  if (!compiled) {
    restoreHidden(csn, hidden)
    Object.defineProperty(csn, '$sources', { value: csn.$sources, enumerable: false, writable: true, configurable: true })
    ;(cds as unknown as { emit(event: string, ...args: unknown[]): void }).emit('loaded', csn)
  }
  keyOf.set(csn, key)
  return csn
}
// With its companions (cds.load.properties, .csv, .yaml, .parsed).
;(cds as any).load = Object.assign(cachedLoad, originalLoad)

// The schema a database is deployed with: in full, or (schema evolution, as the test profile's
// databases have it) as the difference from what was deployed before (nothing, for a new database).
const shapingOf = (options?: Record<string, unknown>) => {
  const { messages: _messages, schema_log: _log, ...shaping } = options ?? {}
  return shaping
}
const toSql = cds.compile.to.sql
const delta = (toSql as any).delta
Object.defineProperty(cds.compile.to, 'sql', {
  configurable: true, writable: true,
  value: Object.assign(function cachedToSql(csn: Csn, options?: Record<string, unknown>) {
    const key = keyOf.get(csn)
    if (!key) return toSql(csn as any, options as any)
    return kept(digest('sql', key, shapingOf(options)), () => toSql(csn as any, options as any), value => JSON.stringify(value), text => JSON.parse(text))
  }, toSql, {
    delta(csn: Csn, options: Record<string, unknown>, before?: unknown) {
      const key = keyOf.get(csn)
      if (!key) return delta(csn, options, before)
      return kept(digest('delta', key, shapingOf(options), before ?? null), () => delta(csn, options, before), value => JSON.stringify(value), text => JSON.parse(text))
    },
  }),
})

/**
 * The compiler's OData transformation, the costly part of `cds.compile.for.nodejs` (CAP links and
 * annotates its output itself). Keyed by the input as it is, since CAP first reduces the CSN
 * (cds.minify) to a new object. The output's non-enumerable properties are kept beside it: each
 * `$location` (CAP finds a service's implementation by it), `meta.transformation` and
 * `meta.options` (by which the EDMX compiler knows the CSN is transformed already), and the rest
 * but the transformation's own bookkeeping.
 */
const cdsc = requireHere('@sap/cds/lib/compile/cdsc') as { for: { odata(csn: Csn, options?: unknown): Csn } }
const compilerVersion = (requireHere('@sap/cds-compiler/package.json') as { version: string }).version
const forOdata = cdsc.for.odata
const TRANSFORMATION_BOOKKEEPING = new Set(['$path', '$defPath', '$scope', '$pathInStructuredModel', '$flatelements', '$flatAnnotations'])

type HiddenAt = [path: string[], name: string, value: unknown][]

function hiddenProperties(root: object): HiddenAt {
  const found: HiddenAt = []
  const seen = new Set<object>()
  const visit = (node: unknown, path: string[]) => {
    if (!node || typeof node !== 'object' || seen.has(node)) return
    seen.add(node)
    for (const name of Object.getOwnPropertyNames(node)) {
      const { enumerable, value } = Object.getOwnPropertyDescriptor(node, name)!
      if (enumerable) visit(value, [...path, name])
      else if (!(Array.isArray(node) && name === 'length') && !TRANSFORMATION_BOOKKEEPING.has(name)) found.push([path, name, value])
    }
  }
  visit(root, [])
  return found
}

function restoreHiddenProperties(root: object, hidden: HiddenAt) {
  for (const [path, name, value] of hidden) {
    const target = path.reduce<any>((node, key) => node?.[key], root)
    if (target && typeof target === 'object') Object.defineProperty(target, name, { value, enumerable: false, writable: true, configurable: true })
  }
  return root
}

/** JSON text, or nothing (then compiled each time) where a hidden value is not plain data. */
function keepable(value: unknown): string {
  try {
    return JSON.stringify(value)
  } catch {
    return ''
  }
}

cdsc.for.odata = function cachedForOdata(csn: Csn, options?: unknown) {
  const locations = Object.entries(csn.definitions ?? {}).map(([name, definition]) => [name, definition?.$location])
  const key = digest('odata', compilerVersion, settings(), options ?? null, locations, JSON.stringify(csn))
  return kept(key, () => forOdata(csn, options), output => keepable({ output, hidden: hiddenProperties(output) }), text => {
    const { output, hidden } = JSON.parse(text)
    return restoreHiddenProperties(output, hidden) as Csn
  })
}

/** Runs `make` with the compilers as CAP has them, nothing read from or written to the cache (to test the cache). */
export async function withoutTheCache<T>(make: () => Promise<T> | T): Promise<T> {
  const cached = { load: cds.load, odata: cdsc.for.odata, sql: cds.compile.to.sql }
  ;(cds as any).load = originalLoad
  cdsc.for.odata = forOdata
  Object.defineProperty(cds.compile.to, 'sql', { configurable: true, writable: true, value: toSql })
  try {
    return await make()
  } finally {
    ;(cds as any).load = cached.load
    cdsc.for.odata = cached.odata
    Object.defineProperty(cds.compile.to, 'sql', { configurable: true, writable: true, value: cached.sql })
  }
}
