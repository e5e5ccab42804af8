import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { parseAddress } from './addresses.ts'
import type { Ledger } from './ledger.ts'
import type { ProtocolParameters } from './params.ts'
import type { OutputData } from './types.ts'
import { toCslValue } from './values.ts'

/** Transaction-building helpers shared by the activity generator and tests. */

export const bigNum = (value: bigint | number) => CSL.BigNum.from_str(String(value))

function unitInterval(fraction: number): CSL.UnitInterval {
  const denominator = 10_000_000
  return CSL.UnitInterval.new(bigNum(Math.round(fraction * denominator)), bigNum(denominator))
}

export function transactionBuilderConfig(params: ProtocolParameters): CSL.TransactionBuilderConfig {
  return CSL.TransactionBuilderConfigBuilder.new()
    .fee_algo(CSL.LinearFee.new(bigNum(params.minFeeA), bigNum(params.minFeeB)))
    .coins_per_utxo_byte(bigNum(params.coinsPerUtxoByte))
    .pool_deposit(bigNum(params.poolDeposit))
    .key_deposit(bigNum(params.keyDeposit))
    .max_value_size(params.maxValSize)
    .max_tx_size(params.maxTxSize)
    .ex_unit_prices(CSL.ExUnitPrices.new(unitInterval(params.priceMem), unitInterval(params.priceStep)))
    .ref_script_coins_per_byte(CSL.UnitInterval.new(bigNum(params.minFeeRefScriptCostPerByte), bigNum(1)))
    .build()
}

/** Unspent outputs of an address as the mempool sees them (pending spends removed, pending outputs added). */
export function spendableOutputs(ledger: Ledger, address: string): (OutputData & { ref: string })[] {
  const pending = ledger.pendingView
  return [...ledger.unspentAt(address).filter(output => !pending.isSpent(output.ref)), ...pending.createdAt(address)]
}

export function toUnspentOutput(output: OutputData & { ref: string }): CSL.TransactionUnspentOutput {
  const [hash, index] = output.ref.split('#')
  return CSL.TransactionUnspentOutput.new(CSL.TransactionInput.new(CSL.TransactionHash.from_hex(hash), Number(index)), toCslOutput(output))
}

/** The output as a CSL object, with its datum and reference script. */
export function toCslOutput(output: OutputData): CSL.TransactionOutput {
  const result = CSL.TransactionOutput.new(parseAddress(output.address)!, toCslValue(output.value))
  if (output.inlineDatum) result.set_plutus_data(CSL.PlutusData.from_hex(output.inlineDatum))
  else if (output.dataHash) result.set_data_hash(CSL.DataHash.from_hex(output.dataHash))
  if (output.referenceScript) result.set_script_ref(CSL.ScriptRef.from_hex(output.referenceScript))
  return result
}

export function toUnspentOutputs(outputs: (OutputData & { ref: string })[]): CSL.TransactionUnspentOutputs {
  const list = CSL.TransactionUnspentOutputs.new()
  for (const output of outputs) list.add(toUnspentOutput(output))
  return list
}

/** Signs the body (its original bytes) with every key and answers the transaction's CBOR. */
export function signTransaction(tx: CSL.Transaction | Uint8Array, keys: CSL.PrivateKey[]): Uint8Array {
  const fixed = CSL.FixedTransaction.from_bytes(tx instanceof Uint8Array ? tx : tx.to_bytes())
  for (const key of keys) fixed.sign_and_add_vkey_signature(key)
  return fixed.to_bytes()
}

/** A native-script policy that only the key can mint under. */
export function signaturePolicy(key: CSL.PrivateKey): CSL.NativeScript {
  return CSL.NativeScript.new_script_pubkey(CSL.ScriptPubkey.new(key.to_public().hash()))
}
