import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { badInput } from '../../lib/errors.ts'
import { decodeAddress, networkIdOf, parsePaymentAddress, parseRewardAddress } from './csl.ts'

/**
 * Validation and normalisation of chain-A identifiers arriving from callers. Each `parse…`
 * answers the canonical form or throws a 400 ApiError whose code names the problem.
 */

const HEX64 = /^[0-9a-fA-F]{64}$/
const HEX56 = /^[0-9a-fA-F]{56}$/
const ASSET_UNIT = /^[0-9a-fA-F]{56}(?:[0-9a-fA-F]{2}){0,32}$/

export { networkIdOf }

function requireString(value: unknown, code: string, what: string, target: string): string {
  if (typeof value !== 'string' || value.length === 0) throw badInput(code, `${what} is required`, target)
  return value.trim()
}

export function parseTxHash(value: unknown, target = 'hash'): string {
  const text = requireString(value, 'INVALID_TX_HASH', 'A transaction hash', target)
  if (!HEX64.test(text)) throw badInput('INVALID_TX_HASH', `'${clip(text)}' is not a transaction hash: expected 64 hexadecimal characters`, target)
  return text.toLowerCase()
}

export function parseBlockHash(value: unknown, target = 'hash'): string {
  const text = requireString(value, 'INVALID_BLOCK_HASH', 'A block hash', target)
  if (!HEX64.test(text)) throw badInput('INVALID_BLOCK_HASH', `'${clip(text)}' is not a block hash: expected 64 hexadecimal characters`, target)
  return text.toLowerCase()
}

export function parseOutputIndex(value: unknown, target = 'outputIndex'): number {
  const index = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value
  if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index > 65535)
    throw badInput('INVALID_OUTPUT_INDEX', `'${String(value)}' is not an output index: expected an integer from 0 to 65535`, target)
  return index
}

export function parseEpoch(value: unknown, target = 'epoch'): number {
  const epoch = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value
  if (typeof epoch !== 'number' || !Number.isInteger(epoch) || epoch < 0 || epoch > 1_000_000)
    throw badInput('INVALID_EPOCH', `'${String(value)}' is not an epoch number`, target)
  return epoch
}

/** A payment address (bech32 `addr…`/`addr_test…`) on the deployment's network. */
export function parseAddress(value: unknown, network: string, target = 'address'): string {
  return parsePaymentAddress(requireString(value, 'INVALID_ADDRESS', 'An address', target), networkIdOf(network), target)
}

/** A stake (reward) address, bech32 `stake…`/`stake_test…`, on the deployment's network. */
export function parseStakeAddress(value: unknown, network: string, target = 'stakeAddress'): string {
  return parseRewardAddress(requireString(value, 'INVALID_STAKE_ADDRESS', 'A stake address', target), networkIdOf(network), target)
}

/** A pool id as bech32 `pool1…` or 56 hex characters; answers the bech32 form. */
export function parsePoolId(value: unknown, target = 'poolId'): string {
  const text = requireString(value, 'INVALID_POOL_ID', 'A pool id', target)
  try {
    if (HEX56.test(text)) return CSL.Ed25519KeyHash.from_hex(text.toLowerCase()).to_bech32('pool')
    if (text.startsWith('pool1')) return CSL.Ed25519KeyHash.from_bech32(text).to_bech32('pool')
  } catch {
    // falls through to the error below
  }
  throw badInput('INVALID_POOL_ID', `'${clip(text)}' is not a pool id: expected pool1… or 56 hexadecimal characters`, target)
}

/** A DRep id: bech32 `drep1…` (CIP-129), `drep_vkh1…`/`drep_script1…` (CIP-105); answers it as given. */
export function parseDrepId(value: unknown, target = 'drepId'): string {
  const text = requireString(value, 'INVALID_DREP_ID', 'A DRep id', target)
  try {
    if (/^drep(_vkh|_script)?1/.test(text)) {
      CSL.DRep.from_bech32(text)
      return text
    }
  } catch {
    // falls through to the error below
  }
  throw badInput('INVALID_DREP_ID', `'${clip(text)}' is not a DRep id: expected drep1… (CIP-129) or drep_vkh1…/drep_script1… (CIP-105)`, target)
}

/** An asset unit: policy id (56 hex) followed by an asset name of up to 32 bytes in hex. */
export function parseAssetUnit(value: unknown, target = 'unit'): string {
  const text = requireString(value, 'INVALID_ASSET_UNIT', 'An asset unit', target)
  if (!ASSET_UNIT.test(text))
    throw badInput('INVALID_ASSET_UNIT', `'${clip(text)}' is not an asset unit: expected a 56-hex policy id followed by up to 64 hex characters of asset name`, target)
  return text.toLowerCase()
}

/** The shape of a payment address: base, enterprise, pointer or byron, and whether a script pays. */
export function describeAddress(text: string): { type: string; isScript: boolean } {
  const address = decodeAddress(text)
  if (!address) return { type: 'unknown', isScript: false }
  const type = ADDRESS_TYPES[address.kind()] ?? 'unknown'
  const isScript = address.payment_cred()?.kind() === CSL.CredKind.Script
  return { type, isScript }
}

const ADDRESS_TYPES: Record<number, string> = {
  [CSL.AddressKind.Base]: 'base',
  [CSL.AddressKind.Pointer]: 'pointer',
  [CSL.AddressKind.Enterprise]: 'enterprise',
  [CSL.AddressKind.Reward]: 'reward',
  [CSL.AddressKind.Byron]: 'byron',
}

const clip = (text: string) => (text.length > 120 ? text.slice(0, 117) + '...' : text)
