import type { Credential } from '../../srv/chains/chain-a/csl.ts'
import type { Value } from '../../srv/chains/chain-a/value.ts'

export type { Credential }

/** The data of a transaction output, before and after it is placed on chain. */
export interface OutputData {
  address: string
  payment: Credential | null
  /** Reward (stake) address of a base address, or null. */
  stakeAddress: string | null
  value: Value
  dataHash: string | null
  inlineDatum: string | null
  referenceScriptHash: string | null
  /** The reference script itself (CBOR of the output's script_ref, hex), for script witnesses and fees. */
  referenceScript: string | null
}

/** An output on chain; `ref` is `<tx hash>#<index>`. Spent outputs are kept, with the spender. */
export interface Output extends OutputData {
  ref: string
  txHash: string
  index: number
  blockHash: string
  spentBy: string | null
}

export interface PoolParams {
  hex: string
  vrfKeyHash: string
  pledge: bigint
  cost: bigint
  /** Margin as a fraction in millionths (exact arithmetic for rewards). */
  marginPpm: bigint
  rewardAccount: string
  owners: string[]
  metadata: PoolMetadata
}

export interface PoolMetadata {
  url: string
  hash: string
  ticker: string
  name: string
  description: string
  homepage: string
}

/** Certificates, normalised: a Conway combined certificate becomes several of these. */
export type Certificate =
  | { kind: 'registration'; stakeAddress: string; deposit: bigint; explicitDeposit: boolean }
  | { kind: 'deregistration'; stakeAddress: string; refund: bigint }
  | { kind: 'delegation'; stakeAddress: string; pool: string }
  | { kind: 'vote_delegation'; stakeAddress: string; drep: string }
  | { kind: 'pool_registration'; pool: PoolParams }
  | { kind: 'drep_registration'; drep: string; deposit: bigint }

export interface TxMetadata {
  label: string
  json: unknown
  /** CBOR of the single-label metadata map, hex. */
  cborHex: string
}

/** A transaction as the ledger keeps it: validated, with everything the API needs decoded. */
export interface LedgerTx {
  hash: string
  /** The submitted bytes; null for the genesis distribution. */
  cbor: Uint8Array | null
  size: number
  fee: bigint
  /** Deposits paid minus deposits refunded. */
  deposit: bigint
  treasuryDonation: bigint
  invalidBefore: bigint | null
  invalidHereafter: bigint | null
  inputs: string[]
  referenceInputs: string[]
  collateral: string[]
  outputs: OutputData[]
  /** Where what is left of the collateral goes when the scripts fail (created at index `outputs.length`). */
  collateralReturn: OutputData | null
  /** False when the transaction's scripts failed: only its collateral is consumed (`is_valid = false`). */
  validContract: boolean
  /** Minted (positive) and burned (negative) quantities by unit. */
  mint: Map<string, bigint>
  metadata: TxMetadata[]
  withdrawals: { stakeAddress: string; amount: bigint }[]
  certificates: Certificate[]
  redeemerCount: number
}

export interface Inclusion {
  blockHash: string
  blockHeight: number
  blockTime: number
  slot: number
  index: number
}

export interface TxRecord extends LedgerTx {
  included: Inclusion
}

export interface Block {
  hash: string
  height: number
  slot: number
  epoch: number
  epochSlot: number
  time: number
  /** Pool id (bech32) of the issuer, or a genesis marker for block 0. */
  slotLeader: string
  poolHex: string | null
  size: number
  txs: string[]
  fees: bigint
  output: bigint
  previousBlock: string | null
  vrfKey: string | null
  opCert: string | null
  opCertCounter: string | null
}

/** The outputs a transaction spends: its inputs, or only its collateral when its scripts failed. */
export const spentRefs = (tx: LedgerTx): string[] => (tx.validContract ? tx.inputs : tx.collateral)

/** The outputs a transaction creates, by index: its outputs, or only its collateral return when its scripts failed. */
export function createdOutputs(tx: LedgerTx): [number, OutputData][] {
  if (tx.validContract) return tx.outputs.map((output, index) => [index, output])
  return tx.collateralReturn ? [[tx.outputs.length, tx.collateralReturn]] : []
}
