/**
 * The chain-B port: what the services need from chain B (Midnight), independent of the upstream.
 * Reads follow the public indexer's GraphQL API (schema v4): the same names, hex encodings and
 * offsets; the adapter maps its answers into these shapes. Writes are calls of the
 * attestation-vault contract, sponsored: the fee is paid in the chain's fee resource (DUST) by the
 * service's sponsor, never by the caller.
 *
 * Conventions:
 * - Hashes, addresses, identifiers and contract state are lowercase hex without a prefix.
 * - Amounts (fees, balances) are integer strings (they exceed 2^53); times are unix seconds.
 * - A read that finds nothing answers `null` (or an empty list); an upstream that does not answer
 *   throws ApiError 503 CHAIN_B_UNAVAILABLE; an upstream that rejects a write throws ApiError 4xx
 *   with the rejection's code (see VaultRejection).
 */

export type TransactionResultStatus = 'SUCCESS' | 'PARTIAL_SUCCESS' | 'FAILURE'

export interface ChainBSegment {
  id: number
  success: boolean
}

export interface ChainBContractAction {
  /** ContractDeploy, ContractCall or ContractUpdate, as the indexer's __typename. */
  kind: 'ContractDeploy' | 'ContractCall' | 'ContractUpdate'
  address: string
  /**
   * The contract's state after this action, hex-encoded (the vault's: see vault.ts); only where it
   * is asked for (`contractAction`), null in blocks and transactions: a block of many calls would
   * otherwise carry the whole state once for each of them.
   */
  state: string | null
  /** The circuit called (ContractCall only). */
  entryPoint: string | null
}

export interface ChainBTransaction {
  /** RegularTransaction or SystemTransaction, as the indexer's __typename. */
  kind: 'RegularTransaction' | 'SystemTransaction'
  /** The indexer's numeric id of the transaction. */
  id: number
  hash: string
  protocolVersion: number
  /** Regular transactions only: the ledger identifiers; the last one identifies a submission. */
  identifiers: string[]
  /** Regular transactions only. */
  result: { status: TransactionResultStatus; segments: ChainBSegment[] } | null
  /** Regular transactions only: fees in DUST's smallest unit. */
  fees: { paidFees: string; estimatedFees: string } | null
  merkleTreeRoot: string | null
  startIndex: number | null
  endIndex: number | null
  contractActions: ChainBContractAction[]
  /** Unshielded outputs created and spent by the transaction. */
  unshieldedCreatedOutputs: ChainBUtxo[]
  unshieldedSpentOutputs: ChainBUtxo[]
  /** Number of zswap ledger events: a shielded transfer is visible only as these. */
  zswapLedgerEvents: number
  /** The raw transaction, hex (absent when not asked for). */
  raw?: string
}

export interface ChainBUtxo {
  /** The owner's unshielded address, Bech32m as the indexer gives it (`mn_addr_preprod1…`). */
  owner: string
  tokenType: string
  value: string
  intentHash: string
  outputIndex: number
}

export interface ChainBBlock {
  hash: string
  height: number
  protocolVersion: number
  timestamp: number
  author: string | null
  parentHash: string | null
  transactions: ChainBTransaction[]
}

export interface ChainBEpoch {
  epochNo: number
  durationSeconds: number
  elapsedSeconds: number
}

export type BlockOffset = { hash: string } | { height: number }
export type TransactionOffset = { hash: string } | { identifier: string }

/** A call of the attestation-vault contract, before it is signed by the attester. See vault.ts for the circuits. */
export interface VaultCall {
  circuit: string
  /** The circuit's arguments, by name; hex strings and small integers, and recordAttestations' claims. */
  args: Record<string, string | number | ZkClaim[]>
}

/** A zero-knowledge claim as recordAttestations takes it: a Groth16 proof (snarkjs JSON) and its public signals. */
export interface ZkClaim {
  circuit: string
  proof: { pi_a: string[]; pi_b: string[][]; pi_c: string[]; protocol: string; curve: string }
  publicSignals: string[]
  payloadHash: string
  payloadHashB?: string
}

/** A call signed by its attester and sponsored: what the submission API takes. */
export interface SponsoredCall {
  contractAddress: string
  call: VaultCall
  /** Unique per intended transaction: resubmitting the same nonce is idempotent (answers the first submission). */
  nonce: string
  /** The attester's ed25519 public key (hex) and signature over the call (see vault.ts, callDigest). */
  attesterKey: string
  signature: string
  /** The sponsor paying the fee: its ed25519 public key (hex) and signature over the same digest. */
  sponsorKey: string
  sponsorSignature: string
}

/** Which state of a contract: the indexer's id (growing along the chain) and the hash of the transaction whose action made it. */
export interface StateVersion { transactionId: number; transactionHash: string }

export interface Submission {
  /** The transaction's hash and its identifier (what `transactions(offset: {identifier})` finds). */
  hash: string
  identifier: string
  /** True when this nonce had been submitted before: the answer is the first submission's. */
  duplicate: boolean
}

export interface ChainBPort {
  /** The latest block (`block` without an offset). */
  tip(): Promise<ChainBBlock>
  block(offset: BlockOffset): Promise<ChainBBlock | null>
  /** A transaction and the height, hash and time of its block. */
  transactions(offset: TransactionOffset): Promise<(ChainBTransaction & { blockHeight: number; blockHash: string; blockTimestamp: number })[]>
  /** The contract's latest action (with its state and which state it is), or the one at an offset. */
  contractAction(address: string, offset?: { blockOffset: BlockOffset } | { transactionOffset: TransactionOffset }): Promise<(ChainBContractAction & { state: string; version: StateVersion }) | null>
  /** Which state the contract's latest action made, without the state: a small question whether it changed. */
  contractStateVersion(address: string): Promise<StateVersion | null>
  currentEpoch(): Promise<ChainBEpoch | null>
  /**
   * Blocks from a height on, then each new block, as the indexer's `blocks` subscription delivers
   * them; answers a function that ends the subscription. `onError` is called once when the stream
   * breaks (the caller resubscribes).
   */
  subscribeBlocks(fromHeight: number, onBlock: (block: ChainBBlock) => void, onError: (error: Error) => void): () => void
  /** Submits a sponsored vault call (the devnet's submission API; the public indexer has none). */
  submit(call: SponsoredCall): Promise<Submission>
  /** The sponsor's balance in the fee resource, as an integer string. */
  sponsorBalance(sponsorKey: string): Promise<string>
}
