import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { bigNum, cslAddress, cslCostModels, datumHashOf, toCslOutput, toCslValue, transactionBuilderConfig, transactionInput } from '../csl.ts'
import type { ExUnits } from '../plutus.ts'
import type { ChainUtxo } from '../port.ts'
import { valueOfUtxo } from '../value.ts'
import type { Assembler, Draft, Plan, TxOutputSpec } from './types.ts'

/**
 * The CSL backend: the transaction is put together with CSL's TransactionBuilder, which places the
 * Plutus scripts, datums and redeemers in the witness set, points each spend redeemer at its input
 * and computes the script data hash from the cost models.
 */
export const cslAssembler: Assembler = {
  name: 'csl',
  encodeOutput: spec => cslOutput(spec).to_bytes(),
  assemble,
}

function assemble(draft: Draft): Uint8Array {
  const { plan } = draft
  const builder = CSL.TransactionBuilder.new(transactionBuilderConfig(plan.params))
  builder.set_inputs(inputsOf(draft))
  for (const output of draft.outputs) builder.add_output(cslOutput(output))
  if (plan.mints.length) builder.set_mint_builder(mintBuilder(plan))
  if (plan.metadata) {
    const auxiliary = CSL.AuxiliaryData.new()
    auxiliary.set_metadata(CSL.GeneralTransactionMetadata.from_hex(plan.metadata))
    builder.set_auxiliary_data(auxiliary)
  }
  if (plan.validity.invalidBefore !== null) builder.set_validity_start_interval_bignum(bigNum(plan.validity.invalidBefore))
  if (plan.validity.invalidHereafter !== null) builder.set_ttl_bignum(bigNum(plan.validity.invalidHereafter))
  for (const hash of plan.requiredSigners) builder.add_required_signer(CSL.Ed25519KeyHash.from_hex(hash))
  if (draft.collateral) {
    const collateral = CSL.TxInputsBuilder.new()
    for (const utxo of draft.collateral.inputs) addKeyInput(collateral, utxo)
    builder.set_collateral(collateral)
    if (draft.collateral.returnOutput) builder.set_collateral_return(cslOutput(draft.collateral.returnOutput))
    builder.set_total_collateral(bigNum(draft.collateral.total))
  }
  builder.set_fee(bigNum(draft.fee))
  if (plan.scriptInputs.length) builder.calc_script_data_hash(cslCostModels(plan.params.costModels))
  // Unchecked: intermediate drafts carry a provisional fee; build.ts settles the fee the signed transaction needs.
  return builder.build_tx_unsafe().to_bytes()
}

function inputsOf(draft: Draft): CSL.TxInputsBuilder {
  const inputs = CSL.TxInputsBuilder.new()
  for (const utxo of draft.inputs) addKeyInput(inputs, utxo)
  draft.plan.scriptInputs.forEach((input, i) => {
    const script = CSL.PlutusScript.new_v3(input.script)
    // CSL points the redeemer at the input's position among the sorted inputs when it builds.
    const redeemer = CSL.Redeemer.new(CSL.RedeemerTag.new_spend(), bigNum(0), CSL.PlutusData.from_hex(input.redeemer), exUnits(draft.exUnits[i]))
    const witness = input.witnessDatum
      ? CSL.PlutusWitness.new(script, CSL.PlutusData.from_hex(input.witnessDatum), redeemer)
      : CSL.PlutusWitness.new_without_datum(script, redeemer)
    inputs.add_plutus_script_input(witness, transactionInput(input.utxo), toCslValue(input.value))
  })
  return inputs
}

const addKeyInput = (inputs: CSL.TxInputsBuilder, utxo: ChainUtxo) =>
  inputs.add_regular_input(cslAddress(utxo.address), transactionInput(utxo), toCslValue(valueOfUtxo(utxo)))

const exUnits = (units: ExUnits) => CSL.ExUnits.new(bigNum(units.mem), bigNum(units.steps))

/** The output as the spec says: its datum inline, or by the hash of its datum. */
function cslOutput({ address, value, datum }: TxOutputSpec): CSL.TransactionOutput {
  return toCslOutput({ address, value, inlineDatum: datum?.inline ? datum.cbor : null, dataHash: datum && !datum.inline ? datumHashOf(datum.cbor) : null })
}

function mintBuilder(plan: Plan): CSL.MintBuilder {
  const mint = CSL.MintBuilder.new()
  for (const { script, assets } of plan.mints) {
    const witness = CSL.MintWitness.new_native_script(CSL.NativeScriptSource.new(CSL.NativeScript.from_hex(script)))
    for (const [name, quantity] of assets) {
      const amount = quantity < 0n ? CSL.Int.new_negative(bigNum(-quantity)) : CSL.Int.new(bigNum(quantity))
      mint.add_asset(witness, CSL.AssetName.new(Buffer.from(name, 'hex')), amount)
    }
  }
  return mint
}
