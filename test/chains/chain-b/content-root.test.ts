import { createHash } from 'node:crypto'
import { poseidon1, poseidon2, poseidon5 } from 'poseidon-lite'
import { ContentError, membershipSet, prepareDocument, rootOfOpening } from '../../../srv/chains/chain-b/zk/content.ts'
import { allowedValuesSet, preparedDocument, proofFieldsParam } from '../../../srv/chainb-params/documents.ts'
import { FIELD_PRIME, rootOfPath } from '../../../srv/chains/chain-b/zk/field.ts'

/**
 * Content roots as the README specifies them, recomputed here from the specification alone
 * (SHA-256 from node:crypto, Poseidon from poseidon-lite), so a third party's recomputation and
 * ours agree; and the refusals of documents, fields and sets that cannot be proven about.
 */

const SEED = '11'.repeat(32)
const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest()
const field = (digest: Buffer) => BigInt('0x' + digest.toString('hex')) % FIELD_PRIME
const hex = (element: bigint) => element.toString(16).padStart(64, '0')

const DOCUMENT = { id: 'INV-7', total: 1234.5, buyer: { country: 'DE', name: 'Ada' }, lines: [{ qty: 3 }] }
const FIELDS = ['total', 'buyer.country', { field: 'lines.0.qty', scale: 1 }, 'missing']

/** The README's rule, step by step. */
function rootBySpecification(): { payloadHash: string; contentRoot: string } {
  const canonical = '{"buyer":{"country":"DE","name":"Ada"},"id":"INV-7","lines":[{"qty":3}],"total":1234.5}'
  const salt = (i: number) => field(sha256(Buffer.concat([Buffer.from(SEED, 'hex'), Buffer.from([i])])))
  const key = (path: string) => field(sha256(path))
  const leaves = [
    poseidon5([key('total'), 0n, 1000n, 1234500n, salt(0)]),
    poseidon5([key('buyer.country'), 1n, 0n, field(sha256('DE')), salt(1)]),
    poseidon5([key('lines.0.qty'), 0n, 1n, 3n, salt(2)]),
    poseidon5([key('missing'), 2n, 0n, 0n, salt(3)]),
    ...Array.from({ length: 12 }, (_, i) => poseidon5([0n, 2n, 0n, 0n, salt(i + 4)])),
  ]
  let level = leaves
  while (level.length > 1) level = level.filter((_, i) => i % 2 === 0).map((left, i) => poseidon2([left, level[2 * i + 1]]))
  return { payloadHash: sha256(canonical).toString('hex'), contentRoot: hex(level[0]) }
}

describe('prepareDocument', () => {
  const prepared = prepareDocument(DOCUMENT, proofFieldsParam(FIELDS), SEED)

  test('matches the specification, recomputed independently', () => {
    expect({ payloadHash: prepared.payloadHash, contentRoot: prepared.contentRoot }).toEqual(rootBySpecification())
  })

  test('is reproducible: the same document (in any key order), fields and seed give the same root', () => {
    const reordered = { lines: [{ qty: 3 }], buyer: { name: 'Ada', country: 'DE' }, total: 1234.5, id: 'INV-7' }
    expect(prepareDocument(reordered, proofFieldsParam(FIELDS), SEED).contentRoot).toBe(prepared.contentRoot)
    expect(prepareDocument(DOCUMENT, proofFieldsParam(FIELDS), '22'.repeat(32)).contentRoot).not.toBe(prepared.contentRoot)
  })

  test('answers each present field with a path to the root, and lists the absent ones', () => {
    expect(prepared.fields.map(f => [f.field, f.kind, f.scale, f.value])).toEqual([
      ['total', 'uint', '1000', '1234.5'], ['buyer.country', 'bytes', '0', 'DE'], ['lines.0.qty', 'uint', '1', '3'],
    ])
    expect(prepared.emptyFields).toEqual(['missing'])
    for (const f of prepared.fields) {
      const path = { siblings: f.siblings.map(s => BigInt('0x' + s)), dirs: f.dirs }
      expect(hex(rootOfPath(BigInt('0x' + f.leaf), path))).toBe(prepared.contentRoot)
    }
    expect(hex(rootOfOpening(prepared.opening))).toBe(prepared.contentRoot)
  })

  test.each([
    ['more than 16 fields', DOCUMENT, Array.from({ length: 17 }, (_, i) => `f${i}`), 'TOO_MANY_FIELDS'],
    ['a field listed twice', DOCUMENT, ['total', 'total'], 'DUPLICATE_FIELD'],
    ['more decimals than the scale keeps', { x: 1.23456 }, ['x'], 'VALUE_OUT_OF_SCALE'],
    ['a negative number', { x: -1 }, ['x'], 'VALUE_OUT_OF_SCALE'],
    ['a number beyond 64 bits after scaling', { x: 20000000000000000 }, ['x'], 'VALUE_OUT_OF_SCALE'],
    ['text in a uint field', { x: 'ten' }, [{ field: 'x', kind: 'uint' }], 'VALUE_OUT_OF_SCALE'],
    ['a bytes field with a scale', { x: 'a' }, [{ field: 'x', kind: 'bytes', scale: 10 }], 'INVALID_PROOF_FIELDS'],
    ['a scale of 0', { x: 1 }, [{ field: 'x', scale: 0 }], 'INVALID_SCALE'],
    ['no fields', DOCUMENT, [], 'INVALID_PROOF_FIELDS'],
  ])('the service refuses %s', (_what, document, fields, code) => {
    expect(() => preparedDocument(document, proofFieldsParam(fields), SEED)).toThrow(expect.objectContaining({ status: 400, code }))
  })

  test('the connector takes typed fields and says why a value does not fit, without an HTTP status', () => {
    const thrown = (() => {
      try {
        prepareDocument({ x: 1.23456 }, [{ field: 'x' }], SEED)
      } catch (error) {
        return error
      }
    })()
    expect(thrown).toBeInstanceOf(ContentError)
    expect(thrown).toMatchObject({ code: 'VALUE_OUT_OF_SCALE', message: "field 'x' 1.23456 has more decimals than scale 1000 keeps" })
    expect(thrown).not.toHaveProperty('status')
  })
})

describe('membershipSet', () => {
  test('sorts, dedupes and pads to 64 members, and answers a member path that reaches the root', () => {
    const values = ['FR', 'DE', 'IT', 'DE']
    const digests = [...new Set(values)].map(v => field(sha256(v))).sort((a, b) => (a < b ? -1 : 1))
    let level = [...digests, ...Array(64 - digests.length).fill(digests[digests.length - 1])].map(d => poseidon1([d]))
    while (level.length > 1) level = level.filter((_, i) => i % 2 === 0).map((left, i) => poseidon2([left, level[2 * i + 1]]))
    const set = membershipSet(values, field(sha256('IT')))
    expect(set.setRoot).toBe(hex(level[0]))
    expect(set.memberCount).toBe(3)
    const path = { siblings: set.path!.siblings.map(s => BigInt('0x' + s)), dirs: set.path!.dirs }
    expect(hex(rootOfPath(poseidon1([field(sha256('IT'))]), path))).toBe(set.setRoot)
  })

  test('answers no path for a value outside the set', () => {
    expect(membershipSet(['DE'], field(sha256('US'))).path).toBeUndefined()
  })

  test('the service refuses a value outside the set, a set above 64 members, and entries that are not text', () => {
    expect(() => allowedValuesSet(['DE'], field(sha256('US')))).toThrow(expect.objectContaining({ status: 422, code: 'NOT_A_MEMBER' }))
    expect(() => allowedValuesSet(Array.from({ length: 65 }, (_, i) => `v${i}`))).toThrow(expect.objectContaining({ status: 400, code: 'SET_TOO_LARGE' }))
    expect(() => allowedValuesSet(['a', 1])).toThrow(expect.objectContaining({ status: 400, code: 'INVALID_SET' }))
    expect(() => allowedValuesSet([])).toThrow(expect.objectContaining({ status: 400, code: 'INVALID_SET' }))
  })
})
