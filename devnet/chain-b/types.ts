import type { MidnightParameters } from '../../srv/chains/chain-b/midnight-parameters.ts'
import type { SponsoredCall, TransactionResultStatus } from '../../srv/chains/chain-b/port.ts'

/** The chain-B devnet's own records: what a block and a transaction hold, and how they are kept. */

export const PROTOCOL_VERSION = 8000
/** The unshielded token type of NIGHT. */
export const NIGHT = '00'.repeat(32)

export interface OutputSpec {
  /** The owner's address: the identity (sha256 of the public key) of its key, hex. */
  owner: string
  tokenType: string
  value: string
}

export interface OutputRef {
  intentHash: string
  outputIndex: number
}

/** An unshielded offer: outputs spent and created, signed by the key that owns the inputs. */
export interface UnshieldedOffer {
  signer: string
  inputs: OutputRef[]
  outputs: OutputSpec[]
}

/**
 * A regular transaction's body. `payer` pays the fee in DUST and signs the body (`payerSignature`)
 * — except for a sponsored vault call, where the call's own signatures (attester and sponsor over
 * `callDigest`) stand and the sponsor is the payer.
 */
export interface RegularBody {
  type: 'regular'
  nonce: string
  payer: string
  /** The guaranteed segment (0): an unshielded offer and shielded outputs (only their count is public). */
  unshielded?: UnshieldedOffer
  shieldedOutputs?: number
  /** The fallible segment (1): a call of the vault. */
  call?: SponsoredCall
  /** Over the body without this field (not used for a sponsored call alone). */
  payerSignature?: string
}

/**
 * The vault's deployment at genesis: a Midnight transaction (serialized, proven and bound), with
 * the address, hash and identifiers it makes (see vault-contract-state.ts). A regular transaction
 * that pays no fee.
 */
export interface DeployBody {
  type: 'deploy'
  address: string
  transaction: string
  hash: string
  identifiers: string[]
}

/** System transactions: the genesis distribution, faucet credits, parameter updates. */
export type SystemBody =
  | { type: 'mint'; outputs: OutputSpec[]; nonce: string }
  | { type: 'dust-grant'; publicKey: string; amount: string; nonce: string }
  | { type: 'parameters'; parameters: LedgerParameters; nonce: string }

export type TxBody = RegularBody | DeployBody | SystemBody

/** Midnight's ledger parameters: served serialized, and the prices the devnet's fees are computed with (feeOf in ledger.ts). */
export type LedgerParameters = MidnightParameters

export interface Utxo extends OutputSpec, OutputRef {
  /** Unix seconds of the block that created it. */
  ctime: number
  createdTxId: number
}

export interface ContractActionRecord {
  kind: 'ContractDeploy' | 'ContractCall' | 'ContractUpdate'
  address: string
  entryPoint: string | null
  /** Position in the contract's list of actions: its state is the state after this action. */
  index: number
}

export interface TxRecord {
  id: number
  hash: string
  identifiers: string[]
  kind: 'RegularTransaction' | 'SystemTransaction'
  body: TxBody
  height: number
  result: { status: TransactionResultStatus; segments: { id: number; success: boolean }[] } | null
  /** Why the fallible segment failed, if it did (not part of the indexer's API). */
  failure?: { code: string; message: string }
  fees: { paidFees: string; estimatedFees: string } | null
  zswap: { startIndex: number; endIndex: number; root: string; events: { id: number; raw: string }[] }
  created: Utxo[]
  spent: Utxo[]
  actions: ContractActionRecord[]
}

interface BlockHeader {
  height: number
  timestamp: number
  /** Changes with each reorg, so replaced blocks get other hashes. */
  salt: number
}

export interface Block extends BlockHeader {
  hash: string
  parentHash: string | null
  author: string
  epochNo: number
  parameters: LedgerParameters
  transactions: TxRecord[]
}

/** A block as the log keeps it: the header and the transaction bodies; everything else is recomputed on replay. */
export interface StoredBlock extends BlockHeader {
  hash: string
  bodies: TxBody[]
}

export class LedgerRejection extends Error {
  readonly status: number
  readonly code: string
  constructor(status: number, code: string, message: string) {
    super(message)
    this.status = status
    this.code = code
  }
}
