import type { Block, ContractAction, Transaction, TransactionSegment, UnshieldedUtxo } from '#cds-models/chainb'
import type { ChainBBlock, ChainBContractAction, ChainBEpoch, ChainBTransaction, ChainBUtxo } from '../chains/chain-b/port.ts'

/** What one block becomes in the chain index. */
export interface BlockRows {
  block: Block
  transactions: Transaction[]
  segments: TransactionSegment[]
  contractActions: ContractAction[]
  /** Unshielded outputs the block's transactions create. */
  created: UnshieldedUtxo[]
  /** Outputs they spend, each with the spending transaction. */
  spent: { utxo: ChainBUtxo; spentBy: string }[]
}

export const isoTime = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString()

/** A block's epoch from its time (unix seconds); null when the chain's epochs are not known. */
export type EpochClock = (timestamp: number) => number | null

/**
 * The epoch clock of the upstream's current epoch info: blocks carry no epoch, but epochs have one
 * length, so a block's epoch follows from how far its time is from the current epoch's start.
 */
export function epochClock(info: ChainBEpoch | null, nowSeconds = Date.now() / 1000): EpochClock {
  if (!info || !(info.durationSeconds > 0)) return () => null
  const currentStart = nowSeconds - info.elapsedSeconds
  return timestamp => Math.max(0, info.epochNo + Math.floor((timestamp - currentStart) / info.durationSeconds))
}

export function rowsOf(block: ChainBBlock, epochOf: EpochClock = () => null): BlockRows {
  const rows: BlockRows = { block: { ...blockRow(block), epoch: epochOf(block.timestamp) }, transactions: [], segments: [], contractActions: [], created: [], spent: [] }
  for (const tx of block.transactions) {
    rows.transactions.push(transactionRow(tx, block))
    for (const segment of tx.result?.segments ?? []) rows.segments.push({ transaction_hash: tx.hash, segmentId: segment.id, success: segment.success })
    tx.contractActions.forEach((action, position) => rows.contractActions.push(contractActionRow(action, position, tx.hash, block.height)))
    for (const utxo of tx.unshieldedCreatedOutputs) rows.created.push({ ...utxoRow(utxo), createdAtTransaction_hash: tx.hash })
    for (const utxo of tx.unshieldedSpentOutputs) rows.spent.push({ utxo, spentBy: tx.hash })
  }
  return rows
}

function blockRow(block: ChainBBlock): Block {
  return {
    hash: block.hash,
    height: block.height,
    protocolVersion: block.protocolVersion,
    timestamp: isoTime(block.timestamp),
    author: block.author,
    parentHash: block.parentHash,
    txCount: block.transactions.length,
    finalized: false,
  }
}

function transactionRow(tx: ChainBTransaction, block: ChainBBlock): Transaction {
  return {
    hash: tx.hash,
    block_hash: block.hash,
    blockHeight: block.height,
    transactionId: tx.id,
    transactionType: tx.kind === 'RegularTransaction' ? 'regular' : 'system',
    protocolVersion: tx.protocolVersion,
    identifier: tx.identifiers.at(-1) ?? null,
    status: tx.result?.status ?? null,
    paidFees: tx.fees?.paidFees ?? null,
    estimatedFees: tx.fees?.estimatedFees ?? null,
    merkleTreeRoot: tx.merkleTreeRoot,
    startIndex: tx.startIndex,
    endIndex: tx.endIndex,
    isShielded: tx.zswapLedgerEvents > 0,
    zswapEventCount: tx.zswapLedgerEvents,
    unshieldedInputs: tx.unshieldedSpentOutputs.length,
    unshieldedOutputs: tx.unshieldedCreatedOutputs.length,
  }
}

function contractActionRow(action: ChainBContractAction, position: number, txHash: string, height: number): ContractAction {
  return {
    transaction_hash: txHash,
    position,
    address: action.address,
    actionType: action.kind,
    entryPoint: action.entryPoint,
    blockHeight: height,
  }
}

export const utxoRow = (utxo: ChainBUtxo): UnshieldedUtxo => ({
  intentHash: utxo.intentHash,
  outputIndex: utxo.outputIndex,
  owner: utxo.owner,
  tokenType: utxo.tokenType,
  value: utxo.value,
})
