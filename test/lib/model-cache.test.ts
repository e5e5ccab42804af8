import cds from '@sap/cds'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { compiledModel, modelKey } from '../../srv/lib/model-cache.ts'

/**
 * The command line's model, compiled once and read back while the model is the same: a changed
 * source, seed file or compiler setting compiles it again.
 */
let project: string
const root = cds.root

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'cag-model-cache-'))
  mkdirSync(join(project, 'db'))
  writeFileSync(join(project, 'db', 'schema.cds'), 'namespace shop; entity Books { key ID : Integer; title : String(100); }')
  mkdirSync(join(project, 'srv'))
  writeFileSync(join(project, 'srv', 'service.cds'), 'using { shop } from \'../db/schema\'; service CatalogService { entity Books as projection on shop.Books; }')
  cds.root = project
})

afterAll(() => {
  cds.root = root
  rmSync(project, { recursive: true, force: true })
})

const cached = () => readdirSync(join(project, 'node_modules', '.cache', 'cag-model'))

test('compiled once, then read back: the same definitions, marked compiled for the runtime', async () => {
  const compile = jest.spyOn(cds.compile.for, 'nodejs')
  try {
    const first = await compiledModel()
    expect(compile).toHaveBeenCalledTimes(1)
    expect(cached()).toEqual([`${modelKey()}.json`])
    const again = await compiledModel()
    expect(compile).toHaveBeenCalledTimes(1)
    expect(Object.keys(again.definitions).sort()).toEqual(Object.keys(first.definitions).sort())
    expect((again.definitions['CatalogService.Books'] as any).elements.title.length).toBe(100)
    // Connecting a service to it does not compile it again.
    expect(cds.compile.for.nodejs(again as any)).toBe(again)
  } finally {
    compile.mockRestore()
  }
})

test('a changed source or seed file is a new key: compiled again, never read stale', async () => {
  const before = modelKey()
  writeFileSync(join(project, 'db', 'schema.cds'), 'namespace shop; entity Books { key ID : Integer; title : String(200); }')
  const changed = modelKey()
  expect(changed).not.toBe(before)
  expect(((await compiledModel()).definitions['CatalogService.Books'] as any).elements.title.length).toBe(200)
  mkdirSync(join(project, 'db', 'data'))
  writeFileSync(join(project, 'db', 'data', 'shop-Books.csv'), 'ID;title\n1;A\n')
  expect(modelKey()).not.toBe(changed)
})
