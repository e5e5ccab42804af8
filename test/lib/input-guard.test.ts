import cds from '@sap/cds'
import { jsonDepth, MAX_JSON_DEPTH } from '../../srv/lib/input-guard.ts'
import { chainAIndex } from '../../srv/chaina-odata/service.ts'

/**
 * The input guard covers every operation of every served service from the model alone: the cases
 * below are generated from it, so a new service or action is checked without a test of its own.
 */
const { POST, GET, PATCH, PUT, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }
defaults.validateStatus = () => true

interface Operation {
  path: string
  name: string
  params: Record<string, any>
}

function operations(): Operation[] {
  const found: Operation[] = []
  for (const srv of Object.values(cds.services)) {
    // Services served over no protocol are reached from code only, never over HTTP.
    if (!(srv instanceof cds.ApplicationService) || (srv as any).definition?.['@protocol'] === 'none') continue
    const { path, actions } = srv as unknown as { path: string; actions: Record<string, any> }
    for (const [name, def] of Object.entries(actions ?? {})) if (def.kind === 'action') found.push({ path, name, params: def.params ?? {} })
  }
  return found
}

/** Entities an operator may update, in the services served over HTTP. */
function updatableEntities(): { path: string; entity: any }[] {
  const found: { path: string; entity: any }[] = []
  for (const srv of Object.values(cds.services)) {
    if (!(srv instanceof cds.ApplicationService) || (srv as any).definition?.['@protocol'] === 'none') continue
    for (const entity of Object.values((srv as any).entities as Record<string, any>)) {
      if (entity['@readonly'] || entity['@cds.autoexposed'] || entity.query?.SELECT?.from?.args) continue
      const restrictions = entity['@restrict'] as { grant: string | string[] }[] | undefined
      if (restrictions && !restrictions.some(({ grant }) => [grant].flat().some(event => event === 'UPDATE' || event === '*'))) continue
      found.push({ path: (srv as any).path, entity })
    }
  }
  return found
}

/** A key predicate of made-up values of the entity's key types. */
function keyPredicate(entity: any): string {
  const keys = Object.values(entity.keys as Record<string, any>).filter(key => !key.isAssociation)
  const value = (key: any) => (key instanceof UUID ? cds.utils.uuid() : key instanceof Integer ? '1' : `'fuzz'`)
  return keys.length === 1 ? value(keys[0]) : keys.map(key => `${key.name}=${value(key)}`).join(',')
}

const { UUID, String: StringType, Integer } = (cds as any).builtin.classes
const paramsOf = (test: (param: any) => boolean) =>
  operations().flatMap(op => Object.entries(op.params).filter(([, param]) => test(param)).map(([param]) => ({ op, param })))

/** Sends each case; answers those whose answer was not 400 with `code` (and `target`, when given). */
async function mismatches(cases: { op: Operation; param?: string; body: unknown }[], code: string, withTarget = true) {
  const wrong: string[] = []
  for (const { op, param, body } of cases) {
    const raw = typeof body === 'string' ? body : JSON.stringify(body)
    const response = await POST(`${op.path}/${op.name}`, raw, { headers: { 'content-type': 'application/json' } })
    const error = response.data?.error
    if (response.status !== 400 || error?.code !== code || (withTarget && param && error?.target !== param))
      wrong.push(`${op.name}${param ? '.' + param : ''}: ${response.status} ${error?.code} ${error?.target ?? ''}`)
  }
  return wrong
}

test('the model has operations to check', () => {
  expect(operations().length).toBeGreaterThan(30)
})

test('a body that is not a JSON object answers 400 INVALID_BODY on every action', async () => {
  const cases = operations().flatMap(op => ['null', '[]', '"x"', '5', 'true'].map(body => ({ op, body })))
  expect(await mismatches(cases, 'INVALID_BODY')).toEqual([])
})

test('a body that is not a JSON object answers 400 INVALID_BODY on every write of every writable entity (null was a 500)', async () => {
  const cases = updatableEntities().flatMap(({ path, entity }) => {
    const set = `${path}/${entity.name.split('.').pop()}`
    const creatable = !entity['@restrict'] || (entity['@restrict'] as { grant: string | string[] }[]).some(({ grant }) => [grant].flat().some(event => event === 'CREATE' || event === '*'))
    return [...(creatable ? [{ method: 'POST', url: set }] : []), { method: 'PATCH', url: `${set}(${keyPredicate(entity)})` }, { method: 'PUT', url: `${set}(${keyPredicate(entity)})` }]
  })
  expect(cases.length).toBeGreaterThan(5)
  const send = { POST, PATCH, PUT } as Record<string, typeof POST>
  const wrong: string[] = []
  for (const { method, url } of cases) {
    for (const body of ['null', '5', '"x"', 'true', '[]']) {
      const response = await send[method](url, body, { headers: { 'content-type': 'application/json' } })
      if (response.status !== 400 || response.data?.error?.code !== 'INVALID_BODY') wrong.push(`${method} ${url} ${body}: ${response.status} ${response.data?.error?.code}`)
    }
  }
  expect(wrong).toEqual([])
})

test('a sub-request of a JSON batch whose body is null answers 400 INVALID_BODY inside the batch', async () => {
  const { path, entity } = updatableEntities()[0]
  const url = `${entity.name.split('.').pop()}(${keyPredicate(entity)})`
  const response = await POST(`${path}/$batch`, { requests: [{ id: '1', method: 'PATCH', url, headers: { 'content-type': 'application/json' }, body: null }] })
  expect(response.status).toBe(200)
  expect(response.data.responses[0]).toMatchObject({ status: 400, body: { error: { code: 'INVALID_BODY' } } })
})

test('a malformed UUID answers 400 INVALID_UUID in every UUID parameter', async () => {
  const cases = paramsOf(param => param instanceof UUID).map(({ op, param }) => ({ op, param, body: { [param]: 'not-a-uuid' } }))
  expect(cases.length).toBeGreaterThan(5)
  expect(await mismatches(cases, 'INVALID_UUID')).toEqual([])
})

/** The operation's mandatory parameters with valid placeholders, so CAP's own mandatory check does not answer first. */
const mandatoryOf = (op: Operation) =>
  Object.fromEntries(Object.entries(op.params).filter(([, param]) => param['@mandatory']).map(([name]) => [name, cds.utils.uuid()]))

test('a NUL character answers 400 INVALID_CHARACTER in every string parameter', async () => {
  const cases = paramsOf(param => param instanceof StringType || param.items instanceof StringType)
    .map(({ op, param }) => ({ op, param, body: { ...mandatoryOf(op), [param]: op.params[param].items ? ['a\u0000b'] : 'a\u0000b' } }))
  expect(cases.length).toBeGreaterThan(30)
  expect(await mismatches(cases, 'INVALID_CHARACTER', false)).toEqual([])
})

test('a fraction answers 400 INVALID_INTEGER in every whole-number parameter', async () => {
  const cases = paramsOf(param => param instanceof Integer).map(({ op, param }) => ({ op, param, body: { ...mandatoryOf(op), [param]: 1.5 } }))
  expect(cases.length).toBeGreaterThan(1)
  expect(await mismatches(cases, 'INVALID_INTEGER')).toEqual([])
})

describe('JSON carried in a string parameter', () => {
  test('is declared as such (a type annotated @json) wherever a parameter carries JSON', () => {
    const declared = paramsOf(param => !!param['@json']).map(({ op, param }) => `${op.name}.${param}`)
    const named = paramsOf(param => /Json$/.test(param.name ?? '')).map(({ op, param }) => `${op.name}.${param}`)
    expect(named.length).toBeGreaterThan(5)
    expect(declared).toEqual(expect.arrayContaining(named))
  })

  test('nested beyond the bound answers 400 JSON_TOO_DEEP in every such parameter', async () => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000)
    const cases = paramsOf(param => !!param['@json']).map(({ op, param }) => ({ op, param, body: { ...mandatoryOf(op), [param]: deep } }))
    expect(await mismatches(cases, 'JSON_TOO_DEEP')).toEqual([])
  })

  test('depth is counted without parsing, strings and escapes included', () => {
    expect(jsonDepth('{"a":[1,{"b":"[[[[\\"["}]}')).toBe(3)
    expect(jsonDepth('"[[["')).toBe(0)
    expect(jsonDepth('['.repeat(MAX_JSON_DEPTH + 1))).toBe(MAX_JSON_DEPTH + 1)
  })
})

describe('query options are checked at every level of a read', () => {
  test.each([
    ['$skip beyond what a database counts', '$skip=100000000000000000000', 'INVALID_SKIP'],
    ['a negative $top', '$top=-1', 'INVALID_TOP'],
    ['a $top in exponent form', '$top=1e3', 'INVALID_TOP'],
    ['$skip inside $expand', '$expand=transactions($skip=100000000000000000000)', 'INVALID_SKIP'],
    ['$skip inside a to-one $expand (once a 500 on PostgreSQL)', '$expand=epochInfo($skip=100000000000000000000;$expand=blocks($top=1))', 'INVALID_SKIP'],
    ['$top beyond the bound inside $expand', '$expand=transactions($top=5000)', 'TOP_LIMIT_EXCEEDED'],
    ['$apply', '$apply=groupby((epoch))', 'UNSUPPORTED_QUERY_OPTION'],
    ['$apply inside $expand (the OData adapter does not offer it)', '$expand=transactions($apply=concat(identity,identity))', 'NOT_SUPPORTED'],
    ['a lambda over a property that is no collection (the URL parser fails on it)', '$filter=hash/any(x:x/hash eq \'a\')', 'INVALID_URL'],
    ['a time compared with a number beyond the dates there are (the URL parser fails on it)', '$filter=time%20eq%209007199254740992', 'INVALID_VALUE'],
    ['the same below the first date', '$filter=not%20(time%20gt%20-9007199254740992)', 'INVALID_VALUE'],
  ])('%s', async (_name, query, code) => {
    const response = await GET(`/odata/v4/chaina-odata/Blocks?${query}`)
    expect(response.data.error.code).toBe(code)
    expect(response.status).toBe(400)
  })
})

test('a refused request starts none of the service\'s handlers (one still querying after the rollback would keep the database connection)', async () => {
  const tip = jest.spyOn(chainAIndex(), 'tip')
  const response = await GET('/odata/v4/chaina-odata/Blocks?$top=1001')
  expect(response.data.error.code).toBe('TOP_LIMIT_EXCEEDED')
  expect(tip).not.toHaveBeenCalled()
  tip.mockRestore()
  expect((await GET('/odata/v4/chaina-odata/Blocks?$top=1')).status).toBe(200)
})

test('a single property is read as it is: collection options do not apply to it', async () => {
  const [block] = (await GET('/odata/v4/chaina-odata/Blocks?$top=1&$select=hash')).data.value
  const property = `/odata/v4/chaina-odata/Blocks('${block.hash}')/height`
  expect((await GET(property)).data.value).toEqual(expect.any(Number))
  for (const option of ['$select=height', '$filter=height eq 1', '$orderby=hash', '$expand=transactions']) {
    const response = await GET(`${property}?${option}`)
    expect([option, response.status, response.data.error?.code]).toEqual([option, 400, 'QUERY_OPTION_NOT_APPLICABLE'])
  }
})

test('$skip inside $expand without $top pages with the page bound', async () => {
  const response = await GET('/odata/v4/chaina-odata/Blocks?$top=2&$expand=transactions($skip=1;$expand=outputs($skip=1))')
  expect(response.data.value).toEqual(expect.any(Array))
  expect(response.status).toBe(200)
})

test('a function applied to a property of the wrong type is the query\'s fault, never a 5xx (PostgreSQL refuses it, SQLite finds nothing)', async () => {
  for (const filter of ['year(hash) eq 2020', 'length(height) eq 1', "contains(height,'1')"]) {
    const response = await GET(`/odata/v4/chaina-odata/Blocks?$filter=${encodeURIComponent(filter)}`)
    expect([filter, response.status < 500, response.status === 200 || response.data.error?.code === 'INVALID_QUERY']).toEqual([filter, true, true])
  }
})

test('a name in $filter that only the JavaScript object prototype knows (constructor, toString) is the query\'s fault: 400, never a 5xx', async () => {
  for (const filter of ['endswith(height,constructor)', 'toString eq 1', 'hash eq __proto__']) {
    const response = await GET(`/odata/v4/chaina-odata/Blocks?$filter=${encodeURIComponent(filter)}`)
    expect([filter, response.status, response.data.error?.code]).toEqual([filter, 400, expect.stringMatching(/^(INVALID_QUERY|UNKNOWN_PROPERTY|INVALID_URL|BAD_REQUEST)$/)])
  }
})

test('a query the database layer cannot compile (ordering by a path beyond an association\'s keys next to $select of it) is 400 INVALID_QUERY', async () => {
  const response = await GET(`/odata/v4/chaina-odata/AddressTransactions?$orderby=${encodeURIComponent('owner/address asc')}&$select=owner`)
  expect([response.status, response.data.error?.code]).toEqual([400, 'INVALID_QUERY'])
})

describe('a read is checked as CAP sees it and bounded before it runs', () => {
  test.each([
    ['$apply written encoded inside $filter (CAP decodes the whole URL before it splits the options)', "$filter=hash ne 'x'%26%24apply%3Dgroupby((epoch))", 'UNSUPPORTED_QUERY_OPTION'],
    ['$top written encoded inside $filter beside a $top of its own', "$top=1&$filter=hash ne 'x'%26%24top%3D5000", 'DUPLICATE_QUERY_OPTION'],
    ['an unclosed literal hiding $apply given twice from the checks (once a 500: found by the random fuzz, seed 1469031112)', "$search='&$apply=groupby((epoch))&$apply=groupby((epoch))&$filter=hash eq 'x'", 'UNCLOSED_LITERAL'],
    ['$expand given twice (the inner $top of the second was not checked)', '$top=1&$expand=epochInfo&$expand=transactions($top=5000)', 'DUPLICATE_QUERY_OPTION'],
    ['$expand four levels deep', '$top=1&$expand=epochInfo($expand=blocks($top=1;$expand=transactions($expand=inputs)))', 'EXPAND_TOO_DEEP'],
    ['$tops whose product exceeds the row budget', '$top=100&$expand=epochInfo($expand=blocks($top=1000))', 'ROW_BUDGET_EXCEEDED'],
    ['the read that stopped the service', '$top=100&$expand=epochInfo($expand=blocks($top=1000;$expand=transactions($expand=inputs,outputs)))', 'EXPAND_TOO_DEEP'],
  ])('%s', async (_name, query, code) => {
    const response = await GET(`/odata/v4/chaina-odata/Blocks?${query}`)
    expect(response.data.error.code).toBe(code)
    expect(response.status).toBe(400)
  })

  test('an ampersand inside a string literal stays in the literal', async () => {
    const response = await GET("/odata/v4/chaina-odata/Blocks?$top=1&$filter=hash%20ne%20'a%26%24top%3D5'")
    expect(response.data.value).toHaveLength(1)
    expect(response.status).toBe(200)
  })

  describe('with a row budget of 10', () => {
    beforeAll(() => (process.env.QUERY_ROW_BUDGET = '10'))
    afterAll(() => delete process.env.QUERY_ROW_BUDGET)
    const genesis = async () => (await GET('/odata/v4/chaina-odata/Blocks?$orderby=height asc&$top=1&$select=hash,txCount')).data.value[0]

    test('an $expand without $top that has more rows than the page left for it is refused, never cut short', async () => {
      const block = await genesis()
      expect(block.txCount).toBeGreaterThan(9)
      const response = await GET(`/odata/v4/chaina-odata/Blocks('${block.hash}')?$expand=transactions`)
      expect(response.data.error).toMatchObject({ code: 'EXPAND_PAGE_EXCEEDED', message: expect.stringContaining('transactions holds more than 9 rows') })
      expect(response.status).toBe(400)
    })

    test('paging inside $expand within the budget answers', async () => {
      const block = await genesis()
      const response = await GET(`/odata/v4/chaina-odata/Blocks('${block.hash}')?$expand=transactions($top=5;$skip=5;$select=hash)`)
      expect(response.data.transactions).toHaveLength(5)
      expect(response.status).toBe(200)
    })

    test('a $top inside $expand beyond the budget is refused before the read', async () => {
      const block = await genesis()
      const response = await GET(`/odata/v4/chaina-odata/Blocks('${block.hash}')?$expand=transactions($top=10)`)
      expect(response.data.error.code).toBe('ROW_BUDGET_EXCEEDED')
      expect(response.status).toBe(400)
    })
  })

  test('to-many expansions without $top share the largest page the budget allows: a few blocks with their transactions\' outputs are read', async () => {
    const response = await GET('/odata/v4/chaina-odata/Blocks?$top=3&$select=hash&$expand=transactions($select=hash;$expand=outputs($select=outputIndex))')
    expect(response.data.value[0].transactions[0].outputs).toEqual(expect.any(Array))
    expect(response.status).toBe(200)
  })
})

describe('an object never stands where a single value is declared', () => {
  test('an object whose toString is no function answers 400 INVALID_PROPERTY_NAME in every single-valued parameter (string conversion of it failed with a 500)', async () => {
    const { scalar } = (cds as any).builtin.classes
    const cases = paramsOf(param => param instanceof scalar).map(({ op, param }) => ({ op, param, body: { ...mandatoryOf(op), [param]: { toString: 1 } } }))
    expect(cases.length).toBeGreaterThan(50)
    expect(await mismatches(cases, 'INVALID_PROPERTY_NAME', false)).toEqual([])
  })

  test('an object answers 400 ASSERT_DATA_TYPE in every single-valued parameter', async () => {
    const { scalar } = (cds as any).builtin.classes
    const cases = paramsOf(param => param instanceof scalar).map(({ op, param }) => ({ op, param, body: { ...mandatoryOf(op), [param]: { nested: 1 } } }))
    expect(await mismatches(cases, 'ASSERT_DATA_TYPE')).toEqual([])
  })

  test('an object in a PATCH or PUT of any updatable entity answers 400 ASSERT_DATA_TYPE, never taken for an update expression ({"+=": 1} was applied)', async () => {
    const { scalar } = (cds as any).builtin.classes
    const cases = updatableEntities().flatMap(({ path, entity }) => Object.values(entity.elements as Record<string, any>)
      .filter(element => element instanceof scalar && !element.key && !element.virtual && !element['@Core.Computed'])
      .flatMap(element => ['PATCH', 'PUT'].map(method => ({ method, url: `${path}/${entity.name.split('.').pop()}(${keyPredicate(entity)})`, element: element.name }))))
    expect(cases.length).toBeGreaterThan(5)
    const wrong: string[] = []
    for (const { method, url, element } of cases) {
      const response = await (method === 'PATCH' ? PATCH : PUT)(url, { [element]: { '+=': 1 } })
      if (response.status !== 400 || response.data?.error?.code !== 'ASSERT_DATA_TYPE') wrong.push(`${method} ${url} ${element}: ${response.status} ${response.data?.error?.code}`)
    }
    expect(wrong).toEqual([])
  })

  test('a property named like a member of every object answers 400 INVALID_PROPERTY_NAME at any depth, on every action', async () => {
    const bodies = ['{"constructor": 1}', '{"x": {"valueOf": {}}}', '{"x": [{"hasOwnProperty": "y"}]}', '{"__proto__": {"polluted": true}}']
    const cases = operations().flatMap(op => bodies.map(body => ({ op, body })))
    expect(await mismatches(cases, 'INVALID_PROPERTY_NAME', false)).toEqual([])
  })
})
