import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import {
  arrayItems, byteStringContent, hexBytes, isShallowCbor, mapFields, MAX_DEPTH, readCbor, topLevelMajorType,
} from '../../srv/chains/chain-a/cbor.ts'
import { ApiError } from '../../srv/lib/errors.ts'

/* The one CBOR reader of chain A: well-formedness, the nesting limit that keeps CSL and the Plutus
   evaluator safe, and the original bytes of the items the ledger hashes as submitted. */

const bytes = (hex: string) => Buffer.from(hex, 'hex')
const hex = (raw: Uint8Array) => Buffer.from(raw).toString('hex')
const nested = (opener: string, depth: number, leaf = '00') => opener.repeat(depth) + leaf

function problemOf(hexText: string): string | undefined {
  try {
    readCbor(bytes(hexText))
    return undefined
  } catch (error) {
    return (error as Error).message
  }
}

describe('nesting', () => {
  test.each([
    ['definite arrays', '81'],
    ['indefinite arrays', '9f'],
    ['maps (as values)', 'a100'],
    ['tags', 'd818'],
  ])(`%s: ${MAX_DEPTH} levels are read, one more is refused`, (_, opener) => {
    const closing = opener === '9f' ? 'ff'.repeat(MAX_DEPTH) : ''
    const deeper = opener === '9f' ? 'ff'.repeat(MAX_DEPTH + 1) : ''
    expect(problemOf(nested(opener, MAX_DEPTH) + closing)).toBeUndefined()
    expect(problemOf(nested(opener, MAX_DEPTH + 1) + deeper)).toBe('nesting too deep')
  })

  test('input nested far beyond what a recursive parser survives is refused, quickly and without a stack overflow', () => {
    const started = Date.now()
    expect(problemOf(nested('81', 1_000_000))).toBe('nesting too deep')
    expect(problemOf('bf'.repeat(500_000))).toBe('nesting too deep')
    expect(Date.now() - started).toBeLessThan(2000)
  })

  test('a deep item after an array of many shallow ones is still found', () => {
    expect(problemOf('83' + '00' + '4100' + nested('81', MAX_DEPTH + 5))).toBe('nesting too deep')
    expect(problemOf('83' + '00' + '4100' + nested('81', MAX_DEPTH - 1))).toBeUndefined()
  })

  test('bytes inside strings are content, not nesting', () => {
    const content = '81'.repeat(1000)
    expect(problemOf('59' + (1000).toString(16).padStart(4, '0') + content)).toBeUndefined()
    expect(problemOf('5f' + '59' + (1000).toString(16).padStart(4, '0') + content + 'ff')).toBeUndefined()
  })

  test('a CSL value nested too deeply for CSL is refused before CSL sees it', () => {
    expect(isShallowCbor(nested('81', 6000))).toBe(false)
    expect(isShallowCbor(CSL.PlutusData.new_integer(CSL.BigInt.from_str('42')).to_hex())).toBe(true)
  })
})

describe('well-formedness', () => {
  test.each([
    ['followed by extra bytes', '0000', /1 bytes follow the first item/],
    ['truncated in an array', '8201', /beyond buffer/],
    ['truncated in its argument', '1b', /outside buffer|beyond buffer/],
    ['a reserved additional information', 'fc', /Invalid length/],
    ['a map key without a value', 'bf01ff', /indefinite/],
    ['a break outside an indefinite item', 'ff', /indefinite/],
    ['an indefinite-length integer', '1f', /indefinite/],
    ['an indefinite-length tag', 'df00', /indefinite length on a tag/],
    ['a byte string longer than the input', '5a00000010', /not enough? bytes/],
    ['a text chunk in an indefinite byte string', '5f6161ff', /indefinite/],
    ['empty', '', /beyond buffer/],
  ])('%s is malformed', (_, input, reason) => {
    expect(problemOf(input)).toMatch(reason)
  })

  test.each([
    ['an unsigned integer', '1b00000001ffffffff'],
    ['a negative integer', '3903e7'],
    ['an indefinite byte string', '5f41014102ff'],
    ['a half-precision float', 'f93c00'],
    ['a set (tag 258)', 'd90102820102'],
    ['true, false and null', '83f5f4f6'],
  ])('%s is well-formed', (_, input) => {
    expect(problemOf(input)).toBeUndefined()
  })

  test('topLevelMajorType answers the major type, or MALFORMED_CBOR naming the field', () => {
    expect(topLevelMajorType(bytes('80'), 'tx')).toBe(4)
    expect(topLevelMajorType(bytes('a0'), 'tx')).toBe(5)
    let thrown: unknown
    try {
      topLevelMajorType(bytes('8201'), 'signedTxCbor')
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(ApiError)
    expect(thrown).toMatchObject({ status: 400, code: 'MALFORMED_CBOR', target: 'signedTxCbor', message: expect.stringMatching(/^signedTxCbor is not well-formed CBOR/) })
  })

  test.each([['not hex', 'zz'], ['odd length', 'abc'], ['empty', ''], ['not a string', 42]])('hexBytes refuses %s with MALFORMED_CBOR', (_, input) => {
    expect(() => hexBytes(input, 'cbor')).toThrow(expect.objectContaining({ code: 'MALFORMED_CBOR' }))
  })
})

describe('original bytes of items', () => {
  // Items whose encoding a re-encoder would change: a non-minimal integer, an indefinite array, a
  // constructor tag (PlutusData), a float and a nested set.
  const items = ['1800', '9f0102ff', 'd8799f4101ff', 'f93c00', 'd9010281a0']

  test('arrayItems answers each item of a definite array as it was written', () => {
    expect(arrayItems(bytes('85' + items.join(''))).map(hex)).toEqual(items)
  })

  test('arrayItems reads indefinite arrays and sets (tag 258) alike', () => {
    expect(arrayItems(bytes('9f' + items.join('') + 'ff')).map(hex)).toEqual(items)
    expect(arrayItems(bytes('d90102' + '85' + items.join(''))).map(hex)).toEqual(items)
    expect(arrayItems(bytes('80'))).toEqual([])
  })

  test('mapFields answers the value under each unsigned key as it was written', () => {
    const fields = mapFields(bytes('a3' + '04' + items[2] + '05' + items[1] + '6178' + items[0]))
    expect([...fields].map(([key, value]) => [key, hex(value)])).toEqual([[4, items[2]], [5, items[1]]])
    expect(hex(mapFields(bytes('bf' + '00' + items[3] + 'ff')).get(0)!)).toBe(items[3])
  })

  test('a witness set as CSL writes it: the datums field hashes as CSL hashes each datum', () => {
    const datum = CSL.PlutusData.from_json('{"constructor":0,"fields":[{"int":7},{"bytes":"cafe"}]}', CSL.PlutusDatumSchema.DetailedSchema)
    const list = CSL.PlutusList.new()
    list.add(datum)
    const witnesses = CSL.TransactionWitnessSet.new()
    witnesses.set_plutus_data(list)
    const [raw] = arrayItems(mapFields(witnesses.to_bytes()).get(4)!)
    expect(hex(raw)).toBe(datum.to_hex())
  })

  test('arrayItems and mapFields refuse other shapes', () => {
    expect(() => arrayItems(bytes('a0'))).toThrow('not a CBOR array')
    expect(() => mapFields(bytes('80'))).toThrow('not a CBOR map')
    expect(() => mapFields(bytes('a10102ff'))).toThrow(/1 bytes follow/)
  })

  test('byteStringContent answers the content of one definite byte string, else null', () => {
    expect(hex(byteStringContent(bytes('43010203'))!)).toBe('010203')
    expect(hex(byteStringContent(bytes('5801' + 'ff'))!)).toBe('ff')
    expect(byteStringContent(bytes('5f4101ff'))).toBeNull()
    expect(byteStringContent(bytes('4301020304'))).toBeNull()
    expect(byteStringContent(bytes('6161'))).toBeNull()
  })
})
