import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { ApiError } from '../../../lib/errors.ts'
import { hexBytes, MAJOR_ARRAY, MAJOR_MAP, malformedCbor, topLevelMajorType } from '../cbor.ts'
import { listOf } from '../csl.ts'

export { listOf }

/**
 * Merges what an external signer returned into the ORIGINAL unsigned transaction. The body bytes
 * are never re-serialised (CSL FixedTransaction keeps them, and the raw witness-set parts), so the
 * body hash the signer signed cannot change, and scripts, datums and redeemers stay byte-exact.
 */

/** What a signer returned: a bare witness set (CIP-30 `signTx(tx, true)`) or a whole signed transaction. */
export type SignerAnswerKind = 'witness-set' | 'transaction'

export interface SignedTransaction {
  /** The signed transaction, CBOR hex. */
  cborHex: string
  txHash: string
  /** blake2b-256 of the original body bytes (equal to the transaction hash). */
  bodyHash: string
  answerKind: SignerAnswerKind
  /** Vkey witnesses the answer added (duplicates of witnesses already present are not counted). */
  addedWitnesses: number
  /** Vkey witnesses in the signed transaction. */
  vkeyWitnessCount: number
}

const UNSIGNED = 'unsignedTxCbor'
const ANSWER = 'signedTxCbor'

/** Parses a transaction keeping its original bytes; MALFORMED_CBOR when it is not one. */
export function parseTransaction(hex: unknown, target = UNSIGNED): CSL.FixedTransaction {
  const bytes = hexBytes(hex, target)
  if (topLevelMajorType(bytes, target) !== MAJOR_ARRAY) throw malformedCbor(`${target} is not a transaction (a CBOR array was expected)`, target)
  try {
    return CSL.FixedTransaction.from_bytes(bytes)
  } catch (error) {
    throw malformedCbor(`${target} is not a Conway-era transaction (${messageOf(error)})`, target)
  }
}

/** The body hash (hex) of a transaction, taken over its original body bytes. */
export const bodyHashOf = (txHex: string): string => parseTransaction(txHex).transaction_hash().to_hex()

/** Tells a bare witness set from a full transaction; MALFORMED_CBOR or MALFORMED_WITNESS_SET otherwise. */
export function signerAnswerKind(answerHex: unknown): SignerAnswerKind {
  const major = topLevelMajorType(hexBytes(answerHex, ANSWER), ANSWER)
  if (major === MAJOR_MAP) return 'witness-set'
  if (major === MAJOR_ARRAY) return 'transaction'
  throw malformedWitnessSet('the signer answer is neither a transaction witness set nor a transaction')
}

/**
 * The signed transaction: the original unsigned transaction plus the vkey witnesses of the signer's
 * answer. A full transaction must carry exactly the original body (WITNESS_BODY_MISMATCH otherwise).
 * Signatures are not judged here: `verify.ts` reports invalid ones.
 */
export function mergeSignerAnswer(unsignedTxHex: string, answerHex: string): SignedTransaction {
  const unsigned = parseTransaction(unsignedTxHex)
  const kind = signerAnswerKind(answerHex)
  const witnesses = kind === 'witness-set' ? witnessSetOf(answerHex) : witnessesOfSameBody(unsigned, answerHex)
  return addWitnesses(unsigned, listOf(witnesses.vkeys()), kind)
}

/** The unsigned transaction with the given vkey witnesses added (used by server-side signers such as the HSM). */
export function addVkeyWitnesses(unsignedTxHex: string, witnesses: CSL.Vkeywitness[]): SignedTransaction {
  return addWitnesses(parseTransaction(unsignedTxHex), witnesses, 'witness-set')
}

function addWitnesses(tx: CSL.FixedTransaction, witnesses: CSL.Vkeywitness[], answerKind: SignerAnswerKind): SignedTransaction {
  const before = tx.witness_set().vkeys()?.len() ?? 0
  for (const witness of witnesses) tx.add_vkey_witness(witness)
  const vkeyWitnessCount = tx.witness_set().vkeys()?.len() ?? 0
  const hash = tx.transaction_hash().to_hex()
  return { cborHex: tx.to_hex(), txHash: hash, bodyHash: hash, answerKind, addedWitnesses: vkeyWitnessCount - before, vkeyWitnessCount }
}

function witnessSetOf(answerHex: string): CSL.TransactionWitnessSet {
  try {
    return CSL.TransactionWitnessSet.from_hex(answerHex.trim())
  } catch (error) {
    throw malformedWitnessSet(`the signer answer is not a transaction witness set (${messageOf(error)})`)
  }
}

function witnessesOfSameBody(unsigned: CSL.FixedTransaction, answerHex: string): CSL.TransactionWitnessSet {
  let signed: CSL.FixedTransaction
  try {
    signed = CSL.FixedTransaction.from_hex(answerHex.trim())
  } catch (error) {
    throw malformedWitnessSet(`the signer answer is not a transaction (${messageOf(error)})`)
  }
  if (!Buffer.from(signed.raw_body()).equals(Buffer.from(unsigned.raw_body()))) {
    throw new ApiError(400, 'WITNESS_BODY_MISMATCH',
      `the signed transaction has another body (hash ${signed.transaction_hash().to_hex()}) than the signing request (hash ${unsigned.transaction_hash().to_hex()})`, { target: ANSWER })
  }
  return signed.witness_set()
}

const malformedWitnessSet = (message: string) => new ApiError(400, 'MALFORMED_WITNESS_SET', message, { target: ANSWER })

export const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))
