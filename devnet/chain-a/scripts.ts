import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { arrayItems, mapFields } from '../../srv/chains/chain-a/cbor.ts'
import { languageOf, listOf, parseRef, refOfInput, toCslOutput } from '../../srv/chains/chain-a/csl.ts'
import {
  evaluateTransaction, exUnitsFee, languageViews, redeemerBudgetOf, referenceScriptsFee, ScriptFailure, type EvaluationOptions, type ExUnits, type RedeemerBudget, type RedeemerTag, type SlotConfig,
} from '../../srv/chains/chain-a/plutus.ts'
import { addValue, describeValue, sumValues, zeroValue } from '../../srv/chains/chain-a/value.ts'
import { fail, type AvailableScript, type Candidate, type DeclaredRedeemer, type Rule, type ValidationContext } from './candidate.ts'
import { blake2b256Hex } from './crypto.ts'
import type { ProtocolParameters } from './params.ts'
import type { OutputData } from './types.ts'

/**
 * The ledger rules for Plutus scripts: which scripts a transaction runs and with which redeemers
 * and datums, the script data hash, collateral, execution-unit limits, and phase two (running the
 * scripts). Rule names and their order follow the node's UTXOW, UTXO and UTXOS rules.
 */

export function availableScripts(candidate: Candidate): Map<string, AvailableScript> {
  const scripts = new Map<string, AvailableScript>()
  for (const script of listOf(candidate.witnesses.native_scripts())) {
    scripts.set(script.hash().to_hex(), { native: script, language: null, inWitnessSet: true })
  }
  for (const script of listOf(candidate.witnesses.plutus_scripts())) {
    scripts.set(script.hash().to_hex(), { native: null, language: languageOf(script.language_version()), inWitnessSet: true })
  }
  for (const output of [...candidate.resolvedInputs, ...candidate.resolvedReferenceInputs]) {
    if (!output.referenceScript || scripts.has(output.referenceScriptHash!)) continue
    const ref = CSL.ScriptRef.from_hex(output.referenceScript)
    const plutus = ref.plutus_script()
    scripts.set(output.referenceScriptHash!, {
      native: ref.native_script() ?? null, language: plutus ? languageOf(plutus.language_version()) : null, inWitnessSet: false,
    })
  }
  return scripts
}

/** Bytes of the reference scripts in inputs and reference inputs, counted once per output (Conway). */
function referenceScriptBytes(candidate: Candidate): number {
  let total = 0
  for (const output of [...candidate.resolvedInputs, ...candidate.resolvedReferenceInputs]) {
    if (!output.referenceScript) continue
    const ref = CSL.ScriptRef.from_hex(output.referenceScript)
    total += ref.plutus_script()?.bytes().length ?? ref.native_script()!.to_bytes().length
  }
  return total
}

export const declaredRedeemers = (witnesses: CSL.TransactionWitnessSet): DeclaredRedeemer[] => listOf(witnesses.redeemers()).map(redeemerBudgetOf)

const totalExUnits = (redeemers: ExUnits[]): ExUnits =>
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
function expectedScriptDataHash(candidate: Candidate, params: ProtocolParameters): string | null {
  const redeemers = candidate.redeemers.length > 0 ? witnessField(candidate, 5) : null
  const datumsField = witnessField(candidate, 4)
  const datums = datumsField && arrayItems(datumsField).length > 0 ? datumsField : null
  if (!redeemers && !datums) return null
  const emptyMap = Uint8Array.of(0xa0)
  if (!redeemers) return blake2b256Hex(Buffer.concat([emptyMap, datums!, emptyMap]))
  const languages = new Set(candidate.plutusPurposes.map(purpose => purpose.language))
  return blake2b256Hex(Buffer.concat([redeemers, datums ?? new Uint8Array(), languageViews(params.costModels, languages)]))
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
function collateralBalance(candidate: Candidate) {
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
  const resolved = [...candidate.resolvedInputs, ...candidate.resolvedReferenceInputs].map(output => resolvedOutput(output.ref, output))
  let needed: RedeemerBudget[]
  try {
    needed = evaluateTransaction(candidate.tx.cbor!, resolved, evaluationOptions(params, slotConfig))
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
  const refs = [...listOf(body.inputs()), ...listOf(body.reference_inputs())].map(refOfInput)
  const resolved = refs.map(ref => {
    const output = resolve(ref) ?? (() => { throw new ScriptFailure(null, `Unknown transaction input (missing from UTxO set): ${ref}`) })()
    return resolvedOutput(ref, output)
  })
  return evaluateTransaction(bytes, resolved, evaluationOptions(params, slotConfig))
}

/** An output as the evaluator takes it: its reference and its CBOR. */
const resolvedOutput = (ref: string, output: OutputData) => ({ ...parseRef(ref), output: toCslOutput(output).to_bytes() })

const evaluationOptions = (params: ProtocolParameters, slotConfig: SlotConfig): EvaluationOptions =>
  ({ costModels: params.costModels, slotConfig, maxTxExUnits: { mem: Number(params.maxTxExMem), steps: Number(params.maxTxExSteps) } })
