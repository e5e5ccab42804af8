import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { ApiError, badInput } from '../../../lib/errors.ts'
import { evaluateTransaction, exUnitsFee, ScriptFailure, type ExUnits, type ResolvedOutput } from '../plutus.ts'
import type { ChainUtxo } from '../port.ts'
import { compareRefs, nativeScriptSigners, paymentKeyHash, refOf, toCslOutput } from '../csl.ts'
import { assetList, lovelace, positivePart, subtractValues, sumValues, valueOfUtxo, type Value } from '../value.ts'
import { planOf } from './request.ts'
import { describeTransaction } from './result.ts'
import { selectCollateral, selectInputs, type Selection } from './selection.ts'
import type { Assembler, BuildRequest, BuildResult, Collateral, Draft, Plan, PlannedOutput, TxOutputSpec } from './types.ts'

/**
 * The shared part of building: coin selection, balancing, fee, collateral and execution units.
 * A backend (`Assembler`) only turns a fully decided draft into transaction bytes with its library.
 *
 * Each round selects inputs for the outputs plus the current fee, puts the rest into a change
 * output (always the last output), assembles, runs the scripts to learn their execution units and
 * computes the fee the signed transaction needs; it stops when the draft's fee covers that.
 */

const MAX_ROUNDS = 8

/** The largest lovelace an output can hold: the change's size, and so its minimum ADA, is estimated with it. */
const MAX_COIN = 2n ** 64n - 1n

/** Execution units declared above what the scripts needed when built, in case the context differs slightly at validation. */
const withMargin = ({ mem, steps }: ExUnits): ExUnits => ({ mem: Math.ceil(mem * 1.1) + 1_000, steps: Math.ceil(steps * 1.1) + 50_000 })

/**
 * Bytes wallets may add around the signatures besides the witnesses themselves: a set tag (258)
 * on the vkey witnesses, as some wallets write it.
 */
const SIGNATURE_SLACK_BYTES = 3

export function buildTransaction(assembler: Assembler, request: BuildRequest): BuildResult {
  const plan = planOf(request)
  const payments = paymentsOf(assembler, plan)
  // From below, so the fee ends at what the transaction needs rather than at a guess above it.
  let fee = plan.params.minFeeB
  let exUnits = plan.scriptInputs.map(() => ({ mem: 0, steps: 0 }))
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const draft = draftFor(assembler, plan, payments, fee, exUnits)
    const tx = assembler.assemble(draft)
    const needed = plan.scriptInputs.length ? evaluate(tx, draft).map(withMargin) : []
    if (needed.some((units, i) => units.mem > exUnits[i].mem || units.steps > exUnits[i].steps)) {
      exUnits = needed.map((units, i) => ({ mem: Math.max(units.mem, exUnits[i].mem), steps: Math.max(units.steps, exUnits[i].steps) }))
      continue
    }
    const required = requiredFee(tx, draft)
    if (fee >= required) return describeTransaction(tx, draft, assembler.name)
    fee = required
  }
  throw new ApiError(500, 'BUILD_FAILED', `The ${assembler.name} builder did not settle on a fee in ${MAX_ROUNDS} rounds`)
}

/** The requested outputs with their lovelace, what leaves the sender (outputs, burns) and what script inputs and mints bring in. */
interface Payments {
  outputs: TxOutputSpec[]
  paidOut: Value
  brought: Value
}

function paymentsOf(assembler: Assembler, plan: Plan): Payments {
  const outputs = plan.outputs.map((output, i) => withAda(assembler, plan, output, i))
  return {
    outputs,
    paidOut: sumValues([...outputs.map(o => o.value), mintedValue(plan, -1n)]),
    brought: sumValues([...plan.scriptInputs.map(input => input.value), mintedValue(plan, 1n)]),
  }
}

/** Inputs selected for the payments and the fee, the rest as change, collateral when scripts run. */
function draftFor(assembler: Assembler, plan: Plan, payments: Payments, fee: bigint, exUnits: ExUnits[]): Draft {
  const selection = select(assembler, plan, payments, fee)
  if (selection.shortfall) {
    const estimate = feeSpendingEverything(assembler, plan, payments, fee, exUnits)
    throw insufficientFunds(plan, select(assembler, plan, payments, estimate), payments, estimate)
  }
  const { outputs, paidOut, brought } = payments
  const change = subtractValues(sumValues([brought, ...selection.inputs.map(valueOfUtxo)]), sumValues([paidOut, lovelace(fee)]))
  return {
    plan,
    inputs: selection.inputs,
    outputs: [...outputs, changeOutput(plan, change, change.coin)],
    fee,
    collateral: plan.scriptInputs.length ? collateralFor(assembler, plan, fee) : null,
    exUnits,
  }
}

/** The fee so far may still be the first low guess; a shortfall is told with the fee of spending every candidate. */
function feeSpendingEverything(assembler: Assembler, plan: Plan, payments: Payments, fee: bigint, exUnits: ExUnits[]): bigint {
  if (plan.candidates.length + plan.scriptInputs.length === 0) return fee
  // Not a transaction to submit: the change holds the most lovelace an output can, for the largest size.
  const leftover = positivePart(subtractValues(sumValues([payments.brought, ...plan.candidates.map(valueOfUtxo)]), payments.paidOut))
  const draft: Draft = { plan, inputs: plan.candidates, outputs: [...payments.outputs, changeOutput(plan, leftover, MAX_COIN)], fee, collateral: null, exUnits }
  const estimate = requiredFee(assembler.assemble(draft), draft)
  return estimate > fee ? estimate : fee
}

function select(assembler: Assembler, plan: Plan, { paidOut, brought }: Payments, fee: bigint): Selection {
  const target = sumValues([subtractValues(paidOut, brought), lovelace(fee)])
  return selectInputs(plan.candidates, target, leftover => minimumAda(assembler, plan, changeOutput(plan, positivePart(leftover), MAX_COIN)))
}

// ---- outputs and minimum ADA ---------------------------------------------------------------

/** The minimum ADA of an output: (160 + its size in bytes) × coins per UTxO byte. */
function minimumAda(assembler: Assembler, plan: Plan, output: TxOutputSpec): bigint {
  return (160n + BigInt(assembler.encodeOutput(output).length)) * plan.params.coinsPerUtxoByte
}

/** The requested output with its lovelace: as asked (at least the minimum), or the minimum. */
function withAda(assembler: Assembler, plan: Plan, output: PlannedOutput, index: number): TxOutputSpec {
  const spec = (coin: bigint): TxOutputSpec => ({ address: output.address, value: { coin, assets: output.assets }, datum: output.datum })
  // The lovelace is part of the output, so the least it may hold is where the amount covers its own size.
  let least = 0n
  for (let minimum = minimumAda(assembler, plan, spec(least)); least < minimum; minimum = minimumAda(assembler, plan, spec(least))) least = minimum
  if (output.lovelace === null) return spec(least)
  if (output.lovelace < minimumAda(assembler, plan, spec(output.lovelace))) {
    throw badInput('OUTPUT_BELOW_MIN_ADA', `Output ${index} to ${output.address} holds ${output.lovelace} lovelace; with its assets and datum it needs at least ${least} lovelace`, `outputs/${index}/lovelace`)
  }
  return spec(output.lovelace)
}

const changeOutput = (plan: Plan, leftover: Value, coin: bigint): TxOutputSpec =>
  ({ address: plan.changeAddress, value: { coin, assets: leftover.assets }, datum: null })

/** What the mints bring in (sign 1: positive quantities) or take out (sign −1: burns, as positive amounts). */
function mintedValue(plan: Plan, sign: 1n | -1n): Value {
  const assets = new Map<string, bigint>()
  for (const mint of plan.mints) {
    for (const [name, quantity] of mint.assets) if (quantity * sign > 0n) assets.set(mint.policyId + name, quantity * sign)
  }
  return { coin: 0n, assets }
}

// ---- fee, collateral, execution units ------------------------------------------------------

/** The key hashes whose signatures the transaction will carry: input owners, required signers, policy keys. */
function signers(draft: Draft): Set<string> {
  const keys = new Set<string>(draft.plan.requiredSigners)
  for (const utxo of [...draft.inputs, ...(draft.collateral?.inputs ?? [])]) keys.add(paymentKeyHash(utxo.address)!)
  for (const mint of draft.plan.mints) nativeScriptSigners(CSL.NativeScript.from_hex(mint.script)).forEach(key => keys.add(key))
  return keys
}

/** Bytes the vkey witnesses add: the field key, the array head and 101 bytes per [vkey, signature]. */
const vkeyWitnessBytes = (count: number) => 1 + (count < 24 ? 1 : 2) + 101 * count

/** The fee of the signed transaction: size, execution units at their prices. */
function requiredFee(tx: Uint8Array, draft: Draft): bigint {
  const { params } = draft.plan
  const size = BigInt(tx.length + vkeyWitnessBytes(signers(draft).size) + SIGNATURE_SLACK_BYTES)
  const units = draft.exUnits.reduce((sum, u) => ({ mem: sum.mem + u.mem, steps: sum.steps + u.steps }), { mem: 0, steps: 0 })
  return params.minFeeA * size + params.minFeeB + exUnitsFee(units, params)
}

/** ADA-only UTxOs of the sender worth collateral_percent of the fee; the rest comes back in a return output. */
function collateralFor(assembler: Assembler, plan: Plan, fee: bigint): Collateral {
  const { collateralPercent, maxCollateralInputs } = plan.params
  const required = (fee * BigInt(collateralPercent) + 99n) / 100n
  const inputs = selectCollateral(plan.candidates, required, maxCollateralInputs)
  if (!inputs) {
    throw badInput('NO_COLLATERAL', `No collateral: the transaction runs a Plutus script and needs ${required} lovelace of collateral (${collateralPercent}% of the fee) in at most ${maxCollateralInputs} ADA-only UTxOs of the sender that are not excluded`, 'utxos')
  }
  const sum = inputs.reduce((total, utxo) => total + BigInt(utxo.lovelace), 0n)
  const returned: TxOutputSpec = { address: inputs[0].address, value: lovelace(sum - required), datum: null }
  return sum - required >= minimumAda(assembler, plan, returned)
    ? { inputs, total: required, returnOutput: returned }
    : { inputs, total: sum, returnOutput: null }
}

/** A UTxO as the evaluator takes it: its reference and its output's CBOR. */
function resolvedOutput(utxo: ChainUtxo): ResolvedOutput {
  const output = toCslOutput({ address: utxo.address, value: valueOfUtxo(utxo), inlineDatum: utxo.inlineDatum, dataHash: utxo.dataHash })
  return { txHash: utxo.txHash, outputIndex: utxo.outputIndex, output: output.to_bytes() }
}

/** Spend redeemers point into the inputs sorted by transaction hash, then index. */
export function spendIndex(draft: Draft, utxo: ChainUtxo): number {
  const refs = [...draft.inputs, ...draft.plan.scriptInputs.map(input => input.utxo)].map(refOf)
  return refs.sort(compareRefs).indexOf(refOf(utxo))
}

/** What each script input's validator needs, by running the scripts of the assembled transaction. */
function evaluate(tx: Uint8Array, draft: Draft): ExUnits[] {
  const { plan } = draft
  const resolved = [...draft.inputs, ...plan.scriptInputs.map(input => input.utxo)].map(resolvedOutput)
  try {
    const budgets = evaluateTransaction(tx, resolved, { costModels: plan.params.costModels, slotConfig: plan.slotConfig, maxTxExUnits: plan.params.maxTxExUnits })
    return plan.scriptInputs.map(input => {
      const index = spendIndex(draft, input.utxo)
      return budgets.find(b => b.tag === 'spend' && b.index === index) ?? { mem: 0, steps: 0 }
    })
  } catch (error) {
    if (!(error instanceof ScriptFailure)) throw error
    const input = error.redeemer?.tag === 'spend' ? plan.scriptInputs.find(i => spendIndex(draft, i.utxo) === error.redeemer!.index) : undefined
    const which = input ? `The validator of ${refOf(input.utxo)} failed` : 'Script evaluation failed'
    throw badInput('SCRIPT_FAILED', `${which}: ${error.reason}${error.logs.length ? ` (trace: ${error.logs.join(' | ')})` : ''}`, 'scriptInputs')
  }
}

// ---- errors --------------------------------------------------------------------------------

function insufficientFunds(plan: Plan, selection: Selection, { paidOut, brought }: Payments, fee: bigint): ApiError {
  const missing = selection.shortfall!
  const parts = [...(missing.coin > 0n ? [`${missing.coin} lovelace`] : []), ...assetList(missing.assets).map(a => `${a.quantity} of ${a.unit}`)]
  const available = sumValues(plan.candidates.map(valueOfUtxo))
  const needed = subtractValues(paidOut, brought)
  const paying = needed.coin > 0n ? needed.coin : 0n
  const excluded = plan.excludedCount ? `; ${plan.excludedCount} more ${plan.excludedCount === 1 ? 'is' : 'are'} excluded as reserved by pending builds` : ''
  const assets = assetList(needed.assets).filter(a => BigInt(a.quantity) > 0n).map(a => ` and ${a.quantity} of ${a.unit}`).join('')
  return badInput('INSUFFICIENT_FUNDS',
    `Insufficient funds: short by ${parts.join(' and ')}. The transaction needs ${selection.neededCoin} lovelace from the sender ` +
    `(${paying} for outputs, about ${fee} for the fee, ${selection.neededCoin - paying - fee} minimum ADA of the change)${assets}; ` +
    `the sender's ${plan.candidates.length} spendable UTxOs hold ${available.coin} lovelace${excluded}`,
    'utxos')
}
