import { Cbor, CborArray, CborBytes, CborMap, CborTag, CborUInt, type CborObj } from '@harmoniclabs/cbor'
import { ApiError } from '../../lib/errors.ts'

/**
 * The one CBOR reader of chain A, on `@harmoniclabs/cbor`. It tells malformed bytes from a
 * well-formed item of the wrong shape (CSL only says "could not deserialise"), keeps deeply nested
 * input away from CSL and the Plutus evaluator, and finds the original bytes of items the ledger
 * hashes as they were submitted (redeemers and datums for the script data hash, each datum for its
 * hash).
 */

export const MAJOR_ARRAY = 4
export const MAJOR_MAP = 5

/**
 * Deeper nesting is refused before CSL or the Plutus evaluator see the bytes: both run in
 * WebAssembly with a fixed stack, and a few thousand nested items exhaust it and leave the module
 * unusable for every later call in the process.
 */
export const MAX_DEPTH = 256

export const malformedCbor = (message: string, target?: string) => new ApiError(400, 'MALFORMED_CBOR', message, { target })

/** Bytes of a hex string; MALFORMED_CBOR when it is not even-length hex. */
export function hexBytes(hex: unknown, target: string): Uint8Array {
  const text = typeof hex === 'string' ? hex.trim() : ''
  if (!text || text.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(text)) throw malformedCbor(`${target} must be CBOR in hex`, target)
  return Buffer.from(text, 'hex')
}

/**
 * Exactly one well-formed item, nested at most MAX_DEPTH levels, parsed; throws an Error saying
 * what is wrong otherwise.
 */
export function readCbor(bytes: Uint8Array): CborObj {
  checkNesting(bytes)
  let parsed: { parsed: CborObj; offset: number }
  try {
    parsed = Cbor.parseWithOffset(bytes, { keepRef: true })
  } catch (error) {
    throw new Error(error instanceof Error ? error.message : String(error), { cause: error })
  }
  if (parsed.offset !== bytes.length) throw new Error(`${bytes.length - parsed.offset} bytes follow the first item`)
  return parsed.parsed
}

/** The major type of the single top-level item; MALFORMED_CBOR unless the bytes are exactly one well-formed item. */
export function topLevelMajorType(bytes: Uint8Array, target: string): number {
  try {
    readCbor(bytes)
  } catch (error) {
    throw malformedCbor(`${target} is not well-formed CBOR (${(error as Error).message})`, target)
  }
  return bytes[0] >> 5
}

/** Whether a hex string is exactly one well-formed CBOR item nested at most MAX_DEPTH levels. */
export function isShallowCbor(hex: string): boolean {
  try {
    readCbor(hexBytes(hex, 'cbor'))
    return true
  } catch {
    return false
  }
}

/** The raw items of an array, or of a set (an array under tag 258). */
export function arrayItems(bytes: Uint8Array): Uint8Array[] {
  const item = readCbor(bytes)
  const array = item instanceof CborTag ? item.data : item
  if (!(array instanceof CborArray)) throw new Error('not a CBOR array')
  const start = item instanceof CborTag ? headLength(bytes, 0) : 0
  return rawItems(bytes, array.array, start + headLength(bytes, start))
}

/** The raw values of a map by their unsigned integer keys (a transaction body or witness set). */
export function mapFields(bytes: Uint8Array): Map<number, Uint8Array> {
  const map = readCbor(bytes)
  if (!(map instanceof CborMap)) throw new Error('not a CBOR map')
  const raw = rawItems(bytes, map.map.flatMap(({ k, v }) => [k, v]), headLength(bytes, 0))
  const fields = new Map<number, Uint8Array>()
  map.map.forEach(({ k }, i) => {
    if (k instanceof CborUInt) fields.set(Number(k.num), raw[2 * i + 1])
  })
  return fields
}

/** The content of a definite-length byte string spanning all of `bytes`, or null. */
export function byteStringContent(bytes: Uint8Array): Uint8Array | null {
  try {
    const item = readCbor(bytes)
    return item instanceof CborBytes && item.isDefiniteLength ? bytes.subarray(headLength(bytes, 0)) : null
  } catch {
    return null
  }
}

// ---- offsets -------------------------------------------------------------------------------

/** Bytes of the head of the item at `offset`: the initial byte and the argument that follows it. */
function headLength(bytes: Uint8Array, offset: number): number {
  const info = bytes[offset] & 0x1f
  return info < 24 || info === 31 ? 1 : 1 + 2 ** (info - 24)
}

/** The items of a sequence that starts at `start`, each as its bytes: items follow one another without gaps. */
function rawItems(bytes: Uint8Array, items: CborObj[], start: number): Uint8Array[] {
  let position = start
  return items.map(item => {
    const end = endOf(item, position, bytes)
    const raw = bytes.subarray(position, end)
    position = end
    return raw
  })
}

/**
 * Where the item that starts at `start` ends. The parser keeps the span of most items; a tag's is
 * its content's, and a float is all head.
 */
function endOf(item: CborObj, start: number, bytes: Uint8Array): number {
  if (item.subCborRef) return item.subCborRef.end
  const next = start + headLength(bytes, start)
  return item instanceof CborTag ? endOf(item.data, next, bytes) : next
}

// ---- nesting -------------------------------------------------------------------------------

/**
 * The parser is recursive and would overflow the stack on deep input, so nesting is measured first,
 * without recursion: a stack of the items each open array, map or tag still expects. It also refuses
 * the indefinite-length tag, which the parser accepts. Anything else malformed is left to the parser.
 */
function checkNesting(bytes: Uint8Array) {
  const open: number[] = []
  let offset = 0
  const closeItem = () => {
    while (open.length && --open[open.length - 1] === 0) open.pop()
  }
  while (offset < bytes.length) {
    const initial = bytes[offset]
    if (initial === 0xff && open.length && open[open.length - 1] === Infinity) {
      open.pop()
      offset += 1
      closeItem()
    } else {
      const major = initial >> 5
      const info = initial & 0x1f
      const argument = info === 31 ? Infinity : argumentAt(bytes, offset, info)
      if (argument === undefined) return
      offset += headLength(bytes, offset)
      if (major === 6 && info === 31) throw new Error(`indefinite length on a tag at byte ${offset - 1}`)
      if ((major === 2 || major === 3) && info === 31) offset = afterChunks(bytes, offset)
      else if (major === 2 || major === 3) offset += argument
      const expected = major === 4 ? argument : major === 5 ? 2 * argument : major === 6 ? 1 : 0
      if (expected > 0) {
        open.push(expected)
        if (open.length > MAX_DEPTH) throw new Error('nesting too deep')
        continue
      }
      closeItem()
    }
    if (open.length === 0) return
  }
}

/** The argument of the head at `offset` (a length, count or value); undefined when the bytes end first. */
function argumentAt(bytes: Uint8Array, offset: number, info: number): number | undefined {
  if (info < 24) return info
  const size = headLength(bytes, offset) - 1
  if (info > 27 || offset + size >= bytes.length) return undefined
  let argument = 0
  for (let i = 1; i <= size; i++) argument = argument * 256 + bytes[offset + i]
  return argument
}

/** The offset after the chunks of an indefinite-length string and its break. */
function afterChunks(bytes: Uint8Array, offset: number): number {
  let position = offset
  while (position < bytes.length && bytes[position] !== 0xff) {
    position += headLength(bytes, position) + (argumentAt(bytes, position, bytes[position] & 0x1f) ?? bytes.length)
  }
  return position + 1
}
