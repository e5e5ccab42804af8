import { bech32m } from 'bech32'

/**
 * Midnight's unshielded addresses: a 32-byte address in Bech32m (BIP-350) with the prefix
 * `mn_addr_<network id>` (`mn_addr` on mainnet), as the public indexer gives an unshielded output's
 * owner, e.g. `mn_addr_preprod1…`. The devnet's owners are the same 32-byte ids, on the network
 * `undeployed` (Midnight's id of a local chain).
 */

const ADDRESS_BYTES = 32
/** Longer than any address (BIP-350's 90 characters would refuse a long network id). */
const MAX_LENGTH = 200

/** The devnet's network id. */
export const DEVNET_NETWORK_ID = 'undeployed'

const prefixOf = (network: string) => (network === 'mainnet' ? 'mn_addr' : `mn_addr_${network}`)

/** The unshielded address of a 32-byte id (64 hex) on a network. */
export function unshieldedAddress(idHex: string, network: string = DEVNET_NETWORK_ID): string {
  return bech32m.encode(prefixOf(network), bech32m.toWords(Buffer.from(idHex, 'hex')), MAX_LENGTH)
}

/** The network and the 32-byte id (hex) of an unshielded address; undefined when it is not one (a wrong checksum included). */
export function parseUnshieldedAddress(text: string): { network: string; id: string } | undefined {
  // Bech32 also allows an address in upper case; the indexer writes and matches them in lower case only.
  if (typeof text !== 'string' || text.length > MAX_LENGTH || text !== text.toLowerCase()) return undefined
  const decoded = bech32m.decodeUnsafe(text, MAX_LENGTH)
  const network = decoded && /^mn_addr(?:_([a-z0-9-]+))?$/.exec(decoded.prefix)
  const bytes = network ? bech32m.fromWordsUnsafe(decoded.words) : undefined
  if (!network || !bytes || bytes.length !== ADDRESS_BYTES) return undefined
  return { network: network[1] ?? 'mainnet', id: Buffer.from(bytes).toString('hex') }
}
