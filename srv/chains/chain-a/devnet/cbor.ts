/**
 * Just enough CBOR to find the original bytes of parts of a transaction. The ledger hashes some
 * parts as they were submitted (redeemers and datums for the script data hash, each datum for its
 * hash), so they are sliced from the submitted bytes rather than re-encoded.
 */

interface Head {
  major: number
  /** The argument (length, count or value); null for an indefinite length. */
  argument: number | null
  /** Offset of the first byte after the head. */
  next: number
}

function head(bytes: Uint8Array, offset: number): Head {
  if (offset >= bytes.length) throw new Error('truncated CBOR')
  const major = bytes[offset] >> 5
  const info = bytes[offset] & 0x1f
  if (info < 24) return { major, argument: info, next: offset + 1 }
  if (info === 31) return { major, argument: null, next: offset + 1 }
  const size = info === 24 ? 1 : info === 25 ? 2 : info === 26 ? 4 : info === 27 ? 8 : 0
  if (size === 0 || offset + size >= bytes.length) throw new Error('malformed CBOR')
  let argument = 0
  for (let i = 1; i <= size; i++) argument = argument * 256 + bytes[offset + i]
  return { major, argument, next: offset + 1 + size }
}

/** The offset just after the data item that starts at `offset`. */
export function itemEnd(bytes: Uint8Array, offset: number): number {
  const { major, argument, next } = head(bytes, offset)
  if (major === 0 || major === 1 || major === 7) return next
  if (argument === null) {
    let position = next
    while (bytes[position] !== 0xff) position = itemEnd(bytes, position)
    return position + 1
  }
  if (major === 2 || major === 3) return next + argument
  if (major === 6) return itemEnd(bytes, next)
  const items = major === 5 ? argument * 2 : argument
  let position = next
  for (let i = 0; i < items; i++) position = itemEnd(bytes, position)
  return position
}

/** The raw items of an array, or of a set (an array under tag 258). */
export function arrayItems(bytes: Uint8Array): Uint8Array[] {
  let start = 0
  const tag = head(bytes, 0)
  if (tag.major === 6) start = tag.next
  const { major, argument, next } = head(bytes, start)
  if (major !== 4) throw new Error('not a CBOR array')
  const items: Uint8Array[] = []
  let position = next
  while (argument === null ? bytes[position] !== 0xff : items.length < argument) {
    const end = itemEnd(bytes, position)
    items.push(bytes.subarray(position, end))
    position = end
  }
  return items
}

/** The raw values of a map with unsigned integer keys (a transaction body or witness set). */
export function mapFields(bytes: Uint8Array): Map<number, Uint8Array> {
  const { major, argument, next } = head(bytes, 0)
  if (major !== 5) throw new Error('not a CBOR map')
  const fields = new Map<number, Uint8Array>()
  let position = next
  for (let i = 0; argument === null ? bytes[position] !== 0xff : i < argument; i++) {
    const key = head(bytes, position)
    const valueEnd = itemEnd(bytes, key.next)
    if (key.major === 0 && key.argument !== null) fields.set(key.argument, bytes.subarray(key.next, valueEnd))
    position = valueEnd
  }
  return fields
}

/** CBOR encoding of an integer (major type 0 or 1). */
export function encodeInt(value: number | bigint): Uint8Array {
  const n = BigInt(value)
  return n >= 0n ? encodeHead(0, n) : encodeHead(1, -1n - n)
}

export function encodeHead(major: number, argument: number | bigint): Uint8Array {
  const n = BigInt(argument)
  const prefix = major << 5
  if (n < 24n) return Uint8Array.of(prefix | Number(n))
  const size = n < 0x100n ? 1 : n < 0x10000n ? 2 : n < 0x100000000n ? 4 : 8
  const out = new Uint8Array(1 + size)
  out[0] = prefix | (size === 1 ? 24 : size === 2 ? 25 : size === 4 ? 26 : 27)
  for (let i = 0; i < size; i++) out[size - i] = Number((n >> BigInt(8 * i)) & 0xffn)
  return out
}

export const concatBytes = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts))
