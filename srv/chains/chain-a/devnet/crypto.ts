import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'

/**
 * Hashing, bech32 and seeded randomness for the devnet. Cardano hashes are BLAKE2b with a
 * variable digest length (224 for key hashes, 256 for transactions and blocks, 160 for CIP-14
 * fingerprints), which node:crypto does not offer, so BLAKE2b (RFC 7693) is implemented here.
 */

const MASK = (1n << 64n) - 1n
const IV = [
  0x6a09e667f3bcc908n, 0xbb67ae8584caa73bn, 0x3c6ef372fe94f82bn, 0xa54ff53a5f1d36f1n,
  0x510e527fade682d1n, 0x9b05688c2b3e6c1fn, 0x1f83d9abfb41bd6bn, 0x5be0cd19137e2179n,
]
const SIGMA = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
  [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
  [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
  [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
  [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
  [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
  [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
  [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
  [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
  [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
]

const rotr = (x: bigint, n: bigint) => ((x >> n) | (x << (64n - n))) & MASK

function compress(h: bigint[], block: Uint8Array, counter: bigint, last: boolean) {
  const view = new DataView(block.buffer, block.byteOffset, 128)
  const m = Array.from({ length: 16 }, (_, i) => view.getBigUint64(i * 8, true))
  const v = [...h, ...IV]
  v[12] ^= counter & MASK
  v[13] ^= counter >> 64n
  if (last) v[14] ^= MASK
  const g = (a: number, b: number, c: number, d: number, x: bigint, y: bigint) => {
    v[a] = (v[a] + v[b] + x) & MASK
    v[d] = rotr(v[d] ^ v[a], 32n)
    v[c] = (v[c] + v[d]) & MASK
    v[b] = rotr(v[b] ^ v[c], 24n)
    v[a] = (v[a] + v[b] + y) & MASK
    v[d] = rotr(v[d] ^ v[a], 16n)
    v[c] = (v[c] + v[d]) & MASK
    v[b] = rotr(v[b] ^ v[c], 63n)
  }
  for (let round = 0; round < 12; round++) {
    const s = SIGMA[round % 10]
    g(0, 4, 8, 12, m[s[0]], m[s[1]])
    g(1, 5, 9, 13, m[s[2]], m[s[3]])
    g(2, 6, 10, 14, m[s[4]], m[s[5]])
    g(3, 7, 11, 15, m[s[6]], m[s[7]])
    g(0, 5, 10, 15, m[s[8]], m[s[9]])
    g(1, 6, 11, 12, m[s[10]], m[s[11]])
    g(2, 7, 8, 13, m[s[12]], m[s[13]])
    g(3, 4, 9, 14, m[s[14]], m[s[15]])
  }
  for (let i = 0; i < 8; i++) h[i] ^= v[i] ^ v[i + 8]
}

/** Unkeyed BLAKE2b with a digest of `outLength` bytes (1..64). */
export function blake2b(data: Uint8Array | string, outLength: number): Uint8Array {
  const input = typeof data === 'string' ? new TextEncoder().encode(data) : data
  const h = [...IV]
  h[0] ^= 0x01010000n ^ BigInt(outLength)
  const blocks = Math.max(1, Math.ceil(input.length / 128))
  for (let i = 0; i < blocks; i++) {
    const block = new Uint8Array(128)
    block.set(input.subarray(i * 128, (i + 1) * 128))
    const last = i === blocks - 1
    compress(h, block, BigInt(last ? input.length : (i + 1) * 128), last)
  }
  const out = new Uint8Array(64)
  const view = new DataView(out.buffer)
  h.forEach((word, i) => view.setBigUint64(i * 8, word, true))
  return out.slice(0, outLength)
}

export const blake2b256 = (data: Uint8Array | string) => blake2b(data, 32)
export const blake2b256Hex = (data: Uint8Array | string) => toHex(blake2b256(data))

export const toHex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')
export const fromHex = (hex: string) => new Uint8Array(Buffer.from(hex, 'hex'))
export const isHex = (text: string, bytes?: number) =>
  /^([0-9a-f]{2})*$/i.test(text) && (bytes === undefined || text.length === bytes * 2)

const BECH32_ALPHABET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l'
const BECH32_GENERATORS = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3]

function polymod(values: number[]): number {
  let chk = 1
  for (const value of values) {
    const top = chk >> 25
    chk = ((chk & 0x1ffffff) << 5) ^ value
    BECH32_GENERATORS.forEach((gen, i) => { if ((top >> i) & 1) chk ^= gen })
  }
  return chk
}

/** Bech32 (BIP-173) for payloads CSL has no type for: asset fingerprints and VRF keys. */
export function bech32(prefix: string, bytes: Uint8Array): string {
  const words: number[] = []
  let acc = 0
  let bits = 0
  for (const byte of bytes) {
    acc = (acc << 8) | byte
    bits += 8
    while (bits >= 5) { bits -= 5; words.push((acc >> bits) & 31) }
  }
  if (bits > 0) words.push((acc << (5 - bits)) & 31)
  const expanded = [...prefix].map(c => c.charCodeAt(0) >> 5).concat(0, [...prefix].map(c => c.charCodeAt(0) & 31))
  const mod = polymod([...expanded, ...words, 0, 0, 0, 0, 0, 0]) ^ 1
  const checksum = Array.from({ length: 6 }, (_, i) => (mod >> (5 * (5 - i))) & 31)
  return prefix + '1' + [...words, ...checksum].map(w => BECH32_ALPHABET[w]).join('')
}

/** CIP-14 asset fingerprint: bech32('asset', blake2b-160(policy id ‖ asset name)). */
export const assetFingerprint = (policyId: string, assetNameHex: string) =>
  bech32('asset', blake2b(fromHex(policyId + assetNameHex), 20))

/** 32 bytes derived from the devnet seed for one purpose; everything secret comes from here. */
export const seedBytes = (seed: string, purpose: string) => blake2b256(`${seed}:${purpose}`)

export const deriveKey = (seed: string, purpose: string) => CSL.PrivateKey.from_normal_bytes(seedBytes(seed, purpose))

/** A deterministic pseudo-random source (sfc32) seeded from the devnet seed and a purpose. */
export function seededRandom(seed: string, purpose: string): () => number {
  const view = new DataView(seedBytes(seed, purpose).buffer)
  let [a, b, c, d] = [0, 4, 8, 12].map(offset => view.getUint32(offset))
  return () => {
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0
    const t = (a + b) | 0
    a = b ^ (b >>> 9)
    b = (c + (c << 3)) | 0
    c = (c << 21) | (c >>> 11)
    d = (d + 1) | 0
    const result = (t + d) | 0
    c = (c + result) | 0
    return (result >>> 0) / 4294967296
  }
}
