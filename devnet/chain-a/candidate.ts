import type * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import type { PlutusLanguage, RedeemerBudget, RedeemerTag, SlotConfig } from '../../srv/chains/chain-a/plutus.ts'
import { LedgerRuleError, type DecodedTx } from './decode.ts'
import type { ProtocolParameters } from './params.ts'
import type { OutputData } from './types.ts'

/**
 * What the ledger rules work on: the transaction under validation (Candidate), what they may ask of
 * the ledger (LedgerView) and the rule itself. The rules are in `validate.ts` and, for scripts,
 * `scripts.ts`.
 */

export interface AccountState {
  registered: boolean
  deposit: bigint
  rewards: bigint
  drep: string | null
}

/** What validation may ask of the ledger; the mempool answers it with pending transactions applied. */
export interface LedgerView {
  /** An unspent output, or undefined. */
  output(ref: string): (OutputData & { ref: string }) | undefined
  account(stakeAddress: string): AccountState | undefined
  poolRegistered(hex: string): boolean
  drepRegistered(key: string): boolean
  /** Where a transaction with this hash already is, if anywhere. */
  transactionLocation(hash: string): 'chain' | 'mempool' | undefined
}

export interface ValidationContext {
  view: LedgerView
  /** The slot the transaction is validated at: the slot of the block that would include it. */
  slot: number
  params: ProtocolParameters
  /** Converts the validity interval to times for the script context. */
  slotConfig: SlotConfig
}

/** A script the transaction can use, from its witness set or as a reference script: native, or Plutus of a language. */
export interface AvailableScript {
  native: CSL.NativeScript | null
  language: PlutusLanguage | null
  inWitnessSet: boolean
}

/** A script execution the transaction needs: spending a script-locked input, or minting under a Plutus policy. */
export interface PlutusPurpose {
  tag: RedeemerTag
  index: number
  scriptHash: string
  language: PlutusLanguage
  /** The output spent, for `spend`. */
  spent: (OutputData & { ref: string }) | null
}

/** A redeemer as the witness set declares it, with its declared execution units. */
export type DeclaredRedeemer = RedeemerBudget

type Resolved = OutputData & { ref: string }

/** The transaction under validation, with what earlier rules established for later ones. */
export interface Candidate extends DecodedTx {
  resolvedInputs: Resolved[]
  resolvedReferenceInputs: Resolved[]
  resolvedCollateral: Resolved[]
  deposits: bigint
  refunds: bigint
  /** Key hashes whose signatures over the body verified. */
  signers: Set<string>
  /** Scripts the transaction provides (witness set, reference scripts), by hash. */
  scripts: Map<string, AvailableScript>
  /** Hashes of the scripts the transaction must run or satisfy. */
  neededScripts: string[]
  plutusPurposes: PlutusPurpose[]
  redeemers: DeclaredRedeemer[]
}

export type Rule = (candidate: Candidate, context: ValidationContext) => void

/** Refuses the transaction under the node's name for the rule. */
export const fail = (rule: string, detail: string): never => {
  throw new LedgerRuleError(rule, detail)
}
