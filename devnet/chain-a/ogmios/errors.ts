import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { listOf, refOfInput } from '../../../srv/chains/chain-a/csl.ts'
import { poolIdOf } from '../addresses.ts'
import type { LedgerRuleError } from '../decode.ts'
import type { Ledger } from '../ledger.ts'
import { ada, outputReference, stakeCredential, value } from './present.ts'

/**
 * The ledger's rejections as Ogmios' submitTransaction errors: the code and data Ogmios gives the
 * same ledger failure where there is one (3100–3168, and -32602 for bytes that do not decode),
 * otherwise 3997 with the ledger's rule and reason as data. The message is always the ledger's.
 */

export interface RpcErrorObject {
  code: number
  message: string
  data?: unknown
}

const ERAS = ['shelley', 'allegra', 'mary', 'alonzo', 'babbage', 'conway'] as const

/** Bytes that are no transaction: Ogmios reports what each era's decoder said. */
export const deserialisationFailure = (reason: string): RpcErrorObject => ({
  code: -32602,
  message: `Invalid transaction; It looks like the given transaction wasn't well-formed. ${reason}`,
  data: Object.fromEntries(ERAS.map(era => [era, reason])),
})

const detail = (error: LedgerRuleError) => error.message.slice(error.rule.length + 2)

/** `<n> lovelace + <q> <unit> …` (the ledger's description of a value) back into a value. */
function parseValue(text: string) {
  const [coin, ...assets] = text.split(' + ')
  const parsed = { coin: BigInt(coin.replace(/ lovelace$/, '')), assets: new Map<string, bigint>() }
  for (const asset of assets) {
    const [quantity, unit] = asset.split(' ')
    parsed.assets.set(unit, BigInt(quantity))
  }
  return value(parsed)
}

function unknownInputs(ledger: Ledger, bytes: Uint8Array) {
  try {
    const body = CSL.FixedTransaction.from_bytes(bytes).body()
    const refs = [...listOf(body.inputs()), ...listOf(body.collateral()), ...listOf(body.reference_inputs())].map(refOfInput)
    return refs.filter(ref => !ledger.pendingView.output(ref)).map(outputReference)
  } catch {
    return []
  }
}

/** Ogmios' code and data for the rules that have a counterpart; undefined otherwise. */
function specific(error: LedgerRuleError, ledger: Ledger, bytes: Uint8Array): Omit<RpcErrorObject, 'message'> | undefined {
  const text = detail(error)
  const match = (pattern: RegExp) => pattern.exec(text)
  switch (error.rule) {
    case 'DeserialiseFailure': return { code: -32602, data: Object.fromEntries(ERAS.map(era => [era, text])) }
    case 'BadInputsUTxO': {
      const refs = unknownInputs(ledger, bytes)
      return refs.length ? { code: 3117, data: { unknownOutputReferences: refs } } : undefined
    }
    case 'InputSetEmptyUTxO': return { code: 3121 }
    case 'NoCollateralInputs': return { code: 3132 }
    case 'MaxTxSizeUTxO': {
      const m = match(/size (\d+) exceeds the maximum (\d+)/)
      return m ? { code: 3119, data: { measuredTransactionSize: { bytes: Number(m[1]) }, maximumTransactionSize: { bytes: Number(m[2]) } } } : undefined
    }
    case 'OutsideValidityIntervalUTxO': {
      const m = match(/current slot (\d+) is (?:before invalid_before|not before invalid_hereafter) (\d+)/)
      if (!m) return undefined
      const bound = Number(m[2])
      return { code: 3118, data: { validityInterval: text.includes('invalid_before') ? { invalidBefore: bound } : { invalidAfter: bound }, currentSlot: Number(m[1]) } }
    }
    case 'FeeTooSmallUTxO': {
      const m = match(/fee (\d+) is below the minimum (\d+)/)
      return m ? { code: 3122, data: { minimumRequiredFee: ada(BigInt(m[2])), providedFee: ada(BigInt(m[1])) } } : undefined
    }
    case 'ValueNotConservedUTxO': {
      const m = match(/^consumed (.+), produced (.+)$/)
      return m ? { code: 3123, data: { valueConsumed: parseValue(m[1]), valueProduced: parseValue(m[2]) } } : undefined
    }
    case 'MissingVKeyWitnessesUTXOW': {
      const m = match(/missing signature of key hash ([0-9a-f]{56})/)
      return m ? { code: 3101, data: { missingSignatories: [m[1]] } } : undefined
    }
    case 'MissingScriptWitnessesUTXOW': {
      const m = match(/script hash ([0-9a-f]{56})/)
      return m ? { code: 3102, data: { missingScripts: [m[1]] } } : undefined
    }
    case 'ScriptWitnessNotValidatingUTXOW': {
      const m = match(/native script ([0-9a-f]{56})/)
      return m ? { code: 3103, data: { failingNativeScripts: [m[1]] } } : undefined
    }
    case 'StakeKeyRegisteredDELEG': {
      const m = match(/stake credential (\S+) is already registered/)
      return m ? { code: 3145, data: { knownCredential: stakeCredential(m[1]).credential, from: stakeCredential(m[1]).from } } : undefined
    }
    case 'StakeKeyNotRegisteredDELEG':
    case 'StakeDelegationImpossibleDELEG': {
      const m = match(/stake credential (\S+) is not registered/)
      return m ? { code: 3146, data: { unknownCredential: stakeCredential(m[1]).credential, from: stakeCredential(m[1]).from } } : undefined
    }
    case 'StakeKeyNonZeroAccountBalanceDELEG': {
      const m = match(/still holds (\d+) lovelace/)
      return m ? { code: 3147, data: { nonEmptyRewardAccountBalance: ada(BigInt(m[1])) } } : undefined
    }
    case 'DelegateeNotRegisteredDELEG': {
      const m = match(/pool ([0-9a-f]{56}) is not registered/)
      return m ? { code: 3140, data: { unknownStakePool: poolIdOf(m[1]) } } : undefined
    }
    case 'ValidationTagMismatch':
      return { code: 3136, data: { declaredSpending: text.includes('is_valid = false') ? 'collaterals' : 'inputs', mismatchReason: text } }
  }
  return undefined
}

export function submitError(error: LedgerRuleError, ledger: Ledger, bytes: Uint8Array): RpcErrorObject {
  let known: Omit<RpcErrorObject, 'message'> | undefined
  try {
    known = specific(error, ledger, bytes)
  } catch {
    known = undefined
  }
  return known ? { ...known, message: error.message } : { code: 3997, message: error.message, data: { rule: error.rule, reason: detail(error) } }
}
