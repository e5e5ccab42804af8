import * as B from '@harmoniclabs/buildooor'
import { badInput } from '../../../lib/errors.ts'
import { datumHashOf, refOf } from '../csl.ts'
import { languageViews } from '../plutus.ts'
import type { ChainUtxo } from '../port.ts'
import { valueOfUtxo, type Value } from '../value.ts'
import { spendIndex } from './build.ts'
import type { Assembler, Draft, Plan, TxOutputSpec } from './types.ts'

/**
 * The buildooor backend: the transaction is put together from buildooor's ledger types (its
 * re-export of cardano-ledger-ts), which write the CBOR, the auxiliary data hash and, with the cost
 * models' language views, the script data hash.
 *
 * buildooor's own TxBuilder.buildSync is not used: in 0.1.4 it gives native-script mints a redeemer
 * and then fails ("missing script for Mint redeemer"), prices minimum ADA without the ledger's
 * 160-byte overhead, and balances with its own script evaluation. Selection, balancing and
 * execution units are shared with the CSL backend instead (`build.ts`).
 */
export const buildooorAssembler: Assembler = {
  name: 'buildooor',
  encodeOutput: spec => txOut(spec).toCbor().toBuffer(),
  assemble,
}

function assemble(draft: Draft): Uint8Array {
  const { plan } = draft
  const auxiliaryData = plan.metadata ? new B.AuxiliaryData({ metadata: B.TxMetadata.fromCbor(plan.metadata) }) : undefined
  const witnesses = witnessSet(draft)
  const hasScriptData = (witnesses.redeemers?.length ?? 0) > 0
  const mint = mintValue(plan)
  const body = new B.TxBody({
    inputs: [...draft.inputs, ...plan.scriptInputs.map(input => input.utxo)].map(utxoOf) as [B.UTxO, ...B.UTxO[]],
    outputs: draft.outputs.map(txOut),
    fee: draft.fee,
    ttl: plan.validity.invalidHereafter ?? undefined,
    validityIntervalStart: plan.validity.invalidBefore ?? undefined,
    mint,
    auxDataHash: auxiliaryData?.hash,
    // The V3 language view from the protocol's cost model array as it is: cardano-costmodels-ts 1.3.0's own would
    // rewrite a 251-parameter model into its 297-parameter layout, and the hash would no longer match the ledger's.
    scriptDataHash: hasScriptData ? B.getScriptDataHash(witnesses, languageViews(plan.params.costModels, new Set(['PlutusV3']))) : undefined,
    collateralInputs: draft.collateral?.inputs.map(utxoOf),
    collateralReturn: draft.collateral?.returnOutput ? txOut(draft.collateral.returnOutput) : undefined,
    totCollateral: draft.collateral?.total,
    requiredSigners: plan.requiredSigners.length ? plan.requiredSigners.map(hash => new B.PubKeyHash(hash)) : undefined,
  })
  const tx = new B.Tx({ body, witnesses, auxiliaryData, isScriptValid: true })
  // cardano-ledger-ts 0.3.2 accepts `totCollateral` but never stores it (nor writes it); the body is given it here.
  if (draft.collateral) Object.defineProperty(tx.body, 'totCollateral', { value: draft.collateral.total, enumerable: true })
  return tx.toCbor().toBuffer()
}

function witnessSet(draft: Draft): B.TxWitnessSet {
  const { plan } = draft
  const redeemers = plan.scriptInputs.map((input, i) => new B.TxRedeemer({
    tag: B.TxRedeemerTag.Spend,
    index: spendIndex(draft, input.utxo),
    data: B.dataFromCbor(input.redeemer),
    execUnits: new B.ExBudget({ mem: draft.exUnits[i].mem, cpu: draft.exUnits[i].steps }),
  }))
  const datums = plan.scriptInputs.flatMap(input => (input.witnessDatum ? [witnessDatum(input.witnessDatum, input.utxo)] : []))
  const scripts = [...new Map(plan.scriptInputs.map(input => [input.scriptHash, input.script])).values()]
  return new B.TxWitnessSet({
    nativeScripts: plan.mints.length ? plan.mints.map(mint => new B.Script(B.ScriptType.NativeScript, Buffer.from(mint.script, 'hex'))) : undefined,
    plutusV3Scripts: scripts.length ? scripts.map(bytes => new B.Script(B.ScriptType.PlutusV3, bytes)) : undefined,
    redeemers: redeemers.length ? redeemers : undefined,
    datums: datums.length ? datums : undefined,
  })
}

/**
 * buildooor writes data in its own CBOR (maps with indefinite length, for one), so a witness datum
 * must be one whose hash survives that: otherwise the output's datum hash would not be found.
 */
function witnessDatum(cbor: string, utxo: ChainUtxo): B.Data {
  const data = B.dataFromCbor(cbor)
  const hash = B.toHex(B.blake2b_256(B.dataToCbor(data).toBuffer()))
  if (hash !== utxo.dataHash) {
    throw badInput('INVALID_PLUTUS_DATA', `buildooor encodes this datum differently from the bytes whose hash ${refOf(utxo)} carries (${hash} instead of ${utxo.dataHash}); build this spend with the csl builder`, 'scriptInputs')
  }
  return data
}

function ledgerValue(value: Value): B.Value {
  let result = B.Value.lovelaces(value.coin)
  for (const [unit, quantity] of value.assets) {
    result = B.Value.add(result, B.Value.singleAsset(new B.Hash28(unit.slice(0, 56)), Buffer.from(unit.slice(56), 'hex'), quantity))
  }
  return result
}

function txOut(spec: TxOutputSpec): B.TxOut {
  const datum = !spec.datum ? undefined
    : spec.datum.inline ? B.dataFromCbor(spec.datum.cbor)
      // By hash: the hash of the datum's canonical bytes, whichever builder later spends the output.
      : new B.Hash32(datumHashOf(spec.datum.cbor))
  return new B.TxOut({ address: B.Address.fromString(spec.address), value: ledgerValue(spec.value), datum })
}

const utxoOf = (utxo: ChainUtxo) => new B.UTxO({
  utxoRef: { id: utxo.txHash, index: utxo.outputIndex },
  resolved: { address: B.Address.fromString(utxo.address), value: ledgerValue(valueOfUtxo(utxo)) },
})

function mintValue(plan: Plan): B.Value | undefined {
  if (plan.mints.length === 0) return undefined
  let mint = B.Value.zero
  for (const { policyId, assets } of plan.mints) {
    for (const [name, quantity] of assets) mint = B.Value.add(mint, B.Value.singleAsset(new B.Hash28(policyId), Buffer.from(name, 'hex'), quantity))
  }
  return mint
}
