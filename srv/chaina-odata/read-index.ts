import cds from '@sap/cds'
import { Accounts } from '#cds-models/chaina'
import type { ChainAIndex } from './indexer.ts'
import {
  parseAddress, parseAssetUnit, parseBlockHash, parseDrepId, parseEpoch, parseOutputIndex, parsePoolId, parseStakeAddress, parseTxHash,
} from '../chains/chain-a/identifiers.ts'

/**
 * Which index work an OData read needs before the database answers it. A read names its data by
 * key predicates (`Transactions('…')`, `Transactions('…')/inputs`) or by equality filters
 * (`AddressUTxOs?$filter=address eq '…'`); those "pinned" values pick the keys to index.
 */

const { SELECT } = cds.ql

type Pins = Record<string, any>
type Step = (index: ChainAIndex, pins: Pins) => Promise<unknown> | undefined

const has = (pins: Pins, name: string) => pins[name] !== undefined && pins[name] !== null

const transactionOf: Step = (index, pins) => (has(pins, 'txHash') ? index.transaction(parseTxHash(pins.txHash, 'txHash')) : undefined)
const addressOf: Step = (index, pins) => (has(pins, 'address') ? index.address(parseAddress(pins.address, index.network)) : undefined)

const utxoOf: Step = async (index, pins) => {
  if (has(pins, 'address')) return addressOf(index, pins)
  if (has(pins, 'txHash') && has(pins, 'outputIndex')) return index.utxo(parseTxHash(pins.txHash, 'txHash'), parseOutputIndex(pins.outputIndex))
}

/** The index step per entity set, given what the request pins. */
export const INDEX_STEPS: Record<string, Step> = {
  NetworkInformation: index => index.networkInformation(),
  Blocks: (index, pins) => (has(pins, 'hash') ? index.block(parseBlockHash(pins.hash)) : index.tip()),
  Epochs: (index, pins) => (has(pins, 'epoch') ? index.epoch(parseEpoch(pins.epoch)) : index.latestEpoch()),
  Transactions: (index, pins) => (has(pins, 'hash') ? index.transaction(parseTxHash(pins.hash)) : undefined),
  TransactionInputs: transactionOf,
  TransactionOutputs: transactionOf,
  TransactionInputAssets: transactionOf,
  TransactionOutputAssets: transactionOf,
  TransactionMetadata: transactionOf,
  Addresses: addressOf,
  AddressAssets: addressOf,
  AddressUTxOs: utxoOf,
  UTxOAssets: utxoOf,
  AddressTransactions: (index, pins) => (has(pins, 'address') ? index.addressTransactions(parseAddress(pins.address, index.network)) : undefined),
  Accounts: (index, pins) => (has(pins, 'stakeAddress') ? index.account(parseStakeAddress(pins.stakeAddress, index.network)) : undefined),
  Pools: (index, pins) => (has(pins, 'poolId') ? index.pool(parsePoolId(pins.poolId)) : undefined),
  Dreps: (index, pins) => (has(pins, 'drepId') ? index.drep(parseDrepId(pins.drepId)) : undefined),
  LedgerProtocolParameters: (index, pins) => (has(pins, 'epoch') ? index.parameters(parseEpoch(pins.epoch)) : index.parameters()),
  AssetHistory: (index, pins) => (has(pins, 'unit') ? index.assetHistory(parseAssetUnit(pins.unit)) : undefined),
}

/** The pool or DRep an indexed account delegates to. */
const delegateOf = (kind: 'poolId' | 'drepId'): Step => async (index, pins) => {
  if (!has(pins, 'stakeAddress')) return
  const account = await SELECT.one.from(Accounts).columns(kind).where({ stakeAddress: pins.stakeAddress })
  const id = account?.[kind]
  if (id) return kind === 'poolId' ? index.pool(id) : index.drep(id)
}

/** Navigations and expands whose target needs more than the parent's own index step. */
const NAVIGATION_STEPS: Record<string, Record<string, Step>> = {
  Transactions: { block: (index, pins) => (has(pins, 'hash') ? index.blockOf(parseTxHash(pins.hash)) : undefined) },
  Addresses: { transactions: (index, pins) => INDEX_STEPS.AddressTransactions(index, pins) },
  Epochs: { parameters: (index, pins) => INDEX_STEPS.LedgerProtocolParameters(index, pins) },
  Accounts: { pool: delegateOf('poolId'), drep: delegateOf('drepId') },
}

/** Runs the index steps a READ request needs: its path segments, then its top-level filter. */
export async function indexForRead(index: ChainAIndex, query: any, targetName: string): Promise<void> {
  const segments: any[] = query.SELECT.from.ref ?? []
  const [first, navigation] = segments
  const firstEntity = localName(typeof first === 'string' ? first : first.id)
  const keyPins = typeof first === 'object' && first.where ? equalities(first.where) : {}
  const filterPins = segments.length === 1 && query.SELECT.where ? equalities(query.SELECT.where) : {}

  if (segments.length > 1) {
    await INDEX_STEPS[firstEntity]?.(index, keyPins)
    await NAVIGATION_STEPS[firstEntity]?.[navigation]?.(index, keyPins)
    return
  }
  await INDEX_STEPS[localName(targetName)]?.(index, { ...filterPins, ...keyPins })
  for (const expanded of expandedNames(query.SELECT.columns)) await NAVIGATION_STEPS[firstEntity]?.[expanded]?.(index, { ...filterPins, ...keyPins })
}

export const localName = (name: string) => name.slice(name.lastIndexOf('.') + 1)

/** `a = 'x' and b = 1` → { a: 'x', b: 1 }; any `or` makes the filter pin nothing. */
export function equalities(where: any[]): Pins {
  if (where.includes('or')) return {}
  const pins: Pins = {}
  for (let i = 0; i + 2 < where.length; i++) {
    const [left, op, right] = [where[i], where[i + 1], where[i + 2]]
    if (op !== '=' && op !== '==') continue
    if (left?.ref && right && 'val' in right) pins[left.ref[left.ref.length - 1]] = right.val
    else if (right?.ref && left && 'val' in left) pins[right.ref[right.ref.length - 1]] = left.val
  }
  return pins
}

function expandedNames(columns: any[] | undefined): string[] {
  return (columns ?? []).filter(column => column?.expand && column.ref).map(column => column.ref[0])
}
