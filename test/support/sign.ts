import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { addVkeyWitnesses, bodyHashOf } from '../../srv/chains/chain-a/signing/witnesses.ts'

/** Signs an unsigned transaction with private keys, the way a wallet or cardano-cli would. */
export function signWith(unsignedTxCbor: string, ...keys: CSL.PrivateKey[]): string {
  const hash = CSL.TransactionHash.from_hex(bodyHashOf(unsignedTxCbor))
  return addVkeyWitnesses(unsignedTxCbor, keys.map(key => CSL.make_vkey_witness(hash, key))).cborHex
}

/** A CIP-30 `signTx(tx, true)` answer: only the witness set. */
export function witnessSetOf(unsignedTxCbor: string, ...keys: CSL.PrivateKey[]): string {
  const hash = CSL.TransactionHash.from_hex(bodyHashOf(unsignedTxCbor))
  const witnesses = CSL.Vkeywitnesses.new()
  for (const key of keys) witnesses.add(CSL.make_vkey_witness(hash, key))
  const set = CSL.TransactionWitnessSet.new()
  set.set_vkeys(witnesses)
  return set.to_hex()
}
