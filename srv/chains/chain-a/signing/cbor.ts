import { ApiError } from '../../../lib/errors.ts'

/**
 * Just enough CBOR (RFC 8949) to tell malformed bytes from a well-formed item of the wrong shape:
 * CSL only says "could not deserialise", which cannot make that distinction.
 */

export const MAJOR_ARRAY = 4
export const MAJOR_MAP = 5

/**
 * Deeper nesting is refused before CSL or the Plutus evaluator see the bytes: both run in
 * WebAssembly with a fixed stack, and a few thousand nested items exhaust it and leave the module
 * unusable for every later call in the process.
 */
const MAX_DEPTH = 256

export const malformedCbor = (message: string, target?: string) => new ApiError(400, 'MALFORMED_CBOR', message, { target })

/** Bytes of a hex string; MALFORMED_CBOR when it is not even-length hex. */
export function hexBytes(hex: unknown, target: string): Uint8Array {
  const text = typeof hex === 'string' ? hex.trim() : ''
  if (!text || text.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(text)) throw malformedCbor(`${target} must be CBOR in hex`, target)
  return Buffer.from(text, 'hex')
}

/** The major type of the single top-level item; MALFORMED_CBOR unless the bytes are exactly one well-formed item. */
export function topLevelMajorType(bytes: Uint8Array, target: string): number {
  try {
    const end = skipItem(bytes, 0, 0)
    if (end !== bytes.length) throw new Error(`${bytes.length - end} bytes follow the first item`)
  } catch (error) {
    throw malformedCbor(`${target} is not well-formed CBOR (${(error as Error).message})`, target)
  }
  return bytes[0] >> 5
}

/** Whether a hex string is exactly one well-formed CBOR item nested at most MAX_DEPTH levels. */
export function isShallowCbor(hex: string): boolean {
  try {
    topLevelMajorType(hexBytes(hex, 'cbor'), 'cbor')
    return true
  } catch {
    return false
  }
}

/** Reads the head of an item: its major type, its argument (length or value) and where its content starts. */
function readHead(bytes: Uint8Array, offset: number) {
  if (offset >= bytes.length) throw new Error('unexpected end of input')
  const initial = bytes[offset]
  const major = initial >> 5
  const info = initial & 0x1f
  if (info < 24) return { major, info, argument: info, next: offset + 1 }
  if (info === 31) return { major, info, argument: -1, next: offset + 1 }
  if (info > 27) throw new Error(`reserved additional information ${info} at byte ${offset}`)
  const size = 1 << (info - 24)
  if (offset + 1 + size > bytes.length) throw new Error('unexpected end of input')
  let argument = 0
  for (let i = 0; i < size; i++) argument = argument * 256 + bytes[offset + 1 + i]
  return { major, info, argument, next: offset + 1 + size }
}

function skipItem(bytes: Uint8Array, offset: number, depth: number): number {
  if (depth > MAX_DEPTH) throw new Error('nesting too deep')
  const { major, info, argument, next } = readHead(bytes, offset)
  const indefinite = info === 31
  switch (major) {
    case 0:
    case 1:
      if (indefinite) throw new Error(`indefinite length on an integer at byte ${offset}`)
      return next
    case 2:
    case 3:
      return indefinite ? skipChunks(bytes, next, major) : within(bytes, next + argument)
    case 4:
    case 5: {
      const perEntry = major === MAJOR_MAP ? 2 : 1
      let position = next
      if (indefinite) {
        let items = 0
        for (; bytes[position] !== 0xff; items++) position = skipItem(bytes, position, depth + 1)
        if (items % perEntry !== 0) throw new Error(`a map at byte ${offset} has a key without a value`)
        return position + 1
      }
      for (let i = 0; i < argument * perEntry; i++) position = skipItem(bytes, position, depth + 1)
      return position
    }
    case 6:
      if (indefinite) throw new Error(`indefinite length on a tag at byte ${offset}`)
      return skipItem(bytes, next, depth + 1)
    default:
      if (indefinite) throw new Error(`unexpected break at byte ${offset}`)
      return next
  }
}

function skipChunks(bytes: Uint8Array, offset: number, major: number): number {
  let position = offset
  while (bytes[position] !== 0xff) {
    const chunk = readHead(bytes, position)
    if (chunk.major !== major || chunk.info === 31) throw new Error(`bad chunk in an indefinite-length string at byte ${position}`)
    position = within(bytes, chunk.next + chunk.argument)
  }
  return position + 1
}

function within(bytes: Uint8Array, end: number): number {
  if (end > bytes.length) throw new Error('unexpected end of input')
  return end
}
