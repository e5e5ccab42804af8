import type { Responses } from '@blockfrost/blockfrost-js'
import type * as Port from './port.ts'

/** Pure mappings from Blockfrost response bodies to the chain-A port types. */

type Amount = { unit: string; quantity: string }[]
type TxUtxos = Responses['tx_content_utxo']
type PoolMetadata = Partial<Extract<Responses['pool_metadata'], { pool_id: string }>> & { description?: string | null }

function splitAmount(amount: Amount): { lovelace: string; assets: Port.AssetQuantity[] } {
  let lovelace = '0'
  const assets: Port.AssetQuantity[] = []
  for (const { unit, quantity } of amount) {
    if (unit === 'lovelace') lovelace = quantity
    else assets.push({ unit, quantity })
  }
  return { lovelace, assets }
}

export function toBlock(block: Responses['block_content']): Port.ChainBlock {
  return {
    hash: block.hash,
    // Only Byron epoch-boundary blocks lack height, slot and epoch; they count as 0.
    height: block.height ?? 0,
    slot: block.slot ?? 0,
    epoch: block.epoch ?? 0,
    epochSlot: block.epoch_slot ?? 0,
    time: block.time,
    slotLeader: block.slot_leader,
    size: block.size,
    txCount: block.tx_count,
    output: block.output,
    fees: block.fees,
    previousBlock: block.previous_block,
    confirmations: block.confirmations,
  }
}

export function toEpoch(epoch: Responses['epoch_content']): Port.ChainEpoch {
  return {
    epoch: epoch.epoch,
    startTime: epoch.start_time,
    endTime: epoch.end_time,
    firstBlockTime: epoch.first_block_time,
    lastBlockTime: epoch.last_block_time,
    blockCount: epoch.block_count,
    txCount: epoch.tx_count,
    output: epoch.output,
    fees: epoch.fees,
    activeStake: epoch.active_stake,
  }
}

function costModelsJson(params: Responses['epoch_param_content']): string | null {
  const models = params.cost_models_raw ?? params.cost_models
  return models == null ? null : JSON.stringify(models)
}

export function toProtocolParameters(params: Responses['epoch_param_content']): Port.ChainProtocolParameters {
  return {
    epoch: params.epoch,
    minFeeA: params.min_fee_a,
    minFeeB: params.min_fee_b,
    maxBlockSize: params.max_block_size,
    maxTxSize: params.max_tx_size,
    maxBlockHeaderSize: params.max_block_header_size,
    keyDeposit: params.key_deposit,
    poolDeposit: params.pool_deposit,
    eMax: params.e_max,
    nOpt: params.n_opt,
    a0: params.a0,
    rho: params.rho,
    tau: params.tau,
    protocolMajorVer: params.protocol_major_ver,
    protocolMinorVer: params.protocol_minor_ver,
    minPoolCost: params.min_pool_cost,
    // Epochs before Babbage priced outputs per word; the upstream reports no per-byte price there.
    coinsPerUtxoSize: params.coins_per_utxo_size ?? '0',
    priceMem: params.price_mem,
    priceStep: params.price_step,
    maxTxExMem: params.max_tx_ex_mem,
    maxTxExSteps: params.max_tx_ex_steps,
    maxBlockExMem: params.max_block_ex_mem,
    maxBlockExSteps: params.max_block_ex_steps,
    maxValSize: params.max_val_size,
    collateralPercent: params.collateral_percent,
    maxCollateralInputs: params.max_collateral_inputs,
    govActionDeposit: params.gov_action_deposit ?? null,
    drepDeposit: params.drep_deposit ?? null,
    minFeeRefScriptCostPerByte: params.min_fee_ref_script_cost_per_byte ?? null,
    costModels: costModelsJson(params),
  }
}

/** The fields every kind of output record shares, whichever list it comes from. */
interface OutputRecord {
  address: string
  amount: Amount
  data_hash: string | null
  inline_datum: string | null
  reference_script_hash: string | null
}

function outputContent(record: OutputRecord): Port.ChainOutputContent {
  return {
    address: record.address,
    ...splitAmount(record.amount),
    dataHash: record.data_hash,
    inlineDatum: record.inline_datum,
    referenceScriptHash: record.reference_script_hash,
  }
}

function toTxInput(input: TxUtxos['inputs'][number]): Port.ChainTxInput {
  return { ...outputContent(input), txHash: input.tx_hash, outputIndex: input.output_index, collateral: input.collateral, reference: input.reference ?? false }
}

function toTxOutput(output: TxUtxos['outputs'][number]): Port.ChainTxOutput {
  return { ...outputContent(output), outputIndex: output.output_index, collateral: output.collateral, consumedBy: output.consumed_by_tx ?? null }
}

function toTxMetadata(entry: Responses['tx_content_metadata'][number]): Port.ChainTxMetadata {
  return { label: entry.label, json: JSON.stringify(entry.json_metadata) }
}

export function toTransaction(
  tx: Responses['tx_content'],
  utxos: TxUtxos | null,
  metadata: Responses['tx_content_metadata'] | null,
): Port.ChainTransaction {
  return {
    hash: tx.hash,
    blockHash: tx.block,
    blockHeight: tx.block_height,
    blockTime: tx.block_time,
    slot: tx.slot,
    index: tx.index,
    fee: tx.fees,
    deposit: tx.deposit,
    size: tx.size,
    invalidBefore: tx.invalid_before,
    invalidHereafter: tx.invalid_hereafter,
    validContract: tx.valid_contract,
    inputs: utxos?.inputs.map(toTxInput) ?? [],
    outputs: utxos?.outputs.map(toTxOutput) ?? [],
    metadata: metadata?.map(toTxMetadata) ?? [],
    assetMintOrBurnCount: tx.asset_mint_or_burn_count,
    withdrawalCount: tx.withdrawal_count,
    delegationCount: tx.delegation_count,
    stakeCertCount: tx.stake_cert_count,
    poolUpdateCount: tx.pool_update_count,
    redeemerCount: tx.redeemer_count,
  }
}

export function toAddress(address: Responses['address_content']): Port.ChainAddress {
  return {
    address: address.address,
    stakeAddress: address.stake_address,
    era: address.type,
    script: address.script,
    ...splitAmount(address.amount),
  }
}

export function toUtxo(utxo: Responses['address_utxo_content'][number]): Port.ChainUtxo {
  return { ...outputContent(utxo), txHash: utxo.tx_hash, outputIndex: utxo.output_index, blockHash: utxo.block }
}

export function toAddressTransaction(tx: Responses['address_transactions_content'][number]): Port.ChainAddressTransaction {
  return { txHash: tx.tx_hash, txIndex: tx.tx_index, blockHeight: tx.block_height, blockTime: tx.block_time }
}

export function toAssetHistoryEntry(entry: Responses['asset_history'][number]): Port.ChainAssetHistoryEntry {
  return { txHash: entry.tx_hash, action: entry.action, amount: entry.amount }
}

export function toAccount(account: Responses['account_content']): Port.ChainAccount {
  return {
    stakeAddress: account.stake_address,
    active: account.active,
    activeEpoch: account.active_epoch,
    controlledAmount: account.controlled_amount,
    rewardsSum: account.rewards_sum,
    withdrawalsSum: account.withdrawals_sum,
    reservesSum: account.reserves_sum,
    treasurySum: account.treasury_sum,
    withdrawableAmount: account.withdrawable_amount,
    poolId: account.pool_id,
    drepId: account.drep_id ?? null,
  }
}

/** `metadata` is null when the pool registered none; the upstream then answers 404 or `{}`. */
export function toPool(pool: Responses['pool'], metadata: Responses['pool_metadata'] | null): Port.ChainPool {
  const meta: PoolMetadata = metadata ?? {}
  return {
    poolId: pool.pool_id,
    hex: pool.hex,
    vrfKey: pool.vrf_key,
    blocksMinted: pool.blocks_minted,
    blocksEpoch: pool.blocks_epoch,
    liveStake: pool.live_stake,
    liveSize: pool.live_size,
    liveSaturation: pool.live_saturation,
    liveDelegators: pool.live_delegators,
    activeStake: pool.active_stake,
    activeSize: pool.active_size,
    declaredPledge: pool.declared_pledge,
    livePledge: pool.live_pledge,
    marginCost: pool.margin_cost,
    fixedCost: pool.fixed_cost,
    rewardAccount: pool.reward_account,
    owners: pool.owners,
    retiring: pool.retirement.length > 0,
    ticker: meta.ticker ?? null,
    name: meta.name ?? null,
    homepage: meta.homepage ?? null,
    description: meta.description ?? null,
  }
}

export function toPoolSummary(pool: Responses['pool_list_extended'][number]): Port.ChainPoolSummary {
  return {
    poolId: pool.pool_id,
    hex: pool.hex,
    activeStake: pool.active_stake,
    liveStake: pool.live_stake,
    liveSaturation: pool.live_saturation,
    blocksMinted: pool.blocks_minted,
    declaredPledge: pool.declared_pledge,
    marginCost: pool.margin_cost,
    fixedCost: pool.fixed_cost,
    ticker: pool.metadata?.ticker ?? null,
    name: pool.metadata?.name ?? null,
    homepage: pool.metadata?.homepage ?? null,
    description: pool.metadata?.description ?? null,
  }
}

export function toPoolDelegator(delegator: Responses['pool_delegators'][number]): Port.ChainDelegator {
  return { stakeAddress: delegator.address, amount: delegator.live_stake }
}

export function toDrepDelegator(delegator: Responses['drep_delegators'][number]): Port.ChainDelegator {
  return { stakeAddress: delegator.address, amount: delegator.amount }
}

/** A DRep as /governance/dreps/{id} or the DRep list reports it (the same figures). */
export function toDrep(drep: Responses['drep'] | Responses['dreps'][number]): Port.ChainDrep {
  return {
    drepId: drep.drep_id,
    hex: drep.hex,
    amount: drep.amount,
    hasScript: drep.has_script,
    retired: drep.retired,
    expired: drep.expired,
    lastActiveEpoch: drep.last_active_epoch,
  }
}

export function toNetwork(network: Responses['network']): Port.ChainNetwork {
  return {
    maxSupply: network.supply.max,
    totalSupply: network.supply.total,
    circulatingSupply: network.supply.circulating,
    lockedSupply: network.supply.locked,
    treasurySupply: network.supply.treasury,
    reservesSupply: network.supply.reserves,
    liveStake: network.stake.live,
    activeStake: network.stake.active,
  }
}

export function toGenesis(genesis: Responses['genesis_content']): Port.ChainGenesis {
  return {
    activeSlotsCoefficient: genesis.active_slots_coefficient,
    updateQuorum: genesis.update_quorum,
    maxLovelaceSupply: genesis.max_lovelace_supply,
    networkMagic: genesis.network_magic,
    epochLength: genesis.epoch_length,
    systemStart: genesis.system_start,
    slotsPerKesPeriod: genesis.slots_per_kes_period,
    slotLength: genesis.slot_length,
    maxKesEvolutions: genesis.max_kes_evolutions,
    securityParam: genesis.security_param,
  }
}
