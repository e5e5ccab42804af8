import cds from '@sap/cds'
import { createHash } from 'node:crypto'

/**
 * Known histories written straight into the chains' indexes (what the followers would have
 * written), so every figure can be worked out by hand. Times are given as 'MM-DD hh:mm' in 2026, UTC.
 */

const { INSERT, UPSERT } = cds.ql

export const hash = (label: string) => createHash('sha256').update(label).digest('hex')
/** 'MM-DD HH:MM' in 2026 (the fixed histories), or a whole 'YYYY-MM-DDTHH:MM' (histories relative to now). */
export const at = (when: string) => new Date(/^\d{4}-/.test(when) ? `${when}:00Z` : `2026-${when.replace(' ', 'T')}:00Z`).toISOString()

export interface ChainBBlock { height: number; when: string; author: string; epoch?: number }
export interface ChainBTransaction {
  label: string; height: number; fee?: number; status?: 'SUCCESS' | 'FAILURE' | 'PARTIAL_SUCCESS'; system?: boolean; shielded?: boolean
  action?: { kind: 'ContractCall' | 'ContractDeploy'; contract: string }
}

export async function chainBHistory(blocks: ChainBBlock[], transactions: ChainBTransaction[], sync: { indexedHeight: number; finalizedHeight: number; chainHeight?: number }) {
  await INSERT.into('chainb.Blocks').entries(blocks.map(block => ({
    hash: hash(`b ${block.height}`), height: block.height, timestamp: at(block.when), author: block.author, epoch: block.epoch ?? 1, finalized: block.height <= sync.finalizedHeight,
  })))
  await INSERT.into('chainb.Transactions').entries(transactions.map(tx => ({
    hash: hash(tx.label), block_hash: hash(`b ${tx.height}`), blockHeight: tx.height, transactionType: tx.system ? 'system' : 'regular',
    status: tx.system ? null : (tx.status ?? 'SUCCESS'), paidFees: tx.fee === undefined ? null : String(tx.fee), isShielded: !!tx.shielded,
  })))
  const actions = transactions.filter(tx => tx.action)
  if (actions.length) {
    await INSERT.into('chainb.ContractActions').entries(actions.map(tx => ({
      transaction_hash: hash(tx.label), position: 0, address: hash(tx.action!.contract), actionType: tx.action!.kind, blockHeight: tx.height,
    })))
  }
  await UPSERT.into('chainb.SyncState').entries({ ID: 'chain-b', network: 'devnet', chainHeight: sync.chainHeight ?? sync.indexedHeight, ...sync })
}

export interface ChainABlock { height: number; when: string; pool: string; epoch: number }
export interface ChainATransaction {
  label: string; height: number; fee: number; size: number; failed?: boolean; redeemers?: number; mints?: number
  inputs?: string[]; outputs: { address: string; lovelace: number; asset?: string }[]
}

export async function chainAHistory(blocks: ChainABlock[], transactions: ChainATransaction[], sync: { startHeight: number; indexedHeight: number; finalizedHeight: number }) {
  const blockOf = new Map(blocks.map(block => [block.height, block]))
  await INSERT.into('chaina.Blocks').entries(blocks.map(block => ({
    hash: hash(`a ${block.height}`), height: block.height, slot: block.height * 20, epoch: block.epoch, time: at(block.when), slotLeader: block.pool,
    txCount: transactions.filter(tx => tx.height === block.height).length,
  })))
  await INSERT.into('chaina.Transactions').entries(transactions.map(tx => ({
    hash: hash(tx.label), blockHash: hash(`a ${tx.height}`), blockHeight: tx.height, blockTime: at(blockOf.get(tx.height)!.when), fee: String(tx.fee), size: tx.size,
    validContract: !tx.failed, redeemerCount: tx.redeemers ?? 0, assetMintOrBurnCount: tx.mints ?? 0,
  })))
  const inputs = transactions.flatMap(tx => (tx.inputs ?? []).map((address, inputIndex) => ({ txHash: hash(tx.label), inputIndex, address, lovelace: '0', isCollateral: false, isReference: false })))
  if (inputs.length) await INSERT.into('chaina.TransactionInputs').entries(inputs)
  await INSERT.into('chaina.TransactionOutputs').entries(transactions.flatMap(tx => tx.outputs.map((output, outputIndex) => ({
    txHash: hash(tx.label), outputIndex, address: output.address, lovelace: String(output.lovelace),
  }))))
  const assets = transactions.flatMap(tx => tx.outputs.flatMap((output, outputIndex) => (output.asset
    ? [{ txHash: hash(tx.label), outputIndex, unit: output.asset, policyId: output.asset.slice(0, 56), assetNameHex: output.asset.slice(56), quantity: '1' }] : [])))
  if (assets.length) await INSERT.into('chaina.TransactionOutputAssets').entries(assets)
  const tip = blocks.find(block => block.height === sync.indexedHeight)!
  await UPSERT.into('chaina.SyncState').entries({ ID: 'chain-a', network: 'devnet', chainHeight: sync.indexedHeight, indexedHash: hash(`a ${tip.height}`), ...sync })
}
