/**
 * Values for the fuzz suite: a seeded PRNG, pools of real values harvested from the devnet (by
 * flavour: addresses, hashes, ids, CBOR…), valid-looking values for a parameter or property from its
 * name and Edm type, and hostile ones (wrong types, huge, deeply nested, invalid hex, bech32, CBOR,
 * unicode, NUL).
 */

export type Random = () => number

/** mulberry32: small, fast, good enough to pick cases reproducibly from a seed. */
export function prng(seed: number): Random {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]
export const chance = (random: Random, p: number) => random() < p
export const integer = (random: Random, below: number) => Math.floor(random() * below)

/** JSON text inserted as it is into a body (so it can be deeper than JSON.stringify could write). */
export class RawJson {
  readonly text: string
  constructor(text: string) {
    this.text = text
  }
}

/** JSON.stringify, with RawJson values written verbatim. */
export function toJson(value: unknown): string {
  const raws: string[] = []
  const text = JSON.stringify(value, (_key, v) => {
    if (v instanceof RawJson) {
      raws.push(v.text)
      return `\u0001RAW${raws.length - 1}\u0001`
    }
    return v
  })
  return text === undefined ? '' : text.replace(/"\\u0001RAW(\d+)\\u0001"/g, (_match, index) => raws[Number(index)])
}

export type Flavour =
  | 'address' | 'stakeAddress' | 'txHash' | 'blockHash' | 'poolId' | 'drepId' | 'assetUnit' | 'policyId' | 'keyHash'
  | 'uuid' | 'cbor' | 'amount' | 'index' | 'builder' | 'signerType' | 'script' | 'json' | 'text'

/** What a parameter or property holds, from its name (and the entity set it belongs to). */
export function flavourOf(name: string, type: string, setName = ''): Flavour {
  if (type === 'Edm.Guid') return 'uuid'
  const n = name.toLowerCase()
  if (n === 'hash' && /block/i.test(setName)) return 'blockHash'
  if (/block.*hash|previousblock|blockhash/.test(n)) return 'blockHash'
  if (/stake/.test(n)) return 'stakeAddress'
  if (/address/.test(n)) return 'address'
  if (/cbor/.test(n)) return 'cbor'
  if (/json$/.test(n)) return 'json'
  if (/hash/.test(n) && !/keyhash|datahash|scripthash|metadatahash/.test(n)) return 'txHash'
  if (/keyhash|signers?$/.test(n)) return 'keyHash'
  if (/pool/.test(n)) return 'poolId'
  if (/drep/.test(n)) return 'drepId'
  if (/policy/.test(n)) return 'policyId'
  if (n === 'unit' || /asset(unit)?$/.test(n)) return 'assetUnit'
  if (/script/.test(n)) return 'script'
  if (/amount|lovelace|quantity|fee|deposit|balance|output$/.test(n)) return 'amount'
  if (/index|epoch|height|slot|seconds|count|size/.test(n) || /Edm\.(Int|Decimal|Double|Single|Byte|SByte)/.test(type)) return 'index'
  if (n === 'builder') return 'builder'
  if (n === 'signertype') return 'signerType'
  return 'text'
}

/** Real values seen on the devnet and in answers, by flavour (UUIDs also by what they identify). */
export class Pools {
  private readonly pools = new Map<Flavour, string[]>()
  private readonly uuids = new Map<string, string[]>()
  /** Real keys per entity set (key name → value). */
  readonly keys = new Map<string, Record<string, unknown>[]>()

  add(flavour: Flavour, value: unknown) {
    if (typeof value !== 'string' || !value || value.length > 20_000) return
    addTo(this.pools, flavour, value)
  }

  /** A UUID under the name that held it: `buildId`, `build_ID`, or `ID` of an entity set. */
  addUuid(name: string, value: string, setName = '') {
    this.add('uuid', value)
    const stem = stemOf(name === 'ID' ? setName : name)
    if (stem) addTo(this.uuids, stem, value)
  }

  addKey(setName: string, key: Record<string, unknown>) {
    const keys = this.keys.get(setName) ?? []
    if (keys.length < 50 && !keys.some(k => JSON.stringify(k) === JSON.stringify(key))) keys.push(key)
    this.keys.set(setName, keys)
  }

  get(flavour: Flavour): string[] {
    return this.pools.get(flavour) ?? []
  }

  first(flavour: Flavour): string | undefined {
    return this.get(flavour)[0]
  }

  /** UUIDs seen under a name like this one (`buildId` finds the IDs of `TransactionBuilds`), else all. */
  uuidsFor(name: string): string[] {
    const stem = stemOf(name)
    for (const [seen, values] of this.uuids) if (stem && (seen.includes(stem) || stem.includes(seen))) return values
    return this.get('uuid')
  }

  /** Walks an answer and keeps every string under a name that says what it is. */
  harvest(value: unknown, setName = '', depth = 0) {
    if (depth > 6 || value === null || typeof value !== 'object') return
    if (Array.isArray(value)) {
      for (const item of value.slice(0, 50)) this.harvest(item, setName, depth + 1)
      return
    }
    for (const [name, inner] of Object.entries(value)) {
      if (typeof inner === 'string') {
        if (UUID.test(inner)) this.addUuid(name, inner, setName)
        const flavour = flavourOf(name, '', setName)
        if (flavour !== 'text' && flavour !== 'index' && flavour !== 'json' && flavour !== 'uuid') this.add(flavour, inner)
      } else this.harvest(inner, name === 'value' ? setName : name, depth + 1)
    }
  }

  summary(): string {
    return [...this.pools].map(([flavour, values]) => `${flavour} ${values.length}`).join(', ')
  }
}

function addTo<K>(pools: Map<K, string[]>, key: K, value: string) {
  const pool = pools.get(key) ?? []
  if (pool.length < 200 && !pool.includes(value)) pool.push(value)
  pools.set(key, pool)
}

const stemOf = (name: string) => name.toLowerCase().replace(/_?id$/, '').replace(/s$/, '')

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const HEX = '0123456789abcdef'
const BECH32 = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l'
export const randomHex = (random: Random, length: number) => Array.from({ length }, () => pick(random, [...HEX])).join('')
const randomBech32Data = (random: Random, length: number) => Array.from({ length }, () => pick(random, [...BECH32])).join('')
export const randomUuid = (random: Random) => `${randomHex(random, 8)}-${randomHex(random, 4)}-4${randomHex(random, 3)}-a${randomHex(random, 3)}-${randomHex(random, 12)}`

/** Valid-looking JSON for a `…Json` parameter, from its name. */
function jsonFor(name: string, pools: Pools): string {
  const n = name.toLowerCase()
  if (n.includes('asset')) return JSON.stringify([{ unit: pools.first('assetUnit') ?? 'ab'.repeat(28) + '46757a7a', quantity: '1' }])
  if (n.includes('mint')) return JSON.stringify([{ assetName: 'Fuzz', quantity: '1' }])
  if (n.includes('metadata')) return JSON.stringify({ 674: { msg: ['fuzz'] } })
  if (n.includes('datum') || n.includes('redeemer')) return JSON.stringify({ int: 42 })
  return '{}'
}

/** A valid-looking value for a parameter or property (the first real one when `random` is absent). */
export function validValue(name: string, type: string, pools: Pools, random?: Random, setName = ''): unknown {
  const choose = (values: readonly string[], fallback: () => string) => (values.length ? (random ? pick(random, values) : values[0]) : fallback())
  const rnd = random ?? prng(1)
  switch (flavourOf(name, type, setName)) {
    case 'uuid':
      return choose(pools.uuidsFor(name), () => randomUuid(rnd))
    case 'address':
      return choose(pools.get('address'), () => 'addr_test1' + randomBech32Data(rnd, 98))
    case 'stakeAddress':
      return choose(pools.get('stakeAddress'), () => 'stake_test1' + randomBech32Data(rnd, 53))
    case 'txHash':
      return choose(pools.get('txHash'), () => randomHex(rnd, 64))
    case 'blockHash':
      return choose(pools.get('blockHash'), () => randomHex(rnd, 64))
    case 'poolId':
      return choose(pools.get('poolId'), () => 'pool1' + randomBech32Data(rnd, 51))
    case 'drepId':
      return choose(pools.get('drepId'), () => 'drep1' + randomBech32Data(rnd, 51))
    case 'assetUnit':
      return choose(pools.get('assetUnit'), () => randomHex(rnd, 64))
    case 'policyId':
      return choose(pools.get('assetUnit').map(unit => unit.slice(0, 56)), () => randomHex(rnd, 56))
    case 'keyHash':
      return choose(pools.get('keyHash'), () => randomHex(rnd, 56))
    case 'cbor':
      return choose(pools.get('cbor'), () => '84a4' + randomHex(rnd, 60))
    case 'amount':
      return type === 'Edm.String' ? choose(['2000000', '1500000', '5000000'], () => '2000000') : random ? pick(random, [0, 1, 2]) : 0
    case 'index':
      return type === 'Edm.String' ? '0' : random ? pick(random, [0, 1, 2, 3]) : 0
    case 'builder':
      return random ? pick(random, ['csl', 'buildooor']) : 'csl'
    case 'signerType':
      return random ? pick(random, ['browser-wallet', 'cardano-cli']) : 'browser-wallet'
    case 'script': {
      const keyHash = pools.first('keyHash') ?? 'ab'.repeat(28)
      return /validator/i.test(name) ? '4e4d01000033222220051200120011' : JSON.stringify({ type: 'sig', keyHash })
    }
    case 'json':
      return jsonFor(name, pools)
    case 'text':
      return typedText(type, rnd)
  }
}

function typedText(type: string, random: Random): unknown {
  switch (type) {
    case 'Edm.Boolean':
      return chance(random, 0.5)
    case 'Edm.DateTimeOffset':
      return new Date(Date.UTC(2026, 0, 1 + integer(random, 300))).toISOString()
    case 'Edm.Date':
      return '2026-01-01'
    default:
      return pick(random, ['fuzz', 'hello', 'a'])
  }
}

export const isStringType = (type: string) => ['Edm.String', 'Edm.Guid', 'Edm.Date', 'Edm.DateTimeOffset', 'Edm.TimeOfDay', 'Edm.Binary', 'Edm.Duration'].includes(type)
export const isNumberType = (type: string) => /^Edm\.(Int16|Int32|Int64|Byte|SByte|Decimal|Double|Single)$/.test(type)

export const NUL = 'a\u0000b'
export const HUGE_STRING = 'x'.repeat(200 * 1024)
export const DEEP_JSON = '['.repeat(100_000) + ']'.repeat(100_000)
export const deepArray = (depth: number) => new RawJson('['.repeat(depth) + ']'.repeat(depth))
export const deepObject = (depth: number) => new RawJson('{"a":'.repeat(depth) + '1' + '}'.repeat(depth))

/** Strings that break naive parsers, escapers and databases. */
export const NASTY_STRINGS = [
  NUL, '\u0000', '🦄💥', '\u200f\u202eevil', '\ud800', '\udfff\ud800', '\ufeff', 'e\u0301\u0301\u0301', 'ｆｕｌｌｗｉｄｔｈ', "' or 1=1 --", "''", '"', '\\', '%00', '%', '${7*7}', '{{7*7}}',
  '<script>alert(1)</script>', '\r\nx-injected: 1', 'null', 'undefined', 'NaN', '-0', '1e400', '0x10', ' ', '', '\t\n', '__proto__', 'constructor',
]

/** Mutations of a real hex string: wrong characters, wrong length, prefixes. */
export function badHex(random: Random, valid?: string): string {
  const base = valid && /^[0-9a-f]+$/i.test(valid) ? valid : randomHex(random, 64)
  return pick(random, [
    () => base.slice(0, -1),
    () => base + 'a',
    () => base.slice(0, base.length >> 1),
    () => base.replace(/.$/, 'g'),
    () => base.toUpperCase(),
    () => '0x' + base,
    () => base.replace(/^./, 'z'),
    () => base + base,
    () => randomHex(random, 1 + integer(random, 130)),
    () => ' ' + base,
  ])()
}

/** Mutations of a real bech32 string: bad checksum, wrong prefix, mixed case, truncated, bad characters. */
export function badBech32(random: Random, valid?: string): string {
  const base = valid && valid.includes('1') ? valid : 'addr_test1' + randomBech32Data(random, 98)
  const separator = base.lastIndexOf('1')
  const hrp = base.slice(0, separator)
  const data = base.slice(separator + 1)
  const flip = (text: string, at: number) => text.slice(0, at) + BECH32[(BECH32.indexOf(text[at]) + 1) % BECH32.length] + text.slice(at + 1)
  return pick(random, [
    () => hrp + '1' + flip(data, data.length - 1),
    () => hrp + '1' + flip(data, integer(random, data.length)),
    () => pick(random, ['addr', 'stake', 'pool', 'drep', 'addr_vk', 'xyz', 'addr_test']) + '1' + data,
    () => base.slice(0, separator + 1) + data.slice(0, 3).toUpperCase() + data.slice(3),
    () => base.toUpperCase(),
    () => base.slice(0, Math.max(separator + 2, integer(random, base.length))),
    () => hrp + '1' + data.replace(/.$/, 'b'),
    () => hrp + '1' + data.replace(/^./, 'o'),
    () => hrp + '1' + data + data,
    () => hrp + data,
    () => '1' + data,
  ])()
}

/** Invalid CBOR hex: random bytes, truncated real transactions, lying lengths, deep nesting. */
export function badCbor(random: Random, valid?: string): string {
  const base = valid && /^[0-9a-f]+$/i.test(valid) && valid.length > 8 ? valid : '84a400' + randomHex(random, 120)
  return pick(random, [
    () => randomHex(random, 2 * (1 + integer(random, 200))),
    () => base.slice(0, 2 * integer(random, base.length >> 1)),
    () => '84a4',
    () => '84a400',
    () => base.slice(0, -2),
    () => base + '00',
    () => 'ff',
    () => '9f',
    () => '5bffffffffffffffff',
    () => '9bffffffffffffffff',
    () => 'bf'.repeat(2000),
    () => '81'.repeat(50_000) + '00',
    () => 'd818' + '58ff' + randomHex(random, 20),
    () => base.slice(0, 9),
    () => 'not cbor',
    () => base.toUpperCase() + 'z',
  ])()
}
