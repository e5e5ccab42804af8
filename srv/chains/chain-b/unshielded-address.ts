/**
 * Midnight's unshielded addresses: a 32-byte address in Bech32m (BIP-350) with the prefix
 * `mn_addr_<network id>` (`mn_addr` on mainnet), as the public indexer gives an unshielded output's
 * owner, e.g. `mn_addr_preprod1…`. The devnet's owners are the same 32-byte ids, on the network
 * `undeployed` (Midnight's id of a local chain).
 */

const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l'
const BECH32M_CONSTANT = 0x2bc830a3
const GENERATOR = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3]
const ADDRESS_BYTES = 32

/** The devnet's network id. */
export const DEVNET_NETWORK_ID = 'undeployed'

function polymod(values: number[]): number {
  let checksum = 1
  for (const value of values) {
    const top = checksum >>> 25
    checksum = ((checksum & 0x1ffffff) << 5) ^ value
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) checksum ^= GENERATOR[i]
  }
  return checksum >>> 0
}

const expandPrefix = (prefix: string) => [...prefix].map(c => c.charCodeAt(0) >> 5).concat(0, [...prefix].map(c => c.charCodeAt(0) & 31))

/** Regroups bits (8 to 5 when encoding, 5 to 8 when decoding); undefined when the padding is not zeros. */
function regroup(values: ArrayLike<number>, from: number, to: number, pad: boolean): number[] | undefined {
  let accumulator = 0
  let bits = 0
  const out: number[] = []
  for (let i = 0; i < values.length; i++) {
    accumulator = (accumulator << from) | values[i]
    bits += from
    while (bits >= to) {
      bits -= to
      out.push((accumulator >> bits) & ((1 << to) - 1))
    }
    accumulator &= (1 << bits) - 1
  }
  if (pad && bits > 0) out.push((accumulator << (to - bits)) & ((1 << to) - 1))
  else if (!pad && (bits >= from || accumulator)) return undefined
  return out
}

const prefixOf = (network: string) => (network === 'mainnet' ? 'mn_addr' : `mn_addr_${network}`)

/** The unshielded address of a 32-byte id (64 hex) on a network. */
export function unshieldedAddress(idHex: string, network: string = DEVNET_NETWORK_ID): string {
  const prefix = prefixOf(network)
  const data = regroup(Buffer.from(idHex, 'hex'), 8, 5, true)!
  const checksum = polymod([...expandPrefix(prefix), ...data, 0, 0, 0, 0, 0, 0]) ^ BECH32M_CONSTANT
  const checksumWords = Array.from({ length: 6 }, (_, i) => (checksum >>> (5 * (5 - i))) & 31)
  return `${prefix}1${[...data, ...checksumWords].map(word => CHARSET[word]).join('')}`
}

/** The network and the 32-byte id (hex) of an unshielded address; undefined when it is not one (a wrong checksum included). */
export function parseUnshieldedAddress(text: string): { network: string; id: string } | undefined {
  if (typeof text !== 'string' || text.length > 200 || text !== text.toLowerCase()) return undefined
  const separator = text.lastIndexOf('1')
  const prefix = text.slice(0, separator)
  const match = /^mn_addr(?:_([a-z0-9-]+))?$/.exec(prefix)
  if (!match) return undefined
  const words = [...text.slice(separator + 1)].map(c => CHARSET.indexOf(c))
  if (words.length < 6 || words.includes(-1)) return undefined
  if (polymod([...expandPrefix(prefix), ...words]) !== BECH32M_CONSTANT) return undefined
  const bytes = regroup(words.slice(0, -6), 5, 8, false)
  if (!bytes || bytes.length !== ADDRESS_BYTES) return undefined
  return { network: match[1] ?? 'mainnet', id: Buffer.from(bytes).toString('hex') }
}
