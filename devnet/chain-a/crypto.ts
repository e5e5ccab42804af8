import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'

/**
 * Hashing, bech32 and seeded randomness for the devnet. Cardano hashes are BLAKE2b with a
 * variable digest length (224 for key hashes, 256 for transactions and blocks, 160 for CIP-14
 * fingerprints), which node:crypto does not offer, so BLAKE2b (RFC 7693) is implemented here.
 */

// BLAKE2b's 64-bit words as pairs of 32-bit halves (low, high): far faster than BigInt arithmetic.
const IV32 = new Uint32Array([
  0xf3bcc908, 0x6a09e667, 0x84caa73b, 0xbb67ae85, 0xfe94f82b, 0x3c6ef372, 0x5f1d36f1, 0xa54ff53a,
  0xade682d1, 0x510e527f, 0x2b3e6c1f, 0x9b05688c, 0xfb41bd6b, 0x1f83d9ab, 0x137e2179, 0x5be0cd19,
])
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
/** Each round's message word indexes, doubled to index the 32-bit halves. */
const SIGMA32 = Array.from({ length: 12 }, (_, round) => SIGMA[round % 10].map(i => i * 2))

const v = new Uint32Array(32)
const m = new Uint32Array(32)

/** v[a] += v[b] (64-bit, as halves). */
function add(a: number, b: number) {
  const low = v[a] + v[b]
  v[a + 1] = v[a + 1] + v[b + 1] + (low >= 0x100000000 ? 1 : 0)
  v[a] = low
}

/** v[a] += the message word at i. */
function addWord(a: number, i: number) {
  const low = v[a] + m[i]
  v[a + 1] = v[a + 1] + m[i + 1] + (low >= 0x100000000 ? 1 : 0)
  v[a] = low
}

/** v[x] = (v[x] ^ v[y]) rotated right by n bits (0 < n < 32), or by 32 + n' when swapped. */
function xorRotate(x: number, y: number, n: number) {
  const low = v[x] ^ v[y]
  const high = v[x + 1] ^ v[y + 1]
  if (n === 32) {
    v[x] = high
    v[x + 1] = low
  } else if (n < 32) {
    v[x] = (low >>> n) | (high << (32 - n))
    v[x + 1] = (high >>> n) | (low << (32 - n))
  } else {
    const k = n - 32
    v[x] = (high >>> k) | (low << (32 - k))
    v[x + 1] = (low >>> k) | (high << (32 - k))
  }
}

function g(a: number, b: number, c: number, d: number, x: number, y: number) {
  add(a, b); addWord(a, x); xorRotate(d, a, 32)
  add(c, d); xorRotate(b, c, 24)
  add(a, b); addWord(a, y); xorRotate(d, a, 16)
  add(c, d); xorRotate(b, c, 63)
}

function compress(h: Uint32Array, block: Uint8Array, counter: number, last: boolean) {
  for (let i = 0; i < 16; i++) {
    v[i] = h[i]
    v[i + 16] = IV32[i]
  }
  v[24] ^= counter >>> 0
  v[25] ^= Math.floor(counter / 0x100000000)
  if (last) {
    v[28] = ~v[28]
    v[29] = ~v[29]
  }
  for (let i = 0; i < 32; i++) m[i] = block[4 * i] | (block[4 * i + 1] << 8) | (block[4 * i + 2] << 16) | (block[4 * i + 3] << 24)
  for (const s of SIGMA32) {
    g(0, 8, 16, 24, s[0], s[1])
    g(2, 10, 18, 26, s[2], s[3])
    g(4, 12, 20, 28, s[4], s[5])
    g(6, 14, 22, 30, s[6], s[7])
    g(0, 10, 20, 30, s[8], s[9])
    g(2, 12, 22, 24, s[10], s[11])
    g(4, 14, 16, 26, s[12], s[13])
    g(6, 8, 18, 28, s[14], s[15])
  }
  for (let i = 0; i < 16; i++) h[i] ^= v[i] ^ v[i + 16]
}

/** Unkeyed BLAKE2b with a digest of `outLength` bytes (1..64). */
export function blake2b(data: Uint8Array | string, outLength: number): Uint8Array {
  const input = typeof data === 'string' ? new TextEncoder().encode(data) : data
  const h = IV32.slice()
  h[0] ^= 0x01010000 ^ outLength
  const blocks = Math.max(1, Math.ceil(input.length / 128))
  const block = new Uint8Array(128)
  for (let i = 0; i < blocks; i++) {
    block.fill(0)
    block.set(input.subarray(i * 128, (i + 1) * 128))
    const last = i === blocks - 1
    compress(h, block, last ? input.length : (i + 1) * 128, last)
  }
  const out = new Uint8Array(outLength)
  for (let i = 0; i < outLength; i++) out[i] = h[i >> 2] >>> (8 * (i & 3))
  return out
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
