import type { Answer, Probe } from './http.ts'
import { setOfType, type EdmProperty, type EntitySet, type Operation, type Service } from './metadata.ts'
import { JSON_HEADERS, keyPredicate, operationGroup, operationProbe, setProbe } from './requests.ts'
import { DEEP_JSON, HUGE_STRING, NUL, Pools, RawJson, isNumberType, isStringType, validValue } from './values.ts'

/**
 * The deterministic hostile cases, derived from the served metadata: for every operation, hostile
 * bodies and every parameter made hostile in turn (the others valid-looking); for every entity set,
 * hostile query options and key predicates; HTTP-level abuse; the gateway's own routes.
 */

const HUGE_SKIP = '100000000000000000000'

const status = (expected: number, code?: string) => (answer: Answer): string | undefined => {
  if (answer.status !== expected) return `expected ${expected}${code ? ` ${code}` : ''}`
  if (code && !answer.body.includes(`"${code}"`)) return `expected error code ${code}`
  return undefined
}
const clientError = (answer: Answer) => (answer.status >= 400 && answer.status < 500 ? undefined : 'expected a 4xx')
const answeredOrRefused = (answer: Answer) => (answer.status < 500 ? undefined : 'expected a 2xx or a 4xx')
const closedByTheGateway = (answer: Answer) => answer.status === 403 && /"(OPERATION_CLOSED|ROUTE_CLOSED|ROUTE_NOT_FORWARDED)"/.test(answer.body)
/** 400, unless the gateway does not forward the operation at all. */
const refusedOrClosed = (answer: Answer) => (closedByTheGateway(answer) ? undefined : status(400)(answer))
/** The free verify lane's per-client rate limit answers before any input check once the suite has sent enough. */
const rateLimited = (answer: Answer) => answer.status === 429 && answer.body.includes('"RATE_LIMITED"')
/** 400, unless the gateway does not forward the operation at all or the free lane's rate limit answered first. */
const refusedClosedOrLimited = (answer: Answer) => (rateLimited(answer) ? undefined : refusedOrClosed(answer))
/** 400 with this code, unless the gateway does not forward the route at all. */
const refusedWith = (code: string) => (answer: Answer) => (closedByTheGateway(answer) ? undefined : status(400, code)(answer))

/** Valid-looking arguments for every parameter (the first real value of each flavour). */
export function validArguments(op: Operation, pools: Pools): Record<string, unknown> {
  return Object.fromEntries(op.parameters.map(p => {
    const value = validValue(p.name, p.type, pools)
    return [p.name, p.collection ? [value] : value]
  }))
}

interface Hostile {
  kind: string
  value: unknown
  expect?: (answer: Answer) => string | undefined
}

/** The hostile values one parameter is given, by its type and name. */
function hostileValues(parameter: EdmProperty): Hostile[] {
  const stringLike = isStringType(parameter.type)
  const wrap = (value: unknown) => (parameter.collection ? [value] : value)
  const values: Hostile[] = [
    { kind: 'param null', value: null },
    { kind: 'param object', value: { nested: 'object' } },
    { kind: 'param array', value: parameter.collection ? [[['nested']]] : ['array'] },
    { kind: 'param shadowing toString', value: wrap({ toString: 1 }), expect: refusedClosedOrLimited },
    { kind: 'param shadowing constructor', value: wrap({ inner: { constructor: 'x', valueOf: {} } }), expect: refusedClosedOrLimited },
    { kind: 'huge number', value: new RawJson('1e400') },
    { kind: 'huge integer', value: new RawJson('123456789012345678901234567890') },
  ]
  if (stringLike) values.push({ kind: 'number for string', value: wrap(12345) })
  if (isNumberType(parameter.type)) values.push({ kind: 'string for number', value: wrap('12x') })
  if (parameter.collection) values.push({ kind: 'string for collection', value: 'not-a-collection' })
  if (stringLike || parameter.collection) {
    values.push({ kind: 'NUL byte', value: wrap(NUL) }, { kind: '200 KB string', value: wrap(HUGE_STRING) })
  }
  if (/Json$/.test(parameter.name)) {
    values.push({ kind: 'deep JSON string', value: DEEP_JSON }, { kind: 'malformed JSON', value: '{"a": [1, 2' })
  }
  if (parameter.type === 'Edm.Guid') values.push({ kind: 'malformed UUID', value: wrap('not-a-uuid'), expect: refusedOrClosed })
  return values
}

const BODIES: [string, string][] = [['null', 'null'], ['[]', '[]'], ['"x"', '"x"'], ['5', '5'], ['true', 'true'], ['{}', '{}']]

export function operationCases(op: Operation, pools: Pools): Probe[] {
  const valid = validArguments(op, pools)
  const probes: Probe[] = []
  if (op.kind === 'action') {
    for (const [label, body] of BODIES) probes.push(operationProbe(op, undefined, `body ${label}`, [`body ${label}`], body))
    const get = operationProbe(op, valid, 'called with GET', ['wrong method'])
    probes.push({ ...get, method: 'GET', headers: undefined, body: undefined, expect: clientError })
  } else {
    const base = `${op.service.path}/${op.name}`
    const group = operationGroup(op)
    for (const [label, target] of [['no parentheses', base], ['unclosed parentheses', `${base}(`], ['garbage arguments', `${base}(@@@,,=)`], ['inline NUL argument', `${base}(x='a%00b')`]]) {
      // A function whose parameters may all be left out may be called without its parentheses (CAP, like OData 4.01, accepts that).
      const lenient = label === 'no parentheses' && op.parameters.every(parameter => parameter.nullable)
      probes.push({ name: `${group}: ${label}`, group, kinds: [label], method: 'GET', target, expect: lenient ? answeredOrRefused : clientError })
    }
    probes.push({ ...operationProbe(op, valid, 'called with POST', ['wrong method']), method: 'POST', headers: JSON_HEADERS, body: '{}', expect: clientError })
  }
  for (const parameter of op.parameters) {
    for (const hostile of hostileValues(parameter)) {
      const probe = operationProbe(op, { ...valid, [parameter.name]: hostile.value }, `${parameter.name} ${hostile.kind}`, [hostile.kind])
      probes.push(hostile.expect ? { ...probe, expect: hostile.expect } : probe)
    }
  }
  probes.push(operationProbe(op, { ...valid, fuzzUnknownParameter: 'x' }, 'unknown extra parameter', ['unknown parameter']))
  if (op.kind === 'action') probes.push(operationProbe(op, undefined, '__proto__ parameter', ['unknown parameter'], `{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}`))
  return probes
}

/** A real (or valid-looking) key of the set with its first string key (else its first key) set to this value. */
function keyWith(set: EntitySet, pools: Pools, value: unknown): Record<string, unknown> {
  const key = pools.keys.get(set.name)?.[0] ?? Object.fromEntries(set.keys.map(k => [k.name, validValue(k.name, k.type, pools, undefined, set.name)]))
  const hostile = set.keys.find(k => k.type === 'Edm.String') ?? set.keys[0]
  return { ...key, [hostile.name]: value }
}

export function entitySetCases(set: EntitySet, pools: Pools): Probe[] {
  const firstProperty = set.properties[0]?.name ?? 'ID'
  const stringProperty = set.properties.find(p => p.type === 'Edm.String')
  const probes: Probe[] = [
    setProbe(set, '', [['$skip', HUGE_SKIP]], '$skip=1e20 (as digits)', ['huge $skip']),
    { ...setProbe(set, '', [['$top', '-1']], '$top=-1', ['bad $top']), expect: status(400) },
    setProbe(set, '', [['$top', '1e30']], '$top=1e30', ['bad $top']),
    setProbe(set, '', [['$format', 'xml']], '$format=xml', ['$format']),
    { ...setProbe(set, '', [['$expand', 'fuzzNoSuchProperty']], '$expand of an unknown property', ['unknown property']), expect: status(400) },
    { ...setProbe(set, '', [['$orderby', 'fuzzNoSuchProperty']], '$orderby of an unknown property', ['unknown property']), expect: status(400) },
    setProbe(set, '', [['$search', 'x']], '$search=x', ['$search']),
    setProbe(set, '', [['$apply', `groupby((${firstProperty}))`]], '$apply=groupby', ['$apply']),
    setProbe(set, '', [['$apply', `aggregate(${firstProperty} with countdistinct as n)`]], '$apply=aggregate', ['$apply']),
    setProbe(set, '', [['$apply', `filter(${firstProperty} ne null)/groupby((${firstProperty}),aggregate($count as n))`]], '$apply=filter/groupby', ['$apply']),
  ]
  if (stringProperty) probes.push(setProbe(set, '', [['$filter', `${stringProperty.name} eq '${NUL}'`]], '$filter with NUL in a string literal', ['NUL byte']))
  if (set.keys.length) {
    probes.push(
      setProbe(set, keyPredicate(set.keys, keyWith(set, pools, NUL)), [], 'key predicate with NUL', ['NUL byte']),
      setProbe(set, keyPredicate(set.keys, keyWith(set, pools, 'k'.repeat(10 * 1024))), [], '10 KB key predicate', ['huge key']),
    )
  }
  // Writes whose body is no JSON object: refused before any handler, whether or not the set is writable (null was a 500).
  const entity = set.keys.length ? keyPredicate(set.keys, keyWith(set, pools, 'fuzz')) : ''
  for (const body of ['null', '"x"', '5']) {
    const write = (method: string, suffix: string) => ({ ...setProbe(set, suffix, [], `${method} with body ${body}`, ['body not an object']), method, headers: JSON_HEADERS, body, expect: clientError })
    probes.push(write('POST', ''))
    if (entity) probes.push(write('PATCH', entity), write('PUT', entity))
  }
  const navigation = set.navigations[0]
  if (navigation) {
    probes.push(
      setProbe(set, '', [['$expand', `${navigation.name}($skip=${HUGE_SKIP})`]], `$expand=${navigation.name}($skip=1e20)`, ['huge $skip']),
      { ...setProbe(set, '', [['$top', '1'], ['$expand', navigation.name], ['$expand', navigation.name]], '$expand given twice', ['repeated option']), expect: refusedWith('DUPLICATE_QUERY_OPTION') },
    )
  }
  probes.push({ ...setProbe(set, '', [['$filter', `${firstProperty} ne null&$apply=groupby((${firstProperty}))`]], '$apply smuggled encoded inside $filter', ['smuggled option']), expect: refusedWith('UNSUPPORTED_QUERY_OPTION') })
  probes.push({ ...setProbe(set, '', [['$top', '1'], ['$filter', `${firstProperty} ne null&$top=5000`]], '$top smuggled encoded inside $filter', ['smuggled option']), expect: refusedWith('DUPLICATE_QUERY_OPTION') })
  const deep = expandChain(set, 4)
  if (deep) probes.push({ ...setProbe(set, '', [['$expand', deep]], `$expand 4 levels deep (${deep.slice(0, 60)})`, ['expand budget']), expect: refusedWith('EXPAND_TOO_DEEP') })
  const wide = set.navigations.find(nav => nav.collection)
  if (wide) {
    const name = `$top=1000&$expand=${wide.name}($top=1000)`
    probes.push({ ...setProbe(set, '', [['$top', '1000'], ['$expand', `${wide.name}($top=1000)`]], name, ['expand budget']), expect: refusedWith('ROW_BUDGET_EXCEEDED') })
  }
  return probes
}

/** `a($expand=b($expand=c(…)))` through `levels` navigations from the set (collections first), if the model nests that deep. */
function expandChain(set: EntitySet, levels: number): string | undefined {
  if (levels === 0) return ''
  const navigations = [...set.navigations].sort((a, b) => Number(b.collection) - Number(a.collection))
  for (const navigation of navigations) {
    const target = setOfType(set.service, navigation.targetType)
    const inner = target && expandChain(target, levels - 1)
    if (inner === undefined) continue
    return inner ? `${navigation.name}($expand=${inner})` : navigation.name
  }
  return undefined
}

/** Abuse below OData: oversized headers, malformed request lines, bodies and paths. */
export function httpCases(services: Service[], pools: Pools): Probe[] {
  const service = services[0]
  const set = service.entitySets[0]
  const action = services.flatMap(s => s.operations).find(op => op.kind === 'action' && op.parameters.length)
  const setTarget = `${service.path}/${set?.name ?? ''}?$top=1`
  const group = 'HTTP'
  const probe = (name: string, rest: Omit<Probe, 'name' | 'group' | 'kinds'>): Probe => ({ name: `HTTP: ${name}`, group, kinds: [name], ...rest })
  const probes: Probe[] = [
    probe('a 17 KB header', { method: 'GET', target: setTarget, headers: { 'x-fuzz': 'a'.repeat(17 * 1024) }, expect: clientError }),
    probe('200 headers of 100 bytes', { method: 'GET', target: setTarget, headers: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`x-fuzz-${i}`, 'b'.repeat(100)])), expect: clientError }),
    probe('malformed request line (bad version)', { method: 'GET', target: '/', raw: 'GET /me HTTTP/1.1\r\nHost: x\r\n\r\n', expect: clientError }),
    probe('malformed request line (control characters)', { method: 'GET', target: '/', raw: 'G\u0001ET /me HTTP/1.1\r\nHost: x\r\n\r\n', expect: clientError }),
    probe('malformed request line (no target)', { method: 'GET', target: '/', raw: 'GET\r\nHost: x\r\n\r\n', expect: clientError }),
    probe('raw NUL in the query', { method: 'GET', target: '/', raw: `GET ${setTarget}\u0000 HTTP/1.1\r\nHost: x\r\nAuthorization: {{authorization}}\r\nConnection: close\r\n\r\n`, expect: clientError }),
    probe('a path of 5000 characters', { method: 'GET', target: `${service.path}/${'A'.repeat(5000)}`, expect: clientError }),
    probe('a key of 5000 characters in the path', { method: 'GET', target: `${service.path}/${set?.name}('${'k'.repeat(5000)}')`, expect: clientError }),
    probe('NUL (%00) in the path', { method: 'GET', target: `${service.path}/${set?.name}%00`, expect: clientError }),
    probe('NUL (%00) in the query', { method: 'GET', target: `${service.path}/${set?.name}?$top=1%00` }),
    probe('NUL (%00) as a query option name', { method: 'GET', target: `${service.path}/${set?.name}?%00=1` }),
    probe('invalid percent-encoding in the path', { method: 'GET', target: `${service.path}/${set?.name}%zz`, expect: clientError }),
    probe('invalid percent-encoding in the query', { method: 'GET', target: `${service.path}/${set?.name}?$filter=%zz` }),
    probe('overlong UTF-8 in the query', { method: 'GET', target: `${service.path}/${set?.name}?$filter=%c0%ae` }),
    probe('unknown path', { method: 'GET', target: `${service.path}/FuzzNoSuchThing`, expect: clientError }),
    // A quote in $search once hid these braces from the guard; the OData parser then held the process for hours.
    probe("unclosed braces in $filter after $search='", {
      method: 'GET',
      target: `${service.path}/${set?.name}?$search=%27&$filter=${set?.properties[0]?.name ?? 'ID'}%20eq%20${encodeURIComponent('{"a":'.repeat(40))}`,
      expect: status(400, 'INVALID_URL'),
    }),
    probe('$batch', { method: 'POST', target: `${service.path}/$batch`, headers: { 'content-type': 'multipart/mixed; boundary=x' }, body: '--x--', expect: clientError }),
  ]
  if (action) {
    const target = `${action.service.path}/${action.name}`
    const valid = JSON.stringify(validArguments(action, pools))
    probes.push(
      probe('invalid JSON body', { method: 'POST', target, headers: JSON_HEADERS, body: '{"a": ', expect: clientError }),
      probe('JSON body with trailing garbage', { method: 'POST', target, headers: JSON_HEADERS, body: valid + ' xyz' }),
      probe('wrong content-type (text/plain)', { method: 'POST', target, headers: { 'content-type': 'text/plain' }, body: valid }),
      probe('wrong content-type (application/xml)', { method: 'POST', target, headers: { 'content-type': 'application/xml' }, body: '<a/>' }),
      probe('wrong content-type (form)', { method: 'POST', target, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1&b=2' }),
      probe('wrong charset', { method: 'POST', target, headers: { 'content-type': 'application/json; charset=utf-7' }, body: valid }),
      probe('no content-type', { method: 'POST', target, body: valid }),
      probe('empty body', { method: 'POST', target, headers: JSON_HEADERS, body: '' }),
      probe('body nested 100000 levels', { method: 'POST', target, headers: JSON_HEADERS, body: '['.repeat(100_000) + ']'.repeat(100_000) }),
      probe('body of 5 MB', { method: 'POST', target, headers: JSON_HEADERS, body: JSON.stringify({ x: 'y'.repeat(5 * 1024 * 1024) }) }),
      probe('body larger than content-length', { method: 'POST', target, raw: `POST ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: {{authorization}}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{"a": 1}` }),
    )
  }
  return probes
}

/** The gateway's own routes, with and without the key. */
export function gatewayCases(): Probe[] {
  const garbage = Buffer.from('1|x').toString('base64url')
  const cases: [string, string, ((answer: Answer) => string | undefined) | undefined, ((answer: Answer) => string | undefined) | undefined][] = [
    ['/me', '/me', status(200), status(401, 'KEY_MISSING')],
    ['/me/ledger?limit=abc', '/me/ledger?limit=abc', status(400, 'INVALID_LIMIT'), status(401, 'KEY_MISSING')],
    ['/me/ledger?limit=1e2', '/me/ledger?limit=1e2', undefined, status(401, 'KEY_MISSING')],
    ['/me/ledger?before=<garbage>', '/me/ledger?before=%%%garbage!!', status(400, 'INVALID_CURSOR'), status(401, 'KEY_MISSING')],
    ['/me/ledger?before=<base64url of 2000 random bytes>', `/me/ledger?before=${Buffer.alloc(2000, 7).toString('base64url')}`, status(400, 'INVALID_CURSOR'), status(401, 'KEY_MISSING')],
    ["/me/ledger?before=<base64url of '1|x'>", `/me/ledger?before=${garbage}`, status(400, 'INVALID_CURSOR'), status(401, 'KEY_MISSING')],
    ['/me/ledger?before=<NUL>', '/me/ledger?before=%00', clientError, clientError],
    ['/prices?x=%00', '/prices?x=%00', undefined, undefined],
    ['/me/usage?days=1e9', '/me/usage?days=1e9', status(400, 'INVALID_DAYS'), status(401, 'KEY_MISSING')],
    ['/me/usage?days=-1', '/me/usage?days=-1', status(400, 'INVALID_DAYS'), status(401, 'KEY_MISSING')],
  ]
  const reads = cases.flatMap(([label, target, withKey, withoutKey]): Probe[] => [
    { name: `gateway: ${label} with the key`, group: 'gateway routes', kinds: ['gateway route'], method: 'GET', target, expect: withKey },
    { name: `gateway: ${label} without a key`, group: 'gateway routes', kinds: ['gateway route'], method: 'GET', target, anonymous: true, expect: withoutKey },
  ])
  return [...reads, ...keyLaneCases(), ...frontEndCases()]
}

/** The portal's and the operator console's files, the UI5 runtime and the development wallet: hostile paths and bodies answer 4xx, never a 5xx or a file outside their folders. */
function frontEndCases(): Probe[] {
  const notOutside = (answer: Answer) => (answer.body.includes('"chain-access-gateway"') ? 'served a file outside its folder' : answeredOrRefused(answer))
  const paths = [
    '/portal/..%2f..%2fpackage.json', '/portal/%2e%2e/%2e%2e/package.json', '/resources/..%2f..%2f..%2fpackage.json', '/resources/sap/m/themes/..%2f..%2f..%2f..%2fpackage.json',
    '/resources/sap/m/themes/sap_horizon/library.css%00', `/resources/sap/m/themes/${'x'.repeat(5000)}/library.css`, '/resources/sap/../../manifest.json',
    `/resources/${'a/'.repeat(2000)}manifest.json`, '/portal/manifest.json?%ff%fe', '/index.html/..%2f',
    '/console/..%2f..%2fpackage.json', '/console/%2e%2e/%2e%2e/package.json', '/console/..%2f', '/console/manifest.json?%ff%fe',
  ]
  const reads = paths.map((target): Probe => ({ name: `front ends: GET ${target.slice(0, 60)}`, group: 'front ends', kinds: ['front end'], method: 'GET', target, anonymous: true, expect: notOutside }))
  const walletBodies = ['{"a": ', '[]', 'null', JSON.stringify({ wallet: 1e308, tx: 'ff'.repeat(20_000) }), JSON.stringify({ wallet: '1', address: '\u0000', payload: 'zz' }), JSON.stringify({ tx: '84'.repeat(30_000) }), '['.repeat(10_000)]
  const posts = ['/dev-wallet/sign-tx', '/dev-wallet/sign-data', '/dev-wallet/submit-tx'].flatMap(target => walletBodies.map((body): Probe => ({
    name: `front ends: POST ${target} ${body.slice(0, 20)}`, group: 'dev wallet', kinds: ['front end'], method: 'POST', target, headers: JSON_HEADERS, body, anonymous: true, expect: clientError,
  })))
  return [...reads, ...posts]
}

/** Each field of each key lane's body, and the bodies and payment headers themselves, as hostile values: a 4xx (or a 402 quote), never a 5xx. */
function keyLaneCases(): Probe[] {
  const lanes: [string, string[]][] = [
    ['/keys', ['pack', 'payer']],
    ['/vouchers/redeem', ['code']],
    ['/auth/challenge', ['address']],
    ['/auth/verify', ['address', 'nonce', 'signature', 'key']],
    ['/auth/keys/rotate', ['id']],
  ]
  const hostile: unknown[] = [null, [], {}, 42, -1, true, '', 'x'.repeat(10_000), '\u0000', ['a'], { $ne: 1 }]
  const answeredOrQuoted = (answer: Answer) => (answer.status >= 400 && answer.status < 500 ? undefined : 'expected a 4xx (402 for a quote)')
  const probes: Probe[] = []
  for (const [path, fields] of lanes) {
    const post = (name: string, body: string, headers: Record<string, string> = JSON_HEADERS): Probe =>
      ({ name: `gateway: POST ${path} ${name}`, group: `gateway ${path}`, kinds: ['gateway route', 'key lane'], method: 'POST', target: path, headers, body, anonymous: true, expect: answeredOrQuoted })
    for (const body of ['{"a": ', 'null', '[]', '"text"', '1e999', '['.repeat(10_000)]) probes.push(post(`with the body ${body.slice(0, 12)}`, body))
    probes.push(post('with a body of 5 MB', JSON.stringify({ x: 'y'.repeat(5 * 1024 * 1024) })))
    for (const field of fields) for (const value of hostile) probes.push(post(`with ${field} = ${JSON.stringify(value)?.slice(0, 20)}`, JSON.stringify({ [field]: value })))
  }
  for (const header of ['%%%', Buffer.from('null').toString('base64'), Buffer.from('{"x402Version":2,"accepted":{"extra":{"quoteId":"\' OR 1=1"}},"payload":{}}').toString('base64'), 'A'.repeat(60_000)]) {
    probes.push({
      name: `gateway: POST /keys with PAYMENT-SIGNATURE ${header.slice(0, 16)}`, group: 'gateway /keys', kinds: ['gateway route', 'key lane'], method: 'POST', target: '/keys',
      headers: { ...JSON_HEADERS, 'PAYMENT-SIGNATURE': header }, body: '{}', anonymous: true, expect: answeredOrQuoted,
    })
  }
  return probes
}
