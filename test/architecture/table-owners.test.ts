import cds from '@sap/cds'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, resolve, sep } from 'node:path'

/**
 * Each table has one owning service; another service reads or changes it only through the owner's
 * internal service (DESIGN.md section 2). This checks the model's projections (a service's entity
 * projects its own folder's tables, or another service's entities) and the writes: every CQL write (INSERT.into,
 * UPSERT.into, UPDATE, UPDATE.entity, DELETE.from) and every plain SQL write (INSERT INTO, UPDATE,
 * DELETE FROM) under srv/ names a table its own folder owns. A table's owner is the folder owning
 * the db file that declares it; a service's projection is owned as the table it projects.
 */

const root = resolve(__dirname, '..', '..')
const srv = join(root, 'srv')

/** The one declaration of owners: each db file and the srv/ folder whose service owns its tables. */
const OWNERS: Record<string, string> = {
  'db/analytics.cds': 'srv/analytics',
  'db/chain-a.cds': 'srv/chaina-odata',
  'db/chain-a-tx.cds': 'srv/chaina-transaction',
  'db/chain-a-sign.cds': 'srv/chaina-sign',
  'db/chain-b.cds': 'srv/chainb-indexer',
  'db/chain-b-vault.cds': 'srv/chainb',
  'db/gateway.cds': 'srv/gateway',
  'db/gateway-purchases.cds': 'srv/key-lanes',
  'db/gateway-vouchers.cds': 'srv/key-lanes',
  'db/gateway-wallets.cds': 'srv/key-lanes',
  'db/operator.cds': 'srv/operator',
}

type Definitions = Record<string, { kind?: string; $location?: { file?: string }; query?: { SELECT?: { from?: { ref?: string[] } } } }>

let definitions: Definitions

beforeAll(async () => {
  definitions = cds.linked(await cds.load('*', { cwd: root } as object)).definitions as unknown as Definitions
})

const posix = (path: string) => path.split(sep).join('/')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap(name => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : []
  })
}

/** The db entity behind an entity: itself, or the table a service's projection selects from. */
function tableOf(name: string): string | undefined {
  for (let current = name, hops = 0; hops < 10; hops++) {
    const definition = definitions[current]
    if (definition?.kind !== 'entity') return undefined
    if (definition.$location?.file?.startsWith('db/')) return current
    const source = definition.query?.SELECT?.from?.ref?.[0]
    if (!source) return undefined
    current = source
  }
  return undefined
}

/** The folder owning a table (undefined for one no db file declares). */
function ownerOf(table: string): string | undefined {
  const file = definitions[table]?.$location?.file
  return file ? OWNERS[posix(file)] : undefined
}

/** The folder a source file belongs to: the first folder under srv/ (or srv itself). */
function folderOf(file: string): string {
  const [first, second] = posix(relative(root, file)).split('/').slice(1)
  return second === undefined ? 'srv' : `srv/${first}`
}

/** Each export of a cds-typer module (@cds-models/<module>/index.js) with the entity it stands for. */
const typerModules = new Map<string, Map<string, string>>()
function typerExports(module: string): Map<string, string> {
  let exports = typerModules.get(module)
  if (!exports) {
    exports = new Map()
    const file = join(root, '@cds-models', module, 'index.js')
    const text = existsSync(file) ? readFileSync(file, 'utf8') : ''
    for (const [, name, namespace, entity] of text.matchAll(/module\.exports\.(\w+) = createEntityProxy\(\['([\w.]+)', '(\w+)'\]/g)) {
      exports.set(name, `${namespace}.${entity}`)
    }
    typerModules.set(module, exports)
  }
  return exports
}

/** The entities a file imports from cds-typer's modules, by their local names (type-only imports write nothing). */
function importedEntities(text: string): Map<string, string> {
  const entities = new Map<string, string>()
  for (const [, clause, module] of text.matchAll(/import\s+(?!type\s)([^;'"]*?)\s+from\s+'#cds-models\/([^']+)'/g)) {
    const exports = typerExports(module)
    const named = /\{([^}]*)\}/.exec(clause)?.[1] ?? ''
    for (const part of named.split(',').map(item => item.trim()).filter(item => item && !item.startsWith('type '))) {
      const [exported, local = exported] = part.split(/\s+as\s+/)
      const entity = exports.get(exported)
      if (entity) entities.set(local, entity)
    }
  }
  return entities
}

const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/[^\n]*/g, '$1')

/**
 * The entities an expression names: imported entities, and those of the local constants it
 * names (`const table = tableOf(SyncState)`, `for (const table of [A, B])`), followed a few steps.
 */
function entitiesIn(expression: string, imported: Map<string, string>, text: string, depth = 0): string[] {
  const found: string[] = []
  for (const [, namespace, name] of expression.matchAll(/entities\(\s*'([\w.]+)'\s*\)\.(\w+)/g)) found.push(`${namespace}.${name}`)
  for (const [identifier] of expression.matchAll(/[A-Za-z_$][\w$]*/g)) {
    const entity = imported.get(identifier)
    if (entity) found.push(entity)
    else if (depth < 3) {
      const declared = new RegExp(`(?:const|let|var)\\s+${identifier.replace('$', '\\$')}\\s*(?:=|of)\\s*([^\\n]+)`).exec(text)
      if (declared) found.push(...entitiesIn(declared[1], imported, text, depth + 1))
    }
  }
  return found
}

/** Every table name of the model as plain SQL writes it (chainb_Jobs), with its entity. */
let sqlNames: Map<string, string> | undefined
const tableNames = () => (sqlNames ??= new Map(Object.keys(definitions).filter(name => tableOf(name) === name).map(name => [name.replace(/\./g, '_'), name])))

const CQL_WRITE = /\b(INSERT\.into|UPSERT\.into|UPDATE\.entity|UPDATE|DELETE\.from)\(\s*([^,)]+)/g
const SQL_WRITE = /\b(INSERT(?:\s+OR\s+\w+)?\s+INTO|UPDATE|DELETE\s+FROM)\s+(\$\{([^}]+)\}|[A-Za-z_]\w*)/g

interface Write { file: string; folder: string; statement: string; table: string }

/** The writes of one file, each with the table it names (writes naming no known entity are left out). */
function writesOf(file: string): Write[] {
  const text = withoutComments(readFileSync(file, 'utf8'))
  const imported = importedEntities(text)
  const names = tableNames()
  const folder = folderOf(file)
  const writes: Write[] = []
  const add = (statement: string, entities: string[]) => {
    for (const entity of entities) {
      const table = tableOf(entity)
      if (table) writes.push({ file: posix(relative(root, file)), folder, statement, table })
    }
  }
  for (const [, statement, argument] of text.matchAll(CQL_WRITE)) add(statement, entitiesIn(argument, imported, text))
  for (const [, statement, target, interpolated] of text.matchAll(SQL_WRITE)) {
    const named = interpolated ? entitiesIn(interpolated, imported, text) : names.has(target) ? [names.get(target)!] : []
    add(statement.replace(/\s+/g, ' '), named)
  }
  return writes
}

const allWrites = () => sourceFiles(srv).flatMap(writesOf)

test('every table of the db files has an owner', () => {
  const unowned = Object.keys(definitions).filter(name => tableOf(name) === name && !ownerOf(name))
  expect(unowned).toEqual([])
})

test('the writes are found: CQL, plain SQL with tableOf, constants and loops over tables', () => {
  const found = allWrites().map(write => `${write.file} ${write.statement} ${write.table}`)
  expect(found).toEqual(expect.arrayContaining([
    'srv/gateway/ledger.ts UPDATE gateway.ApiKeys',
    'srv/chaina-sign/audit.ts INSERT INTO chainasign.SigningAuditHead',
    'srv/chaina-transaction/chain-context.ts DELETE.from chainatx.SpendLocks',
    'srv/analytics/bucket-writer.ts DELETE.from analytics.MetricBuckets',
  ]))
})

test('no folder under srv/ writes a table another service owns', () => {
  const foreign = allWrites()
    .filter(write => ownerOf(write.table) !== write.folder)
    .map(write => `${write.file}: ${write.statement} ${write.table} (owned by ${ownerOf(write.table)})`)
  expect([...new Set(foreign)]).toEqual([])
})

test("no service's model projects a table another service owns: it projects the owner's internal service instead", () => {
  const foreign = Object.entries(definitions).flatMap(([name, definition]) => {
    const file = definition.$location?.file
    const source = definition.query?.SELECT?.from?.ref?.[0]
    if (definition.kind !== 'entity' || !file?.startsWith('srv/') || !source || !definitions[source]?.$location?.file?.startsWith('db/')) return []
    const folder = folderOf(join(root, file))
    return ownerOf(source) === folder ? [] : [`${file}: ${name} projects ${source} (owned by ${ownerOf(source)})`]
  })
  expect(foreign).toEqual([])
})
