import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { arrayItems } from '../../../srv/chains/chain-a/cbor.ts'
import { listOf, sortedRefs } from '../../../srv/chains/chain-a/csl.ts'
import { blake2b256Hex, toHex } from '../crypto.ts'
import type { Ledger } from '../ledger.ts'
import type { Block, Output, TxRecord } from '../types.ts'

/**
 * The ledger's records in Kupo's JSON shapes (v2.12): matches, points, datums, scripts and
 * metadata, with what Kupo keeps beside the outputs (datums and scripts seen on chain, the redeemer
 * of each spend), read from the transactions' submitted bytes.
 */

export type Language = 'native' | 'plutus:v1' | 'plutus:v2' | 'plutus:v3'
export interface Script { language: Language; script: string }

/** A transaction's witness-set datums and scripts, the redeemers of its spends and its metadata. */
interface TxExtras {
  datums: Map<string, string>
  scripts: Map<string, Script>
  /** Spend redeemers by the index of the input among the sorted inputs. */
  spendRedeemers: Map<number, string>
  /** The auxiliary data as submitted (hex), or null. */
  auxiliaryData: string | null
}

const PLUTUS_LANGUAGES: Record<number, Language> = {
  [CSL.LanguageKind.PlutusV1]: 'plutus:v1',
  [CSL.LanguageKind.PlutusV2]: 'plutus:v2',
  [CSL.LanguageKind.PlutusV3]: 'plutus:v3',
}

const extrasCache = new WeakMap<TxRecord, TxExtras>()

export function txExtras(tx: TxRecord): TxExtras {
  let extras = extrasCache.get(tx)
  if (!extras) {
    extras = tx.cbor ? decodeExtras(tx.cbor) : { datums: new Map(), scripts: new Map(), spendRedeemers: new Map(), auxiliaryData: null }
    extrasCache.set(tx, extras)
  }
  return extras
}

function decodeExtras(bytes: Uint8Array): TxExtras {
  const fixed = CSL.FixedTransaction.from_bytes(bytes)
  const witnesses = fixed.witness_set()
  const datums = new Map<string, string>()
  for (const datum of listOf(witnesses.plutus_data())) {
    const hex = datum.to_hex()
    datums.set(blake2b256Hex(Buffer.from(hex, 'hex')), hex)
  }
  const scripts = new Map<string, Script>()
  for (const script of listOf(witnesses.native_scripts())) scripts.set(script.hash().to_hex(), { language: 'native', script: script.to_hex() })
  for (const script of listOf(witnesses.plutus_scripts())) {
    scripts.set(script.hash().to_hex(), { language: PLUTUS_LANGUAGES[script.language_version().kind()], script: toHex(script.bytes()) })
  }
  const spendRedeemers = new Map<number, string>()
  for (const redeemer of listOf(witnesses.redeemers())) {
    if (redeemer.tag().kind() === CSL.RedeemerTagKind.Spend) spendRedeemers.set(Number(redeemer.index().to_str()), redeemer.data().to_hex())
  }
  const auxiliary = arrayItems(bytes)[3]
  return { datums, scripts, spendRedeemers, auxiliaryData: auxiliary && auxiliary[0] !== 0xf6 ? toHex(auxiliary) : null }
}

/** The script of an output's script reference (CSL's hex of the tag-24 wrapped script). */
function referenceScript(hex: string): Script {
  const ref = CSL.ScriptRef.from_hex(hex)
  const plutus = ref.plutus_script()
  if (plutus) return { language: PLUTUS_LANGUAGES[plutus.language_version().kind()], script: toHex(plutus.bytes()) }
  return { language: 'native', script: ref.native_script()!.to_hex() }
}

/** The datum hash of an output: the declared one, or the hash of its inline datum. */
export const datumHashOfOutput = (output: Output) =>
  output.dataHash ?? (output.inlineDatum ? blake2b256Hex(Buffer.from(output.inlineDatum, 'hex')) : null)

/** Datums and scripts seen on the current chain, by hash; rebuilt when the chain changes. */
interface Store {
  key: string
  datums: Map<string, string>
  scripts: Map<string, Script>
}

const stores = new WeakMap<Ledger, Store>()

export function store(ledger: Ledger): Store {
  const key = `${ledger.tip.hash}:${ledger.txs.size}:${ledger.outputs.size}`
  const known = stores.get(ledger)
  if (known?.key === key) return known
  const datums = new Map<string, string>()
  const scripts = new Map<string, Script>()
  for (const tx of ledger.txs.values()) {
    const extras = txExtras(tx)
    for (const [hash, datum] of extras.datums) datums.set(hash, datum)
    for (const [hash, script] of extras.scripts) scripts.set(hash, script)
  }
  for (const output of ledger.outputs.values()) {
    if (output.inlineDatum) datums.set(datumHashOfOutput(output)!, output.inlineDatum)
    if (output.referenceScript && output.referenceScriptHash && !scripts.has(output.referenceScriptHash)) {
      scripts.set(output.referenceScriptHash, referenceScript(output.referenceScript))
    }
  }
  const fresh = { key, datums, scripts }
  stores.set(ledger, fresh)
  return fresh
}

// ---- matches ------------------------------------------------------------------------------

export const pointJson = (block: Block) => ({ slot_no: block.slot, header_hash: block.hash })

/** Where an output was spent: the block and transaction, the input's index among the sorted inputs, and its redeemer. */
export function spentAtJson(ledger: Ledger, output: Output) {
  if (!output.spentBy) return null
  const tx = ledger.txs.get(output.spentBy)!
  const block = ledger.block(tx.included.blockHash)!
  // A transaction whose scripts failed spent its collateral: no redeemer runs for it.
  const inputs = tx.validContract ? sortedRefs(tx.inputs) : sortedRefs(tx.collateral)
  const inputIndex = inputs.indexOf(output.ref)
  const redeemer = tx.validContract ? (txExtras(tx).spendRedeemers.get(inputIndex) ?? null) : null
  return { ...pointJson(block), transaction_id: tx.hash, input_index: inputIndex, redeemer }
}

export function valueJson(output: Output, quantity: (n: bigint) => bigint | string) {
  const assets: Record<string, bigint | string> = {}
  const units = [...output.value.assets.keys()].sort()
  for (const unit of units) assets[unit.length > 56 ? `${unit.slice(0, 56)}.${unit.slice(56)}` : unit] = quantity(output.value.assets.get(unit)!)
  return { coins: quantity(output.value.coin), assets }
}

export interface MatchOptions {
  resolveHashes: boolean
  quantitiesAsStrings: boolean
}

export function matchJson(ledger: Ledger, output: Output, options: MatchOptions) {
  const tx = ledger.txs.get(output.txHash)!
  const block = ledger.block(output.blockHash)!
  const datumHash = datumHashOfOutput(output)
  const known = options.resolveHashes ? store(ledger) : undefined
  return {
    transaction_index: tx.included.index,
    transaction_id: output.txHash,
    output_index: output.index,
    address: output.address,
    value: valueJson(output, options.quantitiesAsStrings ? n => String(n) : n => n),
    datum_hash: datumHash,
    ...(datumHash ? { datum_type: output.inlineDatum ? 'inline' : 'hash' } : {}),
    ...(known ? { datum: datumHash ? (known.datums.get(datumHash) ?? null) : null } : {}),
    script_hash: output.referenceScriptHash,
    ...(known ? { script: output.referenceScriptHash ? (known.scripts.get(output.referenceScriptHash) ?? null) : null } : {}),
    created_at: pointJson(block),
    spent_at: spentAtJson(ledger, output),
  }
}

// ---- metadata -----------------------------------------------------------------------------

type Metadatum = { int: bigint } | { string: string } | { bytes: string } | { list: Metadatum[] } | { map: { k: Metadatum; v: Metadatum }[] }

function metadatumJson(datum: CSL.TransactionMetadatum): Metadatum {
  switch (datum.kind()) {
    case CSL.TransactionMetadatumKind.Int: return { int: BigInt(datum.as_int().to_str()) }
    case CSL.TransactionMetadatumKind.Text: return { string: datum.as_text() }
    case CSL.TransactionMetadatumKind.Bytes: return { bytes: toHex(datum.as_bytes()) }
    case CSL.TransactionMetadatumKind.MetadataList: return { list: listOf(datum.as_list()).map(metadatumJson) }
    default: {
      const map = datum.as_map()
      return { map: listOf(map.keys()).map(k => ({ k: metadatumJson(k), v: metadatumJson(map.get(k)) })) }
    }
  }
}

/** A transaction's metadata as Kupo gives it: the hash and bytes of its auxiliary data, and each label's metadatum in the detailed schema. */
export function metadataJson(tx: TxRecord) {
  const raw = txExtras(tx).auxiliaryData
  if (!raw) return null
  const metadata = CSL.AuxiliaryData.from_hex(raw).metadata()
  if (!metadata) return null
  const schema: Record<string, Metadatum> = {}
  for (const label of listOf(metadata.keys())) schema[label.to_str()] = metadatumJson(metadata.get(label)!)
  return { hash: blake2b256Hex(Buffer.from(raw, 'hex')), raw, schema }
}

// ---- JSON with exact integers ---------------------------------------------------------------

/** JSON text in which bigints are written as JSON numbers, digit for digit (quantities beyond 2^53 stay exact). */
export function toJson(value: unknown): string {
  if (typeof value === 'bigint') return value.toString()
  if (value === null || value === undefined) return 'null'
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`
  if (typeof value === 'object') {
    const fields = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined)
    return `{${fields.map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`).join(',')}}`
  }
  return JSON.stringify(value)
}
