import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { addressText, decodeAddress, paymentCredentialOf } from '../../srv/chains/chain-a/csl.ts'
import { GENESIS } from './params.ts'

/** The devnet's addresses and ids: stake addresses on its network, pool and DRep ids, and parsing them from the API's paths. */

export { addressText, paymentCredentialOf }

export const stakeAddressOf = (credential: CSL.Credential) =>
  CSL.RewardAddress.new(GENESIS.networkId, credential).to_address().to_bech32()

export const stakeAddressOfKey = (key: CSL.PrivateKey) =>
  stakeAddressOf(CSL.Credential.from_keyhash(key.to_public().hash()))

export function baseAddress(payment: CSL.PrivateKey, stake: CSL.PrivateKey): string {
  return CSL.BaseAddress.new(
    GENESIS.networkId,
    CSL.Credential.from_keyhash(payment.to_public().hash()),
    CSL.Credential.from_keyhash(stake.to_public().hash()),
  ).to_address().to_bech32()
}

/** A payment address in text form (bech32 `addr…` or Byron base58); undefined when malformed. */
export function parseAddress(text: string): CSL.Address | undefined {
  return /^stake(_test)?1/.test(text) ? undefined : decodeAddress(text)
}

export function parseStakeAddress(text: string): CSL.RewardAddress | undefined {
  const address = /^stake(_test)?1/.test(text) ? decodeAddress(text) : undefined
  return address && CSL.RewardAddress.from_address(address)
}

/** The reward address that a base address delegates its stake to, if any. */
export function stakeAddressOfAddress(address: CSL.Address): string | null {
  const base = CSL.BaseAddress.from_address(address)
  return base ? stakeAddressOf(base.stake_cred()) : null
}

export const poolIdOf = (hex: string) => CSL.Ed25519KeyHash.from_hex(hex).to_bech32('pool')

/** CIP-105 DRep id: bech32 'drep' over the 28-byte key hash. */
export const drepIdOf = (hex: string) => CSL.Ed25519KeyHash.from_hex(hex).to_bech32('drep')

/** The hex key hash of a pool id given as bech32 (`pool1…`) or hex; undefined when malformed. */
export function parsePoolId(text: string): string | undefined {
  if (/^[0-9a-f]{56}$/i.test(text)) return text.toLowerCase()
  return text.startsWith('pool1') ? attempt(() => CSL.Ed25519KeyHash.from_bech32(text).to_hex()) : undefined
}

/** The hex key hash of a DRep id: CIP-105 (`drep1` + key hash), CIP-129 (with header byte) or hex. */
export function parseDrepId(text: string): string | undefined {
  if (/^[0-9a-f]{56}$/i.test(text)) return text.toLowerCase()
  if (!/^drep(_vkh)?1/.test(text)) return undefined
  return attempt(() => CSL.Ed25519KeyHash.from_bech32(text).to_hex()) ?? attempt(() => CSL.DRep.from_bech32(text).to_key_hash()?.to_hex())
}

function attempt<T>(parse: () => T): T | undefined {
  try {
    return parse()
  } catch {
    return undefined
  }
}
