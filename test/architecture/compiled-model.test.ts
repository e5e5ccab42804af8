import cds from '@sap/cds'
import { withoutTheCache } from '../setup/compiled-model.ts'

/**
 * The suite's servers read the compiled model from test/setup/compiled-model.ts's cache: it must be
 * what the compiler makes, down to what JSON does not show (the source locations CAP finds service
 * implementations by, the marks by which the EDMX compiler knows a CSN is transformed already).
 */

/** What the runtime reads off a linked model, beyond its JSON. */
const runtimeView = (model: any) => Object.entries(model.definitions).map(([name, definition]: [string, any]) => ({
  name,
  kind: definition.kind,
  class: Object.getPrototypeOf(definition)?.constructor?.name,
  location: definition.$location,
  service: definition._service?.name,
  drafts: definition.drafts?.name,
  actions: definition.actions && Object.keys(definition.actions),
  keys: definition.keys && Object.keys(definition.keys),
  elements: definition.elements && Object.entries(definition.elements).map(([element, e]: [string, any]) => [element, e._type, e.target, e.isAssociation, e.keys, e.key, e.$location, Object.getPrototypeOf(e)?.constructor?.name]),
}))

const servicesOf = (model: any) => Object.values(model.definitions).filter((definition: any) => definition.kind === 'service').map((definition: any) => definition.name as string)

let compiled: any
let kept: any
beforeAll(async () => {
  compiled = await withoutTheCache(async () => cds.compile.for.nodejs(await cds.load('*')))
  cds.compile.for.nodejs(await cds.load('*')) // kept, if no other file has yet
  kept = cds.compile.for.nodejs(await cds.load('*'))
}, 120_000)

test('the runtime model read from the cache is the compiler\'s, with its source locations', () => {
  expect(kept).not.toBe(compiled)
  expect(JSON.stringify(kept)).toBe(JSON.stringify(compiled))
  expect(runtimeView(kept)).toEqual(runtimeView(compiled))
  expect(kept.definitions.OperatorService.$location.file).toMatch(/\.cds$/)
})

test('each service\'s EDMX from the kept model is the compiler\'s', async () => {
  const services = servicesOf(compiled)
  expect(services.length).toBeGreaterThan(10)
  const edmx = (model: any, service: string) => cds.compile.to.edmx(model, { service } as any)
  for (const service of services) expect(edmx(kept, service)).toBe(await withoutTheCache(() => edmx(compiled, service)))
})

test('the database schema from the cache is the compiler\'s', async () => {
  const fresh = await withoutTheCache(async () => cds.compile.to.sql(await cds.load('*')))
  expect(cds.compile.to.sql(await cds.load('*'))).toEqual(fresh)
})
