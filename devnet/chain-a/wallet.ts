import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { toCslOutput, transactionInput } from '../../srv/chains/chain-a/csl.ts'
import type { Ledger } from './ledger.ts'
import type { OutputData } from './types.ts'

/** Transaction-building helpers shared by the activity generator and tests. */

/** Unspent outputs of an address as the mempool sees them (pending spends removed, pending outputs added). */
export function spendableOutputs(ledger: Ledger, address: string): (OutputData & { ref: string })[] {
  const pending = ledger.pendingView
  return [...ledger.unspentAt(address).filter(output => !pending.isSpent(output.ref)), ...pending.createdAt(address)]
}

export const toUnspentOutput = (output: OutputData & { ref: string }) => CSL.TransactionUnspentOutput.new(transactionInput(output.ref), toCslOutput(output))

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
