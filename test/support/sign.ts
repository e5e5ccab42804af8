import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'

/**
 * What external signers answer for an unsigned transaction, made with CSL alone (not with the code
 * under test): a whole signed transaction, or a CIP-30 wallet's witness set.
 */

/** The transaction signed by the keys, body bytes unchanged, the way cardano-cli or a wallet answering a whole transaction would. */
export function signWith(unsignedTxCbor: string, ...keys: CSL.PrivateKey[]): string {
  const tx = CSL.FixedTransaction.from_hex(unsignedTxCbor)
  for (const key of keys) tx.sign_and_add_vkey_signature(key)
  return tx.to_hex()
}

/** What a CIP-30 wallet answers for `signTx(tx, true)`: a witness set holding only its vkey witnesses. */
export function witnessSetOf(unsignedTxCbor: string, ...keys: CSL.PrivateKey[]): string {
  const hash = CSL.FixedTransaction.from_hex(unsignedTxCbor).transaction_hash()
  const vkeys = CSL.Vkeywitnesses.new()
  for (const key of keys) vkeys.add(CSL.make_vkey_witness(hash, key))
  const witnesses = CSL.TransactionWitnessSet.new()
  witnesses.set_vkeys(vkeys)
  return witnesses.to_hex()
}
