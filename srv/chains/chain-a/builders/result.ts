import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { fromCslMint, fromCslMultiAsset, listOf, metadatumJson, outputRefOf, refOf, refOfInput } from '../csl.ts'
import { redeemerBudgetOf } from '../plutus.ts'
import type { ChainTxMetadata, ChainUtxo } from '../port.ts'
import { assetList } from '../value.ts'
import type { BuilderName, BuildResult, BuiltInput, BuiltOutput, Draft } from './types.ts'

/**
 * The build record of an assembled transaction, read back from its bytes: what the record says is
 * what the transaction holds, whichever library wrote it.
 */
export function describeTransaction(bytes: Uint8Array, draft: Draft, builder: BuilderName): BuildResult {
  const tx = CSL.FixedTransaction.from_bytes(bytes)
  const body = tx.body()
  const known = new Map<string, { utxo: ChainUtxo; isScript: boolean }>([
    ...draft.inputs.map(utxo => [refOf(utxo), { utxo, isScript: false }] as const),
    ...draft.plan.scriptInputs.map(input => [refOf(input.utxo), { utxo: input.utxo, isScript: true }] as const),
    ...(draft.collateral?.inputs ?? []).map(utxo => [refOf(utxo), { utxo, isScript: false }] as const),
  ])
  const input = (ref: CSL.TransactionInput): BuiltInput => {
    const { utxo, isScript } = known.get(refOfInput(ref))!
    return { txHash: utxo.txHash, outputIndex: utxo.outputIndex, address: utxo.address, lovelace: utxo.lovelace, assets: utxo.assets, isScript }
  }
  const outputs = listOf(body.outputs())
  const collateralReturn = body.collateral_return()
  return {
    builder,
    unsignedTxCbor: Buffer.from(bytes).toString('hex'),
    txBodyHash: tx.transaction_hash().to_hex(),
    fee: body.fee().to_str(),
    size: bytes.length,
    inputs: listOf(body.inputs()).map(input),
    referenceInputs: listOf(body.reference_inputs()).map(outputRefOf),
    outputs: outputs.map((output, i) => outputOf(output, i, i === outputs.length - 1)),
    mint: assetList(fromCslMint(body.mint())),
    metadata: metadataOf(tx.auxiliary_data()),
    collateral: listOf(body.collateral()).map(input),
    collateralReturn: collateralReturn ? outputOf(collateralReturn, outputs.length, false) : null,
    totalCollateral: body.total_collateral()?.to_str() ?? null,
    redeemers: listOf(tx.witness_set().redeemers()).map(redeemerBudgetOf),
    validity: {
      invalidBefore: slotOf(body.validity_start_interval_bignum()),
      invalidHereafter: slotOf(body.ttl_bignum()),
    },
    requiredSigners: listOf(body.required_signers()).map(hash => hash.to_hex()),
    scriptHashes: [...new Set(draft.plan.scriptInputs.map(input => input.scriptHash))],
    mintPolicyIds: draft.plan.mints.map(mint => mint.policyId),
  }
}

const slotOf = (slot: CSL.BigNum | undefined) => (slot === undefined ? null : Number(slot.to_str()))

function outputOf(output: CSL.TransactionOutput, outputIndex: number, isChange: boolean): BuiltOutput {
  return {
    outputIndex,
    address: output.address().to_bech32(),
    lovelace: output.amount().coin().to_str(),
    assets: assetList(fromCslMultiAsset(output.amount().multiasset())),
    isChange,
    datumHash: output.data_hash()?.to_hex() ?? null,
    inlineDatum: output.plutus_data()?.to_hex() ?? null,
  }
}

function metadataOf(auxiliary: CSL.AuxiliaryData | undefined): ChainTxMetadata[] {
  const metadata = auxiliary?.metadata()
  return listOf(metadata?.keys()).map(label => ({ label: label.to_str(), json: metadatumJson(metadata!.get(label)!) }))
}
