import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { redeemerTagOf } from '../plutus.ts'
import type { AssetQuantity, ChainTxMetadata, ChainUtxo } from '../port.ts'
import type { Draft } from './build.ts'
import type { BuilderName, BuildResult, BuiltInput, BuiltOutput, OutputRef } from './index.ts'
import { refOf } from './value.ts'

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
    const { utxo, isScript } = known.get(`${ref.transaction_id().to_hex()}#${ref.index()}`)!
    return { txHash: utxo.txHash, outputIndex: utxo.outputIndex, address: utxo.address, lovelace: utxo.lovelace, assets: utxo.assets, isScript }
  }
  const outputs = list(body.outputs())
  const collateralReturn = body.collateral_return()
  return {
    builder,
    unsignedTxCbor: Buffer.from(bytes).toString('hex'),
    txBodyHash: tx.transaction_hash().to_hex(),
    fee: body.fee().to_str(),
    size: bytes.length,
    inputs: list(body.inputs()).map(input),
    referenceInputs: list(body.reference_inputs()).map(refOfInput),
    outputs: outputs.map((output, i) => outputOf(output, i, i === outputs.length - 1)),
    mint: mintOf(body.mint()),
    metadata: metadataOf(tx.auxiliary_data()),
    collateral: list(body.collateral()).map(input),
    collateralReturn: collateralReturn ? outputOf(collateralReturn, outputs.length, false) : null,
    totalCollateral: body.total_collateral()?.to_str() ?? null,
    redeemers: list(tx.witness_set().redeemers()).map(redeemer => ({
      tag: redeemerTagOf(redeemer.tag().kind()),
      index: Number(redeemer.index().to_str()),
      mem: Number(redeemer.ex_units().mem().to_str()),
      steps: Number(redeemer.ex_units().steps().to_str()),
    })),
    validity: {
      invalidBefore: slotOf(body.validity_start_interval_bignum()),
      invalidHereafter: slotOf(body.ttl_bignum()),
    },
    requiredSigners: list(body.required_signers()).map(hash => hash.to_hex()),
    scriptHashes: [...new Set(draft.plan.scriptInputs.map(input => input.scriptHash))],
    mintPolicyIds: draft.plan.mints.map(mint => mint.policyId),
  }
}

function list<T>(collection: { len(): number; get(i: number): T } | undefined): T[] {
  return collection ? Array.from({ length: collection.len() }, (_, i) => collection.get(i)) : []
}

const refOfInput = (input: CSL.TransactionInput): OutputRef => ({ txHash: input.transaction_id().to_hex(), outputIndex: input.index() })

const slotOf = (slot: CSL.BigNum | undefined) => (slot === undefined ? null : Number(slot.to_str()))

function outputOf(output: CSL.TransactionOutput, outputIndex: number, isChange: boolean): BuiltOutput {
  return {
    outputIndex,
    address: output.address().to_bech32(),
    lovelace: output.amount().coin().to_str(),
    assets: assetsOf(output.amount().multiasset()),
    isChange,
    datumHash: output.data_hash()?.to_hex() ?? null,
    inlineDatum: output.plutus_data()?.to_hex() ?? null,
  }
}

function assetsOf(multiasset: CSL.MultiAsset | undefined, sign = ''): AssetQuantity[] {
  const assets: AssetQuantity[] = []
  for (const policy of list(multiasset?.keys())) {
    const byName = multiasset!.get(policy)!
    for (const name of list(byName.keys())) {
      assets.push({ unit: policy.to_hex() + Buffer.from(name.name()).toString('hex'), quantity: sign + byName.get(name)!.to_str() })
    }
  }
  return assets.sort((a, b) => a.unit.localeCompare(b.unit))
}

function mintOf(mint: CSL.Mint | undefined): AssetQuantity[] {
  if (!mint) return []
  return [...assetsOf(mint.as_positive_multiasset()), ...assetsOf(mint.as_negative_multiasset(), '-')].sort((a, b) => a.unit.localeCompare(b.unit))
}

function metadataOf(auxiliary: CSL.AuxiliaryData | undefined): ChainTxMetadata[] {
  const metadata = auxiliary?.metadata()
  return list(metadata?.keys()).map(label => ({ label: label.to_str(), json: metadatumJson(metadata!.get(label)!) }))
}

/** Metadata as JSON the way chain indexers show it (bytes as 0x-hex), or in the detailed schema when maps have non-text keys. */
function metadatumJson(datum: CSL.TransactionMetadatum): string {
  try {
    return CSL.decode_metadatum_to_json_str(datum, CSL.MetadataJsonSchema.BasicConversions)
  } catch {
    return CSL.decode_metadatum_to_json_str(datum, CSL.MetadataJsonSchema.DetailedSchema)
  }
}
