import cds from '@sap/cds'
import { OWN_ROUTES } from '../../srv/gateway/own-routes.ts'
import { RouteTable } from '../../srv/gateway/routes.ts'

/** The route table built from the served model classifies a path by every segment. */
cds.test(__dirname + '/../..')

const S = '/odata/v4/chaina-odata'
const SIGN = '/odata/v4/chaina-sign'
const TX = '/odata/v4/chaina-transaction'
const HASH = 'ab'.repeat(32)
let table: RouteTable

beforeAll(() => {
  table = RouteTable.fromServices(Object.values(cds.services), cds.model!.definitions as any)
})

test.each([
  ['GET', `${S}/Blocks`, 'entity-read'],
  ['GET', `${S}/Blocks/$count`, 'entity-read'],
  ['GET', `${S}/Blocks('${HASH}')`, 'entity-read'],
  ['GET', `${S}/Blocks('${HASH}')/hash`, 'entity-read'],
  ['GET', `${S}/Blocks('${HASH}')/hash/$value`, 'entity-read'],
  ['GET', `${S}/Blocks('${HASH}')/transactions`, 'entity-read'],
  ['GET', `${S}/Blocks('${HASH}')/transactions/$count`, 'entity-read'],
  ['GET', `${S}/Transactions('${HASH}')/outputs(txHash='${HASH}',outputIndex=0)/assets`, 'entity-read'],
  ['POST', `${S}/GetPoolById`, 'read-action'],
  ['POST', `${TX}/BuildSimpleAdaTransaction`, 'build'],
  ['POST', `${SIGN}/SubmitVerifiedTransaction`, 'submit'],
])('%s %s is metered as %s', (method, path, routeClass) => {
  expect(table.classify(method, path)).toMatchObject({ kind: 'metered', routeClass })
})

test.each([
  ['a closed operation before a priced one', 'POST', `${SIGN}/SignWithHsm/ChainASignService.GetAuditLog`, 'ROUTE_NOT_FORWARDED'],
  ['a priced name after a closed operation', 'POST', `${SIGN}/SignWithHsm/GetAuditLog`, 'ROUTE_NOT_FORWARDED'],
  ['an operation followed by more path', 'POST', `${S}/GetPoolById/Blocks`, 'ROUTE_NOT_FORWARDED'],
  ['an unbound operation called as bound', 'POST', `${S}/Blocks('${HASH}')/ChainAReadService.GetPoolById`, 'ROUTE_NOT_FORWARDED'],
  ['an unknown segment after a key', 'GET', `${S}/Blocks('${HASH}')/nope`, 'ROUTE_NOT_FORWARDED'],
  ['a navigation from a collection', 'GET', `${S}/Transactions/inputs`, 'ROUTE_NOT_FORWARDED'],
  ['a property of a collection', 'GET', `${S}/Blocks/hash`, 'ROUTE_NOT_FORWARDED'],
  ['$count followed by more path', 'GET', `${S}/Blocks/$count/x`, 'ROUTE_NOT_FORWARDED'],
  ['$count of a single entity', 'GET', `${S}/Blocks('${HASH}')/$count`, 'ROUTE_NOT_FORWARDED'],
  ['$crossjoin', 'GET', `${S}/$crossjoin(Blocks,Epochs)`, 'ROUTE_NOT_FORWARDED'],
  ['$entity', 'GET', `${S}/$entity`, 'ROUTE_NOT_FORWARDED'],
  ['an action with parameters in the path', 'POST', `${S}/GetPoolById(poolId='x')`, 'ROUTE_NOT_FORWARDED'],
  ['a trailing slash', 'GET', `${S}/Blocks/`, 'ROUTE_NOT_FORWARDED'],
  ['$batch', 'POST', `${S}/$batch`, 'BATCH_NOT_FORWARDED'],
])('%s is refused (%s %s)', (_name, method, path, code) => {
  expect(table.classify(method, path)).toMatchObject({ kind: 'refused', status: 403, code })
})

test('a write to an entity set is refused, an action called with GET answers 405', () => {
  expect(table.classify('DELETE', `${S}/Blocks('${HASH}')`)).toMatchObject({ kind: 'refused', code: 'METHOD_NOT_FORWARDED' })
  expect(table.classify('GET', `${S}/GetPoolById`)).toMatchObject({ kind: 'refused', status: 405 })
})

describe('own routes', () => {
  let own: RouteTable<(typeof OWN_ROUTES)[number]>
  beforeAll(() => {
    own = RouteTable.fromServices(Object.values(cds.services), cds.model!.definitions as any, OWN_ROUTES)
  })

  test.each([
    ['GET', '/zk-config'],
    ['GET', '/zk-config/'],
    ['GET', '/zk-config/manifest.json'],
    ['GET', '/zk-config/field_predicate/field_predicate.zkey'],
    ['HEAD', '/zk-config/field_predicate/field_predicate.wasm'],
    ['GET', '/zk-config/any/depth/at/all'],
  ])('%s %s is the public /zk-config route, answered by the app', (method, path) => {
    expect(own.classify(method, path)).toMatchObject({ kind: 'own', route: { path: '/zk-config', access: 'public', prefix: true } })
  })

  test('a write under /zk-config answers 405', () => {
    expect(own.classify('POST', '/zk-config/field_predicate/field_predicate.wasm')).toMatchObject({ kind: 'refused', status: 405, code: 'METHOD_NOT_ALLOWED' })
  })

  test.each([
    ['a longer name with the same start', '/zk-configs'],
    ['a longer name, then more path', '/zk-config-keys/field_predicate/field_predicate.wasm'],
    ['under an exact route', '/health/details'],
    ['under another exact route', '/prices/x'],
  ])('%s is not an own route: refused (%s)', (_name, path) => {
    expect(own.classify('GET', path)).toMatchObject({ kind: 'refused', status: 403, code: 'ROUTE_NOT_FORWARDED' })
  })

  test('exact routes still match exactly', () => {
    expect(own.classify('HEAD', '/health')).toMatchObject({ kind: 'own', route: { path: '/health' } })
    expect(own.classify('GET', '/me')).toMatchObject({ kind: 'own', route: { path: '/me', access: 'key' } })
  })
})
