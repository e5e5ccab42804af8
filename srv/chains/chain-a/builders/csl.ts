import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { rationalOf, type ExUnits } from '../plutus.ts'
import type { ChainUtxo } from '../port.ts'
import type { Assembler, Draft, TxOutputSpec } from './build.ts'
import type { Plan } from './request.ts'
import { valueOfUtxo, type Value } from './value.ts'

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

const bigNum = (n: bigint | number) => CSL.BigNum.from_str(String(n))

function assemble(draft: Draft): Uint8Array {
  const { plan } = draft
  const builder = CSL.TransactionBuilder.new(builderConfig(plan))
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
  if (plan.scriptInputs.length) builder.calc_script_data_hash(costModels(plan))
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
    inputs.add_plutus_script_input(witness, inputOf(input.utxo), cslValue(input.value))
  })
  return inputs
}

const inputOf = (utxo: ChainUtxo) => CSL.TransactionInput.new(CSL.TransactionHash.from_hex(utxo.txHash), utxo.outputIndex)

const addKeyInput = (inputs: CSL.TxInputsBuilder, utxo: ChainUtxo) =>
  inputs.add_regular_input(CSL.Address.from_bech32(utxo.address), inputOf(utxo), cslValue(valueOfUtxo(utxo)))

const exUnits = (units: ExUnits) => CSL.ExUnits.new(bigNum(units.mem), bigNum(units.steps))

function cslValue(value: Value): CSL.Value {
  const result = CSL.Value.new(bigNum(value.coin))
  if (value.assets.size === 0) return result
  const multiasset = CSL.MultiAsset.new()
  for (const [unit, quantity] of value.assets) {
    multiasset.set_asset(CSL.ScriptHash.from_hex(unit.slice(0, 56)), CSL.AssetName.new(Buffer.from(unit.slice(56), 'hex')), bigNum(quantity))
  }
  result.set_multiasset(multiasset)
  return result
}

function cslOutput(spec: TxOutputSpec): CSL.TransactionOutput {
  const output = CSL.TransactionOutput.new(CSL.Address.from_bech32(spec.address), cslValue(spec.value))
  if (spec.datum?.inline) output.set_plutus_data(CSL.PlutusData.from_hex(spec.datum.cbor))
  else if (spec.datum) output.set_data_hash(CSL.hash_plutus_data(CSL.PlutusData.from_hex(spec.datum.cbor)))
  return output
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

function costModels(plan: Plan): CSL.Costmdls {
  const models = CSL.Costmdls.new()
  const languages = { PlutusV1: CSL.Language.new_plutus_v1(), PlutusV2: CSL.Language.new_plutus_v2(), PlutusV3: CSL.Language.new_plutus_v3() }
  for (const [name, costs] of Object.entries(plan.params.costModels)) {
    const model = CSL.CostModel.new()
    costs.forEach((cost, i) => model.set(i, CSL.Int.from_str(String(cost))))
    models.insert(languages[name as keyof typeof languages], model)
  }
  return models
}

/** The builder's fee and size settings; the fee itself is set explicitly. */
function builderConfig(plan: Plan): CSL.TransactionBuilderConfig {
  const { params } = plan
  return CSL.TransactionBuilderConfigBuilder.new()
    .fee_algo(CSL.LinearFee.new(bigNum(params.minFeeA), bigNum(params.minFeeB)))
    .coins_per_utxo_byte(bigNum(params.coinsPerUtxoByte))
    .pool_deposit(bigNum(params.poolDeposit))
    .key_deposit(bigNum(params.keyDeposit))
    .max_value_size(params.maxValSize)
    .max_tx_size(params.maxTxSize)
    .ex_unit_prices(CSL.ExUnitPrices.new(unitInterval(params.priceMem), unitInterval(params.priceStep)))
    .build()
}

function unitInterval(price: number): CSL.UnitInterval {
  const { numerator, denominator } = rationalOf(price)
  return CSL.UnitInterval.new(bigNum(numerator), bigNum(denominator))
}
