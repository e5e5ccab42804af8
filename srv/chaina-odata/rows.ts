import type * as Chain from '../chains/chain-a/port.ts'
import { describeAsset } from '../chains/chain-a/assets.ts'
import { describeAddress } from '../chains/chain-a/identifiers.ts'

/** Maps chain-A port records to rows of the read cache (db/chain-a.cds). */

export const isoTime = (unixSeconds: number | null | undefined) =>
  unixSeconds === null || unixSeconds === undefined ? null : new Date(unixSeconds * 1000).toISOString()

/** Int64 columns take numbers; the values (slots, execution units) are far below 2^53. */
const toNumber = (value: string | null) => (value === null ? null : Number(value))

const assetRow = (asset: Chain.AssetQuantity) => ({ unit: asset.unit, ...describeAsset(asset.unit), quantity: asset.quantity })

export function blockRow(block: Chain.ChainBlock) {
  return {
    hash: block.hash,
    height: block.height,
    slot: block.slot,
    epoch: block.epoch,
    epochSlot: block.epochSlot,
    time: isoTime(block.time),
    slotLeader: block.slotLeader,
    size: block.size,
    txCount: block.txCount,
    output: block.output,
    fees: block.fees,
    previousBlock: block.previousBlock,
  }
}

export function epochRow(epoch: Chain.ChainEpoch) {
  return {
    epoch: epoch.epoch,
    startTime: isoTime(epoch.startTime),
    endTime: isoTime(epoch.endTime),
    firstBlockTime: isoTime(epoch.firstBlockTime),
    lastBlockTime: isoTime(epoch.lastBlockTime),
    blockCount: epoch.blockCount,
    txCount: epoch.txCount,
    output: epoch.output,
    fees: epoch.fees,
    activeStake: epoch.activeStake,
  }
}

export function parametersRow(p: Chain.ChainProtocolParameters) {
  return {
    ...p,
    maxTxExMem: toNumber(p.maxTxExMem),
    maxTxExSteps: toNumber(p.maxTxExSteps),
    maxBlockExMem: toNumber(p.maxBlockExMem),
    maxBlockExSteps: toNumber(p.maxBlockExSteps),
    maxValSize: toNumber(p.maxValSize),
    fetchedAt: new Date().toISOString(),
  }
}

export function transactionRows(tx: Chain.ChainTransaction) {
  const transaction = {
    hash: tx.hash,
    blockHash: tx.blockHash,
    blockHeight: tx.blockHeight,
    blockTime: isoTime(tx.blockTime),
    slot: tx.slot,
    txIndex: tx.index,
    fee: tx.fee,
    deposit: tx.deposit,
    size: tx.size,
    invalidBefore: toNumber(tx.invalidBefore),
    invalidHereafter: toNumber(tx.invalidHereafter),
    validContract: tx.validContract,
    inputCount: tx.inputs.length,
    outputCount: tx.outputs.length,
    assetMintOrBurnCount: tx.assetMintOrBurnCount,
    withdrawalCount: tx.withdrawalCount,
    delegationCount: tx.delegationCount,
    stakeCertCount: tx.stakeCertCount,
    redeemerCount: tx.redeemerCount,
    hasMetadata: tx.metadata.length > 0,
  }
  const inputs = tx.inputs.map((input, inputIndex) => ({
    txHash: tx.hash,
    inputIndex,
    address: input.address,
    spentTxHash: input.txHash,
    spentOutputIndex: input.outputIndex,
    lovelace: input.lovelace,
    dataHash: input.dataHash,
    inlineDatum: input.inlineDatum,
    referenceScriptHash: input.referenceScriptHash,
    isCollateral: input.collateral,
    isReference: input.reference,
  }))
  const inputAssets = tx.inputs.flatMap((input, inputIndex) => input.assets.map(asset => ({ txHash: tx.hash, inputIndex, ...assetRow(asset) })))
  const outputs = tx.outputs.map(output => ({
    txHash: tx.hash,
    outputIndex: output.outputIndex,
    address: output.address,
    lovelace: output.lovelace,
    dataHash: output.dataHash,
    inlineDatum: output.inlineDatum,
    referenceScriptHash: output.referenceScriptHash,
    isCollateral: output.collateral,
  }))
  const outputAssets = tx.outputs.flatMap(output => output.assets.map(asset => ({ txHash: tx.hash, outputIndex: output.outputIndex, ...assetRow(asset) })))
  const metadata = tx.metadata.map(entry => ({ txHash: tx.hash, label: entry.label, payload: entry.json }))
  return { transaction, inputs, inputAssets, outputs, outputAssets, metadata }
}

export function addressRows(address: string, summary: Chain.ChainAddress | null, utxos: Chain.ChainUtxo[]) {
  const shape = describeAddress(address)
  const assets = summary?.assets ?? []
  const row = {
    address,
    stakeAddress: summary?.stakeAddress ?? null,
    type: summary?.era === 'byron' ? 'byron' : shape.type,
    isScript: summary?.script ?? shape.isScript,
    totalLovelace: summary?.lovelace ?? '0',
    utxoCount: utxos.length,
    assetCount: assets.length,
    fetchedAt: new Date().toISOString(),
  }
  const assetRows = assets.map(asset => ({ address, ...assetRow(asset) }))
  const utxoRows = utxos.map(utxo => ({
    txHash: utxo.txHash,
    outputIndex: utxo.outputIndex,
    address: utxo.address,
    lovelace: utxo.lovelace,
    blockHash: utxo.blockHash,
    dataHash: utxo.dataHash,
    inlineDatum: utxo.inlineDatum,
    referenceScriptHash: utxo.referenceScriptHash,
  }))
  const utxoAssetRows = utxos.flatMap(utxo => utxo.assets.map(asset => ({ txHash: utxo.txHash, outputIndex: utxo.outputIndex, address: utxo.address, ...assetRow(asset) })))
  return { address: row, assets: assetRows, utxos: utxoRows, utxoAssets: utxoAssetRows }
}

export function addressTransactionRows(address: string, history: Chain.ChainAddressTransaction[]) {
  return history.map(entry => ({
    address,
    txHash: entry.txHash,
    txIndex: entry.txIndex,
    blockHeight: entry.blockHeight,
    blockTime: isoTime(entry.blockTime),
  }))
}

export function accountRow(account: Chain.ChainAccount) {
  return { ...account, fetchedAt: new Date().toISOString() }
}

export function poolRow(pool: Chain.ChainPool) {
  return {
    poolId: pool.poolId,
    hex: pool.hex,
    vrfKey: pool.vrfKey,
    ticker: pool.ticker,
    name: pool.name,
    homepage: pool.homepage,
    description: pool.description,
    blocksMinted: pool.blocksMinted,
    blocksEpoch: pool.blocksEpoch,
    liveStake: pool.liveStake,
    liveSize: pool.liveSize,
    liveSaturation: pool.liveSaturation,
    liveDelegators: pool.liveDelegators,
    activeStake: pool.activeStake,
    activeSize: pool.activeSize,
    pledge: pool.declaredPledge,
    livePledge: pool.livePledge,
    margin: pool.marginCost,
    fixedCost: pool.fixedCost,
    rewardAccount: pool.rewardAccount,
    owners: JSON.stringify(pool.owners),
    retiring: pool.retiring,
    fetchedAt: new Date().toISOString(),
  }
}

/** A pool as the pool list reports it: its registration details stay as a keyed read left them. */
export function poolSummaryRow(pool: Chain.ChainPoolSummary, position: number) {
  return {
    poolId: pool.poolId,
    hex: pool.hex,
    ticker: pool.ticker,
    name: pool.name,
    homepage: pool.homepage,
    description: pool.description,
    blocksMinted: pool.blocksMinted,
    liveStake: pool.liveStake,
    liveSaturation: pool.liveSaturation,
    activeStake: pool.activeStake,
    pledge: pool.declaredPledge,
    margin: pool.marginCost,
    fixedCost: pool.fixedCost,
    position,
    fetchedAt: new Date().toISOString(),
  }
}

/** The columns a pool row from the pool list carries (the others need a keyed read of the pool). */
export const POOL_LIST_COLUMNS = Object.keys(poolSummaryRow({} as Chain.ChainPoolSummary, 0))

/** A DRep row; `position` only when it comes from the DRep list. */
export function drepRow(drep: Chain.ChainDrep, position?: number) {
  return { ...drep, ...(position === undefined ? {} : { position }), fetchedAt: new Date().toISOString() }
}

export function networkRow(network: string, supply: Chain.ChainNetwork, genesis: Chain.ChainGenesis) {
  return {
    network,
    ...supply,
    networkMagic: genesis.networkMagic,
    systemStart: isoTime(genesis.systemStart),
    epochLength: genesis.epochLength,
    slotLength: genesis.slotLength,
    securityParam: genesis.securityParam,
    activeSlotsCoefficient: genesis.activeSlotsCoefficient,
    updateQuorum: genesis.updateQuorum,
    maxLovelaceSupply: genesis.maxLovelaceSupply,
    slotsPerKesPeriod: genesis.slotsPerKesPeriod,
    maxKesEvolutions: genesis.maxKesEvolutions,
    fetchedAt: new Date().toISOString(),
  }
}

/** Events of one page of an asset's history, newest first from position `first`. */
export function assetHistoryRows(unit: string, history: Chain.ChainAssetHistoryEntry[], first = 0) {
  return history.map((entry, i) => ({ unit, txHash: entry.txHash, position: first + i, action: entry.action, amount: entry.amount }))
}
