import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { evaluateTransaction, exUnitsFee, redeemerTagOf, referenceScriptsFee, ScriptFailure, type ExUnits, type PlutusLanguage, type RedeemerBudget, type RedeemerTag, type SlotConfig } from '../plutus.ts'
import { arrayItems, concatBytes, encodeHead, encodeInt, mapFields } from './cbor.ts'
import { blake2b256Hex } from './crypto.ts'
import { LedgerRuleError } from './decode.ts'
import type { ProtocolParameters } from './params.ts'
import type { OutputData } from './types.ts'
import type { Candidate, Rule, ValidationContext } from './validate.ts'
import { addValue, describeValue, sumValues, zeroValue } from './values.ts'
import { toCslOutput } from './wallet.ts'

/**
 * The ledger rules for Plutus scripts: which scripts a transaction runs and with which redeemers
 * and datums, the script data hash, collateral, execution-unit limits, and phase two (running the
 * scripts). Rule names and their order follow the node's UTXOW, UTXO and UTXOS rules.
 */

/** A script the transaction can use, from its witness set or as a reference script: native, or Plutus of a language. */
export interface AvailableScript {
  native: CSL.NativeScript | null
  language: PlutusLanguage | null
  inWitnessSet: boolean
}

/** A script execution the transaction needs: spending a script-locked input, or minting under a Plutus policy. */
export interface PlutusPurpose {
  tag: RedeemerTag
  index: number
  scriptHash: string
  language: PlutusLanguage
  /** The output spent, for `spend`. */
  spent: (OutputData & { ref: string }) | null
}

/** A redeemer as the witness set declares it, with its declared execution units. */
export type DeclaredRedeemer = RedeemerBudget

const fail = (rule: string, detail: string): never => { throw new LedgerRuleError(rule, detail) }

const LANGUAGES: Record<CSL.LanguageKind, PlutusLanguage> = {
  [CSL.LanguageKind.PlutusV1]: 'PlutusV1',
  [CSL.LanguageKind.PlutusV2]: 'PlutusV2',
  [CSL.LanguageKind.PlutusV3]: 'PlutusV3',
}

function list<T>(collection: { len(): number; get(i: number): T } | undefined): T[] {
  return collection ? Array.from({ length: collection.len() }, (_, i) => collection.get(i)) : []
}

/** Inputs in the ledger's order (by transaction hash, then index): a spend redeemer's index points into it. */
export const sortedRefs = (refs: string[]) => [...refs].sort((a, b) => {
  const [hashA, indexA] = a.split('#')
  const [hashB, indexB] = b.split('#')
  return hashA === hashB ? Number(indexA) - Number(indexB) : hashA < hashB ? -1 : 1
})

export function availableScripts(candidate: Candidate): Map<string, AvailableScript> {
  const scripts = new Map<string, AvailableScript>()
  for (const script of list(candidate.witnesses.native_scripts())) {
    scripts.set(script.hash().to_hex(), { native: script, language: null, inWitnessSet: true })
  }
  for (const script of list(candidate.witnesses.plutus_scripts())) {
    scripts.set(script.hash().to_hex(), { native: null, language: LANGUAGES[script.language_version().kind()], inWitnessSet: true })
  }
  for (const output of [...candidate.resolvedInputs, ...candidate.resolvedReferenceInputs]) {
    if (!output.referenceScript || scripts.has(output.referenceScriptHash!)) continue
    const ref = CSL.ScriptRef.from_hex(output.referenceScript)
    const plutus = ref.plutus_script()
    scripts.set(output.referenceScriptHash!, {
      native: ref.native_script() ?? null, language: plutus ? LANGUAGES[plutus.language_version().kind()] : null, inWitnessSet: false,
    })
  }
  return scripts
}

/** Bytes of the reference scripts in inputs and reference inputs, counted once per output (Conway). */
export function referenceScriptBytes(candidate: Candidate): number {
  let total = 0
  for (const output of [...candidate.resolvedInputs, ...candidate.resolvedReferenceInputs]) {
    if (!output.referenceScript) continue
    const ref = CSL.ScriptRef.from_hex(output.referenceScript)
    total += ref.plutus_script()?.bytes().length ?? ref.native_script()!.to_bytes().length
  }
  return total
}

export function declaredRedeemers(witnesses: CSL.TransactionWitnessSet): DeclaredRedeemer[] {
  return list(witnesses.redeemers()).map(redeemer => ({
    tag: redeemerTagOf(redeemer.tag().kind()),
    index: Number(redeemer.index().to_str()),
    mem: Number(redeemer.ex_units().mem().to_str()),
    steps: Number(redeemer.ex_units().steps().to_str()),
  }))
}

export const totalExUnits = (redeemers: ExUnits[]): ExUnits =>
  redeemers.reduce((sum, r) => ({ mem: sum.mem + r.mem, steps: sum.steps + r.steps }), { mem: 0, steps: 0 })

/** What scripts add to the minimum fee: execution units at their prices, and reference script bytes. */
export function scriptFees(candidate: Candidate, params: ProtocolParameters): bigint {
  return exUnitsFee(totalExUnits(candidate.redeemers), params) + referenceScriptsFee(referenceScriptBytes(candidate), params.minFeeRefScriptCostPerByte)
}

const pointer = ({ tag, index }: { tag: RedeemerTag; index: number }) => `${tag} ${index}`

export const scriptWitnessesNotExtraneous: Rule = (candidate) => {
  const needed = new Set(candidate.neededScripts)
  for (const [hash, script] of candidate.scripts) {
    if (script.inWitnessSet && !needed.has(hash)) fail('ExtraneousScriptWitnessesUTXOW', `the witness set carries script ${hash}, which the transaction does not need`)
  }
}

export const redeemersMatchPurposes: Rule = ({ plutusPurposes, redeemers }) => {
  const declared = new Set(redeemers.map(pointer))
  const purposes = new Set(plutusPurposes.map(pointer))
  for (const purpose of plutusPurposes) {
    if (!declared.has(pointer(purpose))) fail('MissingRedeemers', `no redeemer for ${pointer(purpose)} (Plutus script ${purpose.scriptHash})`)
  }
  for (const redeemer of redeemers) {
    if (!purposes.has(pointer(redeemer))) fail('ExtraRedeemers', `redeemer ${pointer(redeemer)} points to no Plutus script execution`)
  }
}

/** The witness set's fields as submitted: 4 = Plutus data (datums), 5 = redeemers. */
const witnessField = (candidate: Candidate, key: number) => mapFields(candidate.fixed.raw_witness_set()).get(key) ?? null

export const datumsPresent: Rule = (candidate) => {
  const datums = witnessField(candidate, 4)
  const supplied = new Set(datums ? arrayItems(datums).map(blake2b256Hex) : [])
  const required = new Set<string>()
  for (const { spent } of candidate.plutusPurposes) {
    if (spent?.dataHash && !spent.inlineDatum) required.add(spent.dataHash)
  }
  for (const hash of required) {
    if (!supplied.has(hash)) fail('MissingRequiredDatums', `no datum with hash ${hash} in the witness set; the spent output declares it`)
  }
  const allowed = new Set([
    ...required,
    ...[...candidate.tx.outputs, ...candidate.resolvedReferenceInputs].flatMap(output => (output.dataHash ? [output.dataHash] : [])),
  ])
  for (const hash of supplied) {
    if (!allowed.has(hash)) fail('NotAllowedSupplementalDatums', `the witness set carries datum ${hash}, which no spent input, output or reference input names`)
  }
}

/**
 * The script data hash commits to the redeemers and datums as submitted and to the cost models of
 * the Plutus languages the transaction uses (their "language views").
 */
export function expectedScriptDataHash(candidate: Candidate, params: ProtocolParameters): string | null {
  const redeemers = candidate.redeemers.length > 0 ? witnessField(candidate, 5) : null
  const datumsField = witnessField(candidate, 4)
  const datums = datumsField && arrayItems(datumsField).length > 0 ? datumsField : null
  if (!redeemers && !datums) return null
  const emptyMap = Uint8Array.of(0xa0)
  if (!redeemers) return blake2b256Hex(concatBytes(emptyMap, datums!, emptyMap))
  const languages = new Set(candidate.plutusPurposes.map(purpose => purpose.language))
  return blake2b256Hex(concatBytes(redeemers, datums ?? new Uint8Array(), languageViews(params, languages)))
}

/**
 * Language views in canonical order (shorter keys first): V2 and V3 are keyed by their language
 * number with a plain array of costs; V1 keeps its historical quirk of a bytes-wrapped key and an
 * indefinite-length array in a byte string.
 */
function languageViews(params: ProtocolParameters, languages: Set<PlutusLanguage>): Uint8Array {
  const entries: Uint8Array[] = []
  const costArray = (costs: number[]) => concatBytes(encodeHead(4, costs.length), ...costs.map(encodeInt))
  for (const [language, key] of [['PlutusV2', 1], ['PlutusV3', 2]] as const) {
    if (languages.has(language)) entries.push(encodeInt(key), costArray(params.costModels[language]))
  }
  if (languages.has('PlutusV1')) {
    const costs = concatBytes(Uint8Array.of(0x9f), ...params.costModels.PlutusV1.map(encodeInt), Uint8Array.of(0xff))
    entries.push(Uint8Array.of(0x41, 0x00), encodeHead(2, costs.length), costs)
  }
  return concatBytes(encodeHead(5, languages.size), ...entries)
}

export const scriptDataHashMatches: Rule = (candidate, { params }) => {
  const declared = candidate.body.script_data_hash()?.to_hex() ?? null
  const expected = expectedScriptDataHash(candidate, params)
  if (declared !== expected) {
    fail('PPViewHashesDontMatch', `the body declares script data hash ${declared ?? 'none'}, the redeemers, datums and cost models give ${expected ?? 'none'}`)
  }
}

export const collateralSufficient: Rule = (candidate, { params }) => {
  if (candidate.redeemers.length === 0) return
  const { tx, resolvedCollateral } = candidate
  if (resolvedCollateral.length === 0) fail('NoCollateralInputs', 'the transaction runs Plutus scripts but names no collateral inputs')
  if (resolvedCollateral.length > params.maxCollateralInputs) fail('TooManyCollateralInputs', `${resolvedCollateral.length} collateral inputs, the maximum is ${params.maxCollateralInputs}`)
  for (const input of resolvedCollateral) {
    if (input.payment?.type !== 'key') fail('ScriptsNotPaidUTxO', `collateral input ${input.ref} is not locked by a key`)
  }
  const balance = collateralBalance(candidate)
  if (balance.assets.size > 0) fail('CollateralContainsNonADA', `the collateral, less its return, holds ${describeValue(balance)}; it must be ADA only`)
  const required = (tx.fee * BigInt(params.collateralPercent) + 99n) / 100n
  if (balance.coin < required) fail('InsufficientCollateral', `collateral of ${balance.coin} lovelace is below the required ${required} (${params.collateralPercent}% of the fee ${tx.fee})`)
  const declared = candidate.body.total_collateral()
  if (declared && BigInt(declared.to_str()) !== balance.coin) {
    fail('IncorrectTotalCollateralField', `the body declares total collateral ${declared.to_str()}, the collateral inputs less the return give ${balance.coin}`)
  }
}

/** The collateral inputs less the collateral return: what a failing transaction pays. */
export function collateralBalance(candidate: Candidate) {
  const balance = sumValues(candidate.resolvedCollateral.map(input => input.value))
  if (candidate.tx.collateralReturn) addValue(balance, candidate.tx.collateralReturn.value, -1n)
  return candidate.resolvedCollateral.length ? balance : zeroValue()
}

export const exUnitsWithinLimits: Rule = ({ redeemers }, { params }) => {
  const total = totalExUnits(redeemers)
  if (BigInt(total.mem) > params.maxTxExMem || BigInt(total.steps) > params.maxTxExSteps) {
    fail('ExUnitsTooBigUTxO', `the redeemers declare mem ${total.mem} and steps ${total.steps}; the maximum per transaction is mem ${params.maxTxExMem} and steps ${params.maxTxExSteps}`)
  }
}

/**
 * Phase two. Every script runs; one that fails, or that needs more than its redeemer declares,
 * makes the transaction's scripts fail. A transaction marked `is_valid = true` whose scripts fail is
 * refused (the node never forwards it); one marked `is_valid = false` whose scripts indeed fail is
 * accepted and pays with its collateral, as on the real chain.
 */
export const scriptsValidate: Rule = (candidate, context) => {
  const claimsValid = candidate.fixed.is_valid()
  if (candidate.plutusPurposes.length === 0) {
    if (!claimsValid) fail('ValidationTagMismatch', 'the transaction is marked is_valid = false but runs no Plutus script')
    return
  }
  const failure = scriptFailure(candidate, context)
  if (claimsValid && failure) fail('ValidationTagMismatch', `the transaction is marked is_valid = true but its scripts fail: ScriptFailure: ${failure.message}`)
  if (!claimsValid && !failure) fail('ValidationTagMismatch', 'the transaction is marked is_valid = false but every script succeeds')
  if (!claimsValid) candidate.tx.fee = collateralBalance(candidate).coin
}

function scriptFailure(candidate: Candidate, { params, slotConfig }: ValidationContext): ScriptFailure | null {
  const resolved = [...candidate.resolvedInputs, ...candidate.resolvedReferenceInputs].map(output => {
    const [txHash, index] = output.ref.split('#')
    return { txHash, outputIndex: Number(index), output: toCslOutput(output).to_bytes() }
  })
  let needed: RedeemerBudget[]
  try {
    needed = evaluateTransaction(candidate.tx.cbor!, resolved, {
      costModels: params.costModels, slotConfig, maxTxExUnits: { mem: Number(params.maxTxExMem), steps: Number(params.maxTxExSteps) },
    })
  } catch (error) {
    if (error instanceof ScriptFailure) return error
    throw error
  }
  for (const use of needed) {
    const declared = candidate.redeemers.find(r => r.tag === use.tag && r.index === use.index)!
    if (use.mem > declared.mem || use.steps > declared.steps) {
      return new ScriptFailure(use, `the script ran out of budget: it needs mem ${use.mem} and steps ${use.steps}, the redeemer declares mem ${declared.mem} and steps ${declared.steps}`)
    }
  }
  return null
}

/**
 * Execution units a client's transaction needs (Blockfrost's `/utils/txs/evaluate`): its inputs and
 * reference inputs are resolved from `resolve`, which answers undefined for unknown outputs.
 * Throws ScriptFailure when a script fails or an input cannot be resolved.
 */
export function evaluateClientTransaction(
  bytes: Uint8Array,
  resolve: (ref: string) => OutputData | undefined,
  params: ProtocolParameters,
  slotConfig: SlotConfig,
): RedeemerBudget[] {
  const body = CSL.FixedTransaction.from_bytes(bytes).body()
  const refs = [...list(body.inputs()), ...list(body.reference_inputs())].map(input => `${input.transaction_id().to_hex()}#${input.index()}`)
  const resolved = refs.map(ref => {
    const output = resolve(ref) ?? (() => { throw new ScriptFailure(null, `Unknown transaction input (missing from UTxO set): ${ref}`) })()
    const [txHash, index] = ref.split('#')
    return { txHash, outputIndex: Number(index), output: toCslOutput(output).to_bytes() }
  })
  return evaluateTransaction(bytes, resolved, {
    costModels: params.costModels, slotConfig, maxTxExUnits: { mem: Number(params.maxTxExMem), steps: Number(params.maxTxExSteps) },
  })
}
