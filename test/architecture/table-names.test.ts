import cds from '@sap/cds'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'

/**
 * Plain SQL takes its table names from the model (`tableOf(ApiKeys)` in srv/lib/plain-sql.ts), so
 * a renamed entity fails at once instead of in a query. This checks all of srv/, folder by folder
 * (and srv's own files): no table name of the model is typed by hand in its source.
 */

const root = resolve(__dirname, '..', '..')
const srv = join(root, 'srv')
const CHECKED = readdirSync(srv).filter(name => statSync(join(srv, name)).isDirectory()).map(name => `srv/${name}`)

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap(name => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return name.endsWith('.ts') ? [path] : []
  })
}

let tables: string[]

beforeAll(async () => {
  const model = cds.linked(await cds.load('*', { cwd: root } as object))
  tables = Object.values(model.definitions).filter(definition => definition.kind === 'entity').map(entity => String(entity))
})

test('the model names its tables', () => {
  expect(tables).toEqual(expect.arrayContaining(['gateway_ApiKeys', 'gateway_LedgerEntries']))
})

/** The table names typed by hand in some files, each as `file: table`. */
const handTypedIn = (files: string[]) => files.flatMap(file => {
  const text = readFileSync(file, 'utf8')
  return tables.filter(table => new RegExp(`\\b${table}\\b`).test(text)).map(table => `${relative(root, file)}: ${table}`)
})

test('every folder of srv/ is checked', () => {
  expect(CHECKED).toEqual(expect.arrayContaining(['srv/analytics', 'srv/chains', 'srv/gateway', 'srv/lib']))
})

test.each(CHECKED)('%s types no table name by hand', folder => {
  expect(handTypedIn(sourceFiles(join(root, folder)))).toEqual([])
})

test('srv\'s own files type no table name by hand', () => {
  const own = readdirSync(srv).map(name => join(srv, name)).filter(path => statSync(path).isFile() && path.endsWith('.ts'))
  expect(handTypedIn(own)).toEqual([])
})
