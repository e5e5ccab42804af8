import cds from '@sap/cds'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'

/**
 * Plain SQL takes its table names from the model (`tableOf(ApiKeys)` in srv/lib/plain-sql.ts), so
 * a renamed entity fails at once instead of in a query. This checks the folders that have moved
 * to it: no table name of the model is typed by hand in their source.
 */

const root = resolve(__dirname, '..', '..')
const CHECKED = ['srv/gateway', 'srv/lib']

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

test.each(CHECKED)('%s types no table name by hand', folder => {
  const handTyped = sourceFiles(join(root, folder)).flatMap(file => {
    const text = readFileSync(file, 'utf8')
    return tables.filter(table => new RegExp(`\\b${table}\\b`).test(text)).map(table => `${relative(root, file)}: ${table}`)
  })
  expect(handTyped).toEqual([])
})
