import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { addressText } from '../../../srv/chains/chain-a/csl.ts'
import { blake2b, toHex } from '../crypto.ts'
import type { Output } from '../types.ts'

/**
 * Kupo's patterns (https://cardanosolutions.github.io/kupo/#section/Patterns) as the devnet reads
 * them for GET /matches/{pattern}: the wildcard, an address (bech32, base58 or base16), a stake
 * address, two credentials around a `/` (each a key, a key hash or a script hash, hex or bech32, or
 * `*`), an output reference `{index|*}@{transaction id}` and an asset id `{policy id}.{name|*}`.
 * A metadata tag `{n}` is a pattern for indexing only, so a query with it is refused as Kupo does.
 */

export type Pattern =
  | { kind: 'any' }
  | { kind: 'shelley' }
  | { kind: 'address'; address: string }
  | { kind: 'credentials'; payment: string | null; delegation: string | null }
  | { kind: 'output'; txHash: string; index: number | null }
  | { kind: 'asset'; policyId: string; assetName: string | null }

const HEX = /^[0-9a-fA-F]*$/
const KEY_PREFIXES = new Set(['vk', 'addr_vk', 'stake_vk'])
const HASH_PREFIXES = new Set(['vkh', 'addr_vkh', 'stake_vkh', 'script'])

/** The pattern a text stands for, or undefined when it is none Kupo accepts for querying. */
export function parsePattern(text: string): Pattern | undefined {
  if (text === '*') return { kind: 'any' }
  if (text.includes('@')) return outputPattern(text)
  if (text.includes('/')) return credentialsPattern(text)
  if (text.includes('.')) return assetPattern(text)
  return addressPattern(text)
}

function outputPattern(text: string): Pattern | undefined {
  const match = /^(\*|\d{1,5})@([0-9a-fA-F]{64})$/.exec(text)
  if (!match) return undefined
  const index = match[1] === '*' ? null : Number(match[1])
  if (index !== null && index > 65535) return undefined
  return { kind: 'output', txHash: match[2].toLowerCase(), index }
}

function assetPattern(text: string): Pattern | undefined {
  const match = /^([0-9a-fA-F]{56})\.(\*|[0-9a-fA-F]{0,64})$/.exec(text)
  if (!match || (match[2] !== '*' && match[2].length % 2 !== 0)) return undefined
  return { kind: 'asset', policyId: match[1].toLowerCase(), assetName: match[2] === '*' ? null : match[2].toLowerCase() }
}

function credentialsPattern(text: string): Pattern | undefined {
  const parts = text.split('/')
  if (parts.length !== 2) return undefined
  const [payment, delegation] = parts.map(part => (part === '*' ? null : credentialHash(part)))
  if (payment === undefined || delegation === undefined) return undefined
  if (payment === null && delegation === null) return { kind: 'shelley' }
  return { kind: 'credentials', payment, delegation }
}

/** The 28-byte hash a credential names, in hex: keys are hashed (blake2b-224), hashes taken as they are. */
export function credentialHash(text: string): string | undefined {
  if (HEX.test(text) && text.length === 56) return text.toLowerCase()
  if (HEX.test(text) && text.length === 64) return toHex(blake2b(Buffer.from(text, 'hex'), 28))
  const decoded = bech32Decode(text)
  if (!decoded) return undefined
  if (KEY_PREFIXES.has(decoded.prefix) && decoded.bytes.length === 32) return toHex(blake2b(decoded.bytes, 28))
  if (HASH_PREFIXES.has(decoded.prefix) && decoded.bytes.length === 28) return toHex(decoded.bytes)
  return undefined
}

function addressPattern(text: string): Pattern | undefined {
  const address = decodeAnyAddress(text)
  if (!address) return undefined
  const reward = CSL.RewardAddress.from_address(address)
  // A stake address stands for every address whose delegation part is its credential.
  if (reward) return { kind: 'credentials', payment: null, delegation: credentialHex(reward.payment_cred()) }
  return { kind: 'address', address: addressText(address) }
}

/** An address in bech32, base58 (Byron) or base16 (its bytes); undefined when malformed. */
function decodeAnyAddress(text: string): CSL.Address | undefined {
  try {
    if (/^(addr|stake)(_test)?1/.test(text)) return CSL.Address.from_bech32(text)
    if (HEX.test(text) && text.length >= 2 && text.length % 2 === 0) return CSL.Address.from_bytes(Buffer.from(text, 'hex'))
    if (CSL.ByronAddress.is_valid(text)) return CSL.ByronAddress.from_base58(text).to_address()
  } catch {
    return undefined
  }
  return undefined
}

const credentialHex = (credential: CSL.Credential) => (credential.to_keyhash() ?? credential.to_scripthash())!.to_hex()

interface AddressParts {
  shelley: boolean
  payment: string | null
  delegation: string | null
}

const partsCache = new Map<string, AddressParts>()

/** The payment and delegation credentials of an output's address (hashes in hex), cached per address. */
export function addressParts(address: string): AddressParts {
  let parts = partsCache.get(address)
  if (parts) return parts
  parts = { shelley: false, payment: null, delegation: null }
  try {
    const decoded = /^(addr|stake)(_test)?1/.test(address) ? CSL.Address.from_bech32(address) : undefined
    if (decoded) {
      const payment = decoded.payment_cred()
      const base = CSL.BaseAddress.from_address(decoded)
      parts = { shelley: true, payment: payment ? credentialHex(payment) : null, delegation: base ? credentialHex(base.stake_cred()) : null }
    }
  } catch { /* an address the devnet could not decode stays unmatched by credentials */ }
  if (partsCache.size > 10_000) partsCache.clear()
  partsCache.set(address, parts)
  return parts
}

/** Whether an output (on chain, spent or not) matches the pattern. */
export function matches(pattern: Pattern, output: Output): boolean {
  switch (pattern.kind) {
    case 'any': return true
    case 'shelley': return addressParts(output.address).shelley
    case 'address': return output.address === pattern.address
    case 'credentials': {
      const parts = addressParts(output.address)
      if (!parts.shelley) return false
      return (pattern.payment === null || parts.payment === pattern.payment) && (pattern.delegation === null || parts.delegation === pattern.delegation)
    }
    case 'output': return output.txHash === pattern.txHash && (pattern.index === null || output.index === pattern.index)
    case 'asset': return hasAsset(output, pattern.policyId, pattern.assetName)
  }
}

/** Whether the output holds some of the policy's assets (of the one asset name, when given). */
export function hasAsset(output: Output, policyId: string, assetName: string | null): boolean {
  if (assetName !== null) return (output.value.assets.get(policyId + assetName) ?? 0n) > 0n
  for (const unit of output.value.assets.keys()) if (unit.startsWith(policyId)) return true
  return false
}

// ---- bech32 -----------------------------------------------------------------------------

const ALPHABET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l'
const GENERATORS = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3]

function polymod(values: number[]): number {
  let chk = 1
  for (const value of values) {
    const top = chk >> 25
    chk = ((chk & 0x1ffffff) << 5) ^ value
    GENERATORS.forEach((generator, i) => { if ((top >> i) & 1) chk ^= generator })
  }
  return chk
}

/** A bech32 string's prefix and payload, or undefined when it is not valid bech32 (checksum included). */
export function bech32Decode(text: string): { prefix: string; bytes: Uint8Array } | undefined {
  if (text !== text.toLowerCase() || text.length > 1023) return undefined
  const separator = text.lastIndexOf('1')
  if (separator < 1 || text.length - separator < 7) return undefined
  const prefix = text.slice(0, separator)
  const words: number[] = []
  for (const char of text.slice(separator + 1)) {
    const word = ALPHABET.indexOf(char)
    if (word < 0) return undefined
    words.push(word)
  }
  const expanded = [...prefix].map(c => c.charCodeAt(0) >> 5).concat(0, [...prefix].map(c => c.charCodeAt(0) & 31))
  if (polymod([...expanded, ...words]) !== 1) return undefined
  const bytes: number[] = []
  let acc = 0
  let bits = 0
  for (const word of words.slice(0, -6)) {
    acc = ((acc << 5) | word) & 0xfff
    bits += 5
    if (bits >= 8) {
      bits -= 8
      bytes.push((acc >> bits) & 0xff)
    }
  }
  if (bits >= 5 || (acc & ((1 << bits) - 1)) !== 0) return undefined
  return { prefix, bytes: Uint8Array.from(bytes) }
}
