import type { Probe } from './http.ts'
import type { EdmProperty, EntitySet, Operation, Service } from './metadata.ts'
import { setOfType } from './metadata.ts'
import { keyPredicate, literal, operationProbe, percentEncode, queryString, setGroup } from './requests.ts'
import {
  DEEP_JSON, HUGE_STRING, NASTY_STRINGS, NUL, Pools, RawJson, badBech32, badCbor, badHex, chance, deepArray, deepObject, flavourOf, integer,
  isNumberType, isStringType, pick, randomUuid, validValue, type Random,
} from './values.ts'

/**
 * The random phase's requests: a random operation or entity set, with arguments, keys and query
 * options generated from the metadata types, valid-looking (real values from the devnet) and
 * mutated. The same seed generates the same sequence of requests (given the same harvested values).
 */

interface Mutation {
  kind: string
  value: unknown
}

export class RandomRequests {
  readonly random: Random
  private readonly pools: Pools
  private readonly operations: Operation[]
  private readonly sets: EntitySet[]
  private readonly services: Service[]

  constructor(services: Service[], pools: Pools, random: Random) {
    this.services = services
    this.pools = pools
    this.random = random
    this.operations = services.flatMap(s => s.operations)
    this.sets = services.flatMap(s => s.entitySets)
  }

  /** A random request whose request line stays below Node's header limit (the deterministic cases test larger ones). */
  next(): Probe {
    for (;;) {
      const probe = this.any()
      if (probe.target.length <= TARGET_MAX) return probe
    }
  }

  private any(): Probe {
    const roll = this.random()
    if (roll < 0.55 && this.operations.length) return this.operationCall(pick(this.random, this.operations))
    if (roll < 0.96 && this.sets.length) return this.read(pick(this.random, this.sets))
    return this.elsewhere()
  }

  private operationCall(op: Operation): Probe {
    const r = this.random
    const kinds: string[] = []
    const args: Record<string, unknown> = {}
    for (const parameter of op.parameters) {
      if (chance(r, 0.08)) {
        kinds.push('missing parameter')
        continue
      }
      if (chance(r, 0.3)) {
        const mutation = this.mutate(parameter)
        kinds.push(mutation.kind)
        args[parameter.name] = mutation.value
      } else {
        const value = validValue(parameter.name, parameter.type, this.pools, r)
        args[parameter.name] = parameter.collection ? Array.from({ length: 1 + integer(r, 3) }, () => validValue(parameter.name, parameter.type, this.pools, r)) : value
      }
    }
    if (chance(r, 0.08)) {
      kinds.push('unknown parameter')
      args[pick(r, ['fuzzExtra', 'ID', '$top', '@odata.type', 'constructor', 'toString', 'IsActiveEntity'])] = pick(r, [1, 'x', null, {}, []])
    }
    if (op.kind === 'action' && chance(r, 0.06)) {
      const [label, body] = pick(r, BODIES)
      return this.withContentType(operationProbe(op, undefined, `body ${label}`, [`body ${label}`], body))
    }
    return this.withContentType(operationProbe(op, args, 'random call', [...new Set(kinds)]))
  }

  private withContentType(probe: Probe): Probe {
    if (probe.method !== 'POST' || !chance(this.random, 0.03)) return probe
    const contentType = pick(this.random, ['text/plain', 'application/xml', 'application/json; charset=latin1', 'multipart/form-data; boundary=x', 'application/json;odata.metadata=full', ''])
    return { ...probe, kinds: [...probe.kinds, 'content-type'], headers: contentType ? { 'content-type': contentType } : {} }
  }

  /** A hostile value for a parameter (or key, or literal), by its type and what its name says it holds. */
  mutate(parameter: EdmProperty, setName = ''): Mutation {
    const r = this.random
    const valid = validValue(parameter.name, parameter.type, this.pools, r, setName)
    const validText = typeof valid === 'string' ? valid : undefined
    const flavour = flavourOf(parameter.name, parameter.type, setName)
    const specific: (() => Mutation)[] = []
    if (['address', 'stakeAddress', 'poolId', 'drepId'].includes(flavour)) specific.push(() => ({ kind: 'invalid bech32', value: badBech32(r, validText) }))
    if (['txHash', 'blockHash', 'keyHash', 'assetUnit', 'policyId'].includes(flavour)) specific.push(() => ({ kind: 'invalid hex', value: badHex(r, validText) }))
    if (flavour === 'cbor') specific.push(() => ({ kind: 'invalid CBOR', value: badCbor(r, validText) }))
    if (flavour === 'script') specific.push(() => ({ kind: 'invalid CBOR', value: badCbor(r) }), () => ({ kind: 'odd JSON', value: pick(r, ODD_SCRIPTS) }))
    if (flavour === 'uuid') specific.push(() => ({ kind: 'malformed UUID', value: pick(r, ['not-a-uuid', String(valid).toUpperCase(), String(valid).replace(/-/g, ''), `{${valid}}`, `${valid}\u0000`, String(valid).slice(0, 35), `${valid}0`, randomUuid(r)]) }))
    if (flavour === 'amount') specific.push(() => ({ kind: 'bad amount', value: pick(r, BAD_AMOUNTS) }))
    if (flavour === 'index' || isNumberType(parameter.type)) specific.push(() => ({ kind: 'bad number', value: pick(r, BAD_NUMBERS) }))
    if (/json$/i.test(parameter.name)) specific.push(() => this.jsonMutation(), () => this.jsonMutation())
    const generic: (() => Mutation)[] = [
      () => ({ kind: 'param null', value: null }),
      () => ({ kind: 'wrong type', value: pick(r, [12345, -1, 1.5, true, false, {}, { a: 1 }, [], ['x'], [null]]) }),
      () => ({ kind: 'nasty string', value: pick(r, NASTY_STRINGS) }),
      () => ({ kind: 'NUL byte', value: validText ? validText.slice(0, 5) + '\u0000' + validText.slice(5) : NUL }),
      () => ({ kind: 'unicode', value: (validText ?? 'x') + pick(r, ['🦄', '\u200f', '\u202e', '\ud800', '\udc00x', '\u0301', '\ufffe']) }),
      () => ({ kind: '200 KB string', value: chance(r, 0.5) ? HUGE_STRING : (validText ?? 'x').repeat(Math.ceil(200_000 / Math.max(1, (validText ?? 'x').length))) }),
      () => ({ kind: 'deep nesting', value: chance(r, 0.5) ? deepArray(pick(r, [100, 1000, 100_000])) : deepObject(pick(r, [100, 10_000])) }),
      () => ({ kind: 'huge number', value: new RawJson(pick(r, ['1e400', '-1e400', '123456789012345678901234567890', '9007199254740993', '-0', '1E+2'])) }),
    ]
    if (parameter.collection) {
      generic.push(
        () => ({ kind: 'string for collection', value: validText ?? 'x' }),
        () => ({ kind: 'huge collection', value: Array.from({ length: pick(r, [1000, 10_000]) }, () => valid) }),
        () => ({ kind: 'mixed collection', value: [valid, null, 1, {}, [], NUL] }),
      )
    }
    if (!isStringType(parameter.type)) generic.push(() => ({ kind: 'string for number', value: pick(r, ['1', 'x', '', '0x10', '1e3']) }))
    const mutation = chance(r, 0.6) && specific.length ? pick(r, specific)() : pick(r, generic)()
    return parameter.collection && !['string for collection', 'huge collection', 'mixed collection', 'param null'].includes(mutation.kind) && chance(r, 0.5)
      ? { kind: mutation.kind, value: [mutation.value] }
      : mutation
  }

  private jsonMutation(): Mutation {
    const r = this.random
    return pick(r, [
      () => ({ kind: 'deep JSON string', value: chance(r, 0.5) ? DEEP_JSON : '{"a":'.repeat(5000) + '1' + '}'.repeat(5000) }),
      () => ({ kind: 'malformed JSON', value: pick(r, ['{', '[1,', '{"a":1,}', "{'a':1}", 'NaN', '', '[1]]', '{"a":1}{"b":2}', '\u0000', 'undefined', '01', '"\\ud800"']) }),
      () => ({ kind: 'odd JSON', value: pick(r, ODD_JSON)() }),
    ])()
  }

  private read(set: EntitySet): Probe {
    const r = this.random
    const kinds: string[] = []
    let suffix = ''
    if (set.keys.length && chance(r, 0.4)) {
      suffix = this.keySuffix(set, kinds)
      if (chance(r, 0.2) && set.navigations.length) suffix += kind(kinds, 'path navigation', '/' + pick(r, set.navigations).name)
      else if (chance(r, 0.1)) suffix += kind(kinds, 'path property', '/' + pick(r, set.properties).name + (chance(r, 0.5) ? '/$value' : ''))
    } else if (chance(r, 0.05)) suffix = kind(kinds, 'path $count', '/$count')
    const options = this.queryOptions(set, kinds)
    const group = setGroup(set)
    return { name: `${group}: random read`, group, kinds: [...new Set(kinds)], method: 'GET', target: `${set.service.path}/${set.name}${suffix}${queryString(options)}` }
  }

  private keySuffix(set: EntitySet, kinds: string[]): string {
    const r = this.random
    const real = this.pools.keys.get(set.name) ?? []
    const values: Record<string, unknown> = real.length && chance(r, 0.6)
      ? { ...pick(r, real) }
      : Object.fromEntries(set.keys.map(key => [key.name, validValue(key.name, key.type, this.pools, r, set.name)]))
    if (chance(r, 0.4)) {
      const key = pick(r, set.keys)
      const mutation = this.mutate(key, set.name)
      kinds.push(`key ${mutation.kind}`)
      values[key.name] = withinUrl(mutation.value)
    }
    if (chance(r, 0.05)) {
      kinds.push('key syntax')
      return pick(r, ['()', '(', "('x'", '(1,2,3)', '(fuzz=1)', "(''')", '(null)', '(@a)', '(1)(2)'])
    }
    return keyPredicate(set.keys, values)
  }

  private queryOptions(set: EntitySet, kinds: string[]): [string, string][] {
    return Array.from({ length: integer(this.random, 5) }, () => pick(this.random, OPTIONS)(this, set, kinds))
  }

  /** A literal for a property, valid-looking or hostile. */
  literalFor(property: EdmProperty, set: EntitySet, kinds: string[]): string {
    if (chance(this.random, 0.35)) {
      const mutation = this.mutate(property, set.name)
      kinds.push(`literal ${mutation.kind}`)
      const value = withinUrl(mutation.value)
      return typeof value === 'string' && chance(this.random, 0.3) ? value : literal(value, property.type)
    }
    return literal(validValue(property.name, property.type, this.pools, this.random, set.name), property.type)
  }

  filter(set: EntitySet, kinds: string[], depth = 0): string {
    const r = this.random
    const property = pick(r, set.properties)
    const navigation = set.navigations.length ? pick(r, set.navigations).name : undefined
    let path = property.name
    if (chance(r, 0.05)) path = kind(kinds, 'filter unknown property', 'fuzzNoSuchProperty')
    // eslint-disable-next-line no-dupe-else-if -- each chance() is a new draw
    else if (navigation && chance(r, 0.05)) path = kind(kinds, 'filter navigation path', `${navigation}/${property.name}`)
    const value = this.literalFor(property, set, kinds)
    const [form, comparison] = pick(r, [
      (): [string, string] => ['comparison', `${path} ${pick(r, ['eq', 'ne', 'gt', 'ge', 'lt', 'le'])} ${value}`],
      (): [string, string] => ['string function', `${pick(r, ['contains', 'startswith', 'endswith'])}(${path},${value})`],
      (): [string, string] => ['in', `${path} in (${value},${value})`],
      (): [string, string] => ['function', `${pick(r, ['tolower', 'toupper', 'length', 'trim', 'year', 'round'])}(${path}) eq ${value}`],
      (): [string, string] => ['not', `not (${path} eq ${value})`],
      (): [string, string] => ['null', `${path} eq null`],
      (): [string, string] => ['arithmetic', `${path} ${pick(r, ['add', 'sub', 'mul', 'div', 'mod'])} ${pick(r, ['0', '1', '1e400', "'x'"])} eq 1`],
      (): [string, string] => ['has', `${path} has ${value}`],
      (): [string, string] => ['any', `${navigation ?? path}/any(x:x/${property.name} eq ${value})`],
    ])()
    kinds.push(`filter ${form}`)
    if (depth < 3 && chance(r, 0.2)) return `(${comparison}) ${pick(r, ['and', 'or'])} ${this.filter(set, kinds, depth + 1)}`
    return comparison
  }

  expand(set: EntitySet, kinds: string[], depth = 0): string {
    const r = this.random
    if (!set.navigations.length || chance(r, 0.05)) {
      kinds.push('expand unknown')
      return pick(r, ['fuzzNoSuchProperty', '*', `${set.properties[0]?.name}`, '*($levels=max)', '($top=1)'])
    }
    const navigation = pick(r, set.navigations)
    const target = setOfType(set.service, navigation.targetType)
    if (!target || !chance(r, 0.5)) return navigation.name
    const nested = Array.from({ length: 1 + integer(r, 3) }, () => pick(r, NESTED)(this, target, kinds, depth))
    return `${navigation.name}(${nested.map(([name, value]) => `${name}=${value}`).join(';')})`
  }

  private elsewhere(): Probe {
    const r = this.random
    const service = pick(r, this.services)
    const before = Buffer.from(pick(r, ['1|x', `${new Date().toISOString()}|${randomUuid(r)}`, '|', 'x|', '\u0000|\u0000', `${'9'.repeat(300)}|y`])).toString('base64url')
    const [label, target, anonymous] = pick(r, [
      ['/me', '/me', false],
      ['/me without a key', '/me', true],
      ['/me/ledger?limit', `/me/ledger?limit=${percentEncode(pick(r, ['0', '-1', '201', '1.5', 'abc', '1e2', '', '%00', '200']))}`, false],
      ['/me/ledger?before', `/me/ledger?before=${chance(r, 0.5) ? before : percentEncode(pick(r, NASTY_STRINGS))}`, false],
      ['/prices', '/prices', true],
      ['/health', '/health', true],
      ['service document', `${service.path}/`, false],
      ['$metadata', `${service.path}/$metadata?$format=${pick(r, ['json', 'xml', 'x'])}`, false],
      ['unknown path', `${service.path}/${pick(r, ['Fuzz', '$batch', '$crossjoin(A,B)', '$all', '$entity', 'Fuzz()', '..%2F'])}`, false],
    ] as const)
    return { name: `gateway: ${label}`, group: label.startsWith('/') ? 'gateway routes' : `${service.name} (${label})`, kinds: [label], method: 'GET', target, anonymous }
  }
}

/** URLs stay below Node's 16 KB header limit (the deterministic cases cover larger ones). */
const TARGET_MAX = 12_000
const URL_VALUE_MAX = 4000
const withinUrl = (value: unknown) => (value instanceof RawJson ? value.text.slice(0, URL_VALUE_MAX) : typeof value === 'string' ? value.slice(0, URL_VALUE_MAX) : value)

const BODIES: [string, string][] = [
  ['null', 'null'], ['[]', '[]'], ['"x"', '"x"'], ['5', '5'], ['true', 'true'], ['{}', '{}'], ['empty', ''], ['invalid JSON', '{"a":'],
  ['duplicate keys', '{"a":1,"a":2}'], ['deep array', '['.repeat(50_000) + ']'.repeat(50_000)], ['deep object', '{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000)],
  ['BOM', '\ufeff{}'], ['NUL', '\u0000'],
]

const BAD_AMOUNTS = ['-1', '0', '1.5', '1e6', '99999999999999999999999999999', ' 2000000', '0x10', 'NaN', 'Infinity', '', '2000000\u0000', '٣', '+5', '00000000000002000000', '45000000000000000']
const BAD_NUMBERS: unknown[] = [-1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 1, 1.5, '1', 'x', new RawJson('1e400'), new RawJson('-0'), new RawJson('123456789012345678901234567890'), Number.MAX_SAFE_INTEGER]
const ODD_SCRIPTS = [
  '{"type":"sig"}', '{"type":"all","scripts":[]}', '{"type":"atLeast","required":5,"scripts":[]}', '{"type":"before","slot":-1}', '{"type":"after","slot":1e400}',
  '{"type":"any","scripts":[{"type":"any","scripts":[{"type":"any","scripts":[]}]}]}', '{"type":"nope"}', '[]', 'null', '{"type":"sig","keyHash":"zz"}',
  JSON.stringify('{"type":"all","scripts":['.repeat(2000) + ']}'.repeat(2000)),
]
const ODD_JSON: (() => string)[] = [
  () => '[]', () => '{}', () => 'null', () => '1', () => '"x"', () => 'true',
  () => '[{"unit":"","quantity":"1"}]', () => '[{"unit":null,"quantity":null}]', () => '[{"unit":"ab","quantity":"-1"}]', () => '[{"unit":"ab","quantity":"1e400"}]',
  () => '[{"assetName":"' + 'x'.repeat(100) + '","quantity":"1"}]', () => '[{"assetNameHex":"zz","quantity":"1"}]', () => '{"674":{"msg":["' + 'x'.repeat(100) + '"]}}',
  () => '{"-1":"x"}', () => '{"18446744073709551616":"x"}', () => '{"721":' + '['.repeat(500) + ']'.repeat(500) + '}', () => '{"__proto__":{"polluted":true}}',
  () => '{"constructor":{"prototype":{"polluted":true}}}', () => '{"int":1e400}', () => '{"bytes":"zz"}', () => '{"constructor":0,"fields":[]}', () => '{"list":' + '['.repeat(1000) + ']'.repeat(1000) + '}',
  () => JSON.stringify(Array.from({ length: 10_000 }, (_, i) => ({ unit: 'ab'.repeat(28), quantity: String(i) }))), () => '{"674":{"msg":["\\u0000\\ud800"]}}',
]

/** Notes what is unusual about a request, and gives back the value. */
function kind<T>(kinds: string[], what: string, value: T): T {
  kinds.push(what)
  return value
}

type OptionMaker = (q: RandomRequests, set: EntitySet, kinds: string[]) => [string, string]

const OPTIONS: OptionMaker[] = [
  (q, set, kinds) => ['$filter', q.filter(set, kinds)],
  (q, set) => ['$select', selectList(q, set)],
  (q, set, kinds) => ['$expand', q.expand(set, kinds)],
  (q, set) => ['$orderby', orderBy(q, set)],
  (q, _set, kinds) => ['$top', kind(kinds, 'top', pickFrom(q, ['0', '1', '5', '1000', '1001', '-1', '1e30', 'abc', '9223372036854775808', '']))],
  (q, _set, kinds) => ['$skip', kind(kinds, 'skip', pickFrom(q, ['0', '1', '100', '-5', '100000000000000000000', '1.5', 'x']))],
  (q, _set, kinds) => ['$count', kind(kinds, 'count', pickFrom(q, ['true', 'false', 'maybe', '1']))],
  (q, _set, kinds) => ['$search', kind(kinds, 'search', pickFrom(q, ['x', '"quoted phrase"', 'a OR b', 'NOT', NUL, '🦄', '(', '%', '_', "'"]))],
  (q, set, kinds) => ['$apply', kind(kinds, 'apply', pickFrom(q, [`groupby((${set.properties[0]?.name}))`, 'aggregate($count as n)', `filter(${q.filter(set, [])})`, 'topcount(1,x)', 'groupby(', 'concat(identity,identity)']))],
  (q, _set, kinds) => ['$format', kind(kinds, 'format', pickFrom(q, ['json', 'xml', 'atom', 'application/json;odata.metadata=full', 'text/csv', 'x']))],
  (q, _set, kinds) => [kind(kinds, 'other option', pickFrom(q, ['$skiptoken', '$compute', '$levels', '$index', '$schemaversion', '$deltatoken', '$foo', 'sap-language', 'fuzz', '$TOP', '$id'])), pickFrom(q, ['1', 'x', 'max', NUL, ''])],
]

const NESTED: ((q: RandomRequests, set: EntitySet, kinds: string[], depth: number) => [string, string])[] = [
  (q, set) => ['$select', selectList(q, set)],
  (q, _set, kinds) => ['$top', kind(kinds, 'nested top', pickFrom(q, ['1', '0', '-1', '1001', '1e30']))],
  (q, _set, kinds) => ['$skip', kind(kinds, 'nested skip', pickFrom(q, ['1', '-1', '100000000000000000000']))],
  (q, set) => ['$orderby', orderBy(q, set)],
  (q, set, kinds) => ['$filter', q.filter(set, kinds)],
  (q, set, kinds, depth) => ['$expand', depth < 3 ? q.expand(set, kinds, depth + 1) : 'fuzzNoSuchProperty'],
  (q, _set, kinds) => ['$count', kind(kinds, 'nested count', pickFrom(q, ['true', 'x']))],
  (q, _set, kinds) => ['$levels', kind(kinds, 'nested levels', pickFrom(q, ['2', 'max', '-1']))],
]

const pickFrom = (q: RandomRequests, values: string[]) => pick(q.random, values)

function selectList(q: RandomRequests, set: EntitySet): string {
  const r = q.random
  const names = [...set.properties.map(p => p.name), ...set.navigations.map(n => n.name), 'fuzzNoSuchProperty', '*', '']
  return Array.from({ length: 1 + integer(r, 3) }, () => pick(r, names)).join(',')
}

function orderBy(q: RandomRequests, set: EntitySet): string {
  const r = q.random
  const names = [...set.properties.map(p => p.name), 'fuzzNoSuchProperty', set.navigations[0] ? `${set.navigations[0].name}/${set.properties[0]?.name}` : 'x/y']
  return Array.from({ length: 1 + integer(r, 2) }, () => `${pick(r, names)}${pick(r, ['', ' asc', ' desc', ' sideways'])}`).join(',')
}
