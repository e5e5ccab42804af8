import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { drepIdOf, poolIdOf, stakeAddressOfAddress } from '../addresses.ts'
import type { Account, AssetState, Drep, EpochState, Ledger, Pool } from '../ledger.ts'
import { GENESIS } from '../params.ts'
import { createdOutputs, type Block, type Output, type TxRecord } from '../types.ts'
import { sumValues, toAmounts } from '../values.ts'

/** The ledger's records in Blockfrost's JSON shapes (field names, string quantities, nulls). */

const str = (value: bigint | number) => String(value)

export function blockJson(ledger: Ledger, block: Block) {
  const empty = block.txs.length === 0
  return {
    time: block.time,
    height: block.height,
    hash: block.hash,
    slot: block.slot,
    epoch: block.epoch,
    epoch_slot: block.epochSlot,
    slot_leader: block.slotLeader,
    size: block.size,
    tx_count: block.txs.length,
    output: empty ? null : str(block.output),
    fees: empty ? null : str(block.fees),
    block_vrf: block.vrfKey,
    op_cert: block.opCert,
    op_cert_counter: block.opCertCounter,
    previous_block: block.previousBlock,
    next_block: ledger.block(block.height + 1)?.hash ?? null,
    confirmations: ledger.tip.height - block.height,
  }
}

export function transactionJson(tx: TxRecord) {
  const count = (kind: string) => tx.certificates.filter(c => c.kind === kind).length
  return {
    hash: tx.hash,
    block: tx.included.blockHash,
    block_height: tx.included.blockHeight,
    block_time: tx.included.blockTime,
    slot: tx.included.slot,
    index: tx.included.index,
    output_amount: toAmounts(sumValues(createdOutputs(tx).map(([, o]) => o.value))),
    fees: str(tx.fee),
    deposit: str(tx.deposit),
    size: tx.size,
    invalid_before: tx.invalidBefore === null ? null : str(tx.invalidBefore),
    invalid_hereafter: tx.invalidHereafter === null ? null : str(tx.invalidHereafter),
    utxo_count: tx.inputs.length + tx.outputs.length,
    withdrawal_count: tx.withdrawals.length,
    mir_cert_count: 0,
    delegation_count: count('delegation'),
    stake_cert_count: count('registration') + count('deregistration'),
    pool_update_count: count('pool_registration'),
    pool_retire_count: 0,
    asset_mint_or_burn_count: tx.validContract ? tx.mint.size : 0,
    redeemer_count: tx.redeemerCount,
    valid_contract: tx.validContract,
    treasury_donation: str(tx.treasuryDonation),
  }
}

function outputFields(output: Output) {
  return {
    address: output.address,
    amount: toAmounts(output.value),
    data_hash: output.dataHash,
    inline_datum: output.inlineDatum,
    reference_script_hash: output.referenceScriptHash,
  }
}

export function transactionUtxosJson(ledger: Ledger, tx: TxRecord) {
  const input = (ref: string, flags: { collateral: boolean; reference: boolean }) => {
    const output = ledger.outputs.get(ref)!
    return { ...outputFields(output), tx_hash: output.txHash, output_index: output.index, ...flags }
  }
  return {
    hash: tx.hash,
    inputs: [
      ...tx.inputs.map(ref => input(ref, { collateral: false, reference: false })),
      ...tx.collateral.map(ref => input(ref, { collateral: true, reference: false })),
      ...tx.referenceInputs.map(ref => input(ref, { collateral: false, reference: true })),
    ],
    // A transaction whose scripts failed created only its collateral return.
    outputs: createdOutputs(tx).map(([index]) => {
      const output = ledger.outputs.get(`${tx.hash}#${index}`)!
      return { ...outputFields(output), output_index: index, collateral: !tx.validContract, consumed_by_tx: output.spentBy }
    }),
  }
}

/** An address's balance (its unspent outputs), stake address, era and kind of payment credential. */
export function addressSummaryJson(ledger: Ledger, address: CSL.Address, text: string) {
  return {
    address: text,
    amount: toAmounts(sumValues(ledger.unspentAt(text).map(o => o.value))),
    stake_address: stakeAddressOfAddress(address),
    type: CSL.ByronAddress.from_address(address) ? 'byron' : 'shelley',
    script: address.payment_cred()?.kind() === CSL.CredKind.Script,
  }
}

export function utxoJson(output: Output) {
  return {
    address: output.address,
    tx_hash: output.txHash,
    tx_index: output.index,
    output_index: output.index,
    amount: toAmounts(output.value),
    block: output.blockHash,
    data_hash: output.dataHash,
    inline_datum: output.inlineDatum,
    reference_script_hash: output.referenceScriptHash,
  }
}

export function assetJson(asset: AssetState) {
  return {
    asset: asset.unit,
    policy_id: asset.policyId,
    asset_name: asset.nameHex || null,
    fingerprint: asset.fingerprint,
    quantity: str(asset.quantity),
    initial_mint_tx_hash: asset.initialMintTx,
    mint_or_burn_count: asset.history.length,
    onchain_metadata: asset.onchainMetadata,
    onchain_metadata_standard: asset.onchainStandard,
    onchain_metadata_extra: null,
    // Off-chain registry metadata (CIP-26) does not exist on the devnet.
    metadata: null,
  }
}

/** A DRep as Blockfrost and Koios name it: its bech32 id, or the predefined `drep_always_…` choice. */
export const drepLabel = (drep: string | null) => (drep === null || drep.startsWith('drep_always') ? drep : drepIdOf(drep))

export function accountJson(ledger: Ledger, account: Account) {
  return {
    stake_address: account.stakeAddress,
    active: account.registered,
    registered: account.registered,
    active_epoch: account.activeEpoch,
    controlled_amount: str(ledger.controlledStake(account.stakeAddress)),
    rewards_sum: str(account.rewardsSum),
    withdrawals_sum: str(account.withdrawalsSum),
    reserves_sum: '0',
    treasury_sum: '0',
    withdrawable_amount: str(account.rewards),
    pool_id: account.pool ? poolIdOf(account.pool) : null,
    drep_id: drepLabel(account.drep),
  }
}

function ratio(part: bigint, whole: bigint): number {
  return whole === 0n ? 0 : Number((part * 1_000_000_000n) / whole) / 1e9
}

function poolMetadata(pool: Pool) {
  const { url, hash, ticker, name, description, homepage } = pool.metadata
  return { url, hash, ticker, name, description, homepage }
}

/** Pool figures against live and active stake; saturation is live stake over total stake / n_opt. */
function poolStakes(ledger: Ledger, pool: Pool, live = ledger.liveStake()) {
  const liveStake = live.pools.get(pool.hex) ?? 0n
  const epoch = ledger.latestEpoch
  const activeStake = epoch.poolStake.get(pool.hex) ?? 0n
  const saturationPoint = (GENESIS.maxLovelaceSupply - ledger.pots.reserves) / BigInt(ledger.params.nOpt)
  return {
    liveStake,
    activeStake,
    liveSize: ratio(liveStake, live.total),
    activeSize: ratio(activeStake, epoch.activeStake),
    liveSaturation: ratio(liveStake, saturationPoint),
    delegators: [...live.accounts.values()].filter(a => a.pool === pool.hex).length,
  }
}

export function poolExtendedJson(ledger: Ledger, pool: Pool, live = ledger.liveStake()) {
  const stakes = poolStakes(ledger, pool, live)
  return {
    pool_id: pool.id,
    hex: pool.hex,
    active_stake: str(stakes.activeStake),
    live_stake: str(stakes.liveStake),
    live_saturation: stakes.liveSaturation,
    blocks_minted: pool.blocks.length,
    declared_pledge: str(pool.pledge),
    margin_cost: Number(pool.marginPpm) / 1e6,
    fixed_cost: str(pool.cost),
    metadata: poolMetadata(pool),
  }
}

export function poolJson(ledger: Ledger, pool: Pool) {
  const stakes = poolStakes(ledger, pool)
  return {
    pool_id: pool.id,
    hex: pool.hex,
    vrf_key: pool.vrfKeyHash,
    blocks_minted: pool.blocks.length,
    blocks_epoch: pool.blocksEpoch,
    live_stake: str(stakes.liveStake),
    live_size: stakes.liveSize,
    live_saturation: stakes.liveSaturation,
    live_delegators: stakes.delegators,
    active_stake: str(stakes.activeStake),
    active_size: stakes.activeSize,
    declared_pledge: str(pool.pledge),
    live_pledge: str(pool.owners.reduce((sum, owner) => sum + ledger.controlledStake(owner), 0n)),
    margin_cost: Number(pool.marginPpm) / 1e6,
    fixed_cost: str(pool.cost),
    reward_account: pool.rewardAccount,
    owners: pool.owners,
    registration: pool.registrations,
    retirement: pool.retirements,
    calidus_key: null,
  }
}

export function poolMetadataJson(pool: Pool) {
  return { pool_id: pool.id, hex: pool.hex, ...poolMetadata(pool) }
}

export function drepDelegators(ledger: Ledger, drep: Drep) {
  return [...ledger.accounts.values()].filter(account => account.registered && account.drep === drep.hex)
}

function drepFigures(ledger: Ledger, drep: Drep) {
  const amount = drepDelegators(ledger, drep).reduce((sum, account) => sum + ledger.controlledStake(account.stakeAddress), 0n)
  return {
    drep_id: drep.id,
    hex: drep.hex,
    amount: str(amount),
    has_script: false,
    retired: false,
    expired: ledger.currentEpoch - drep.lastActiveEpoch > ledger.params.drepActivity,
    last_active_epoch: drep.lastActiveEpoch,
  }
}

export const drepListJson = (ledger: Ledger, drep: Drep) => ({ ...drepFigures(ledger, drep), metadata: null })

export function drepJson(ledger: Ledger, drep: Drep) {
  const figures = drepFigures(ledger, drep)
  return { ...figures, active: !figures.retired, active_epoch: drep.registeredEpoch }
}

export function epochJson(ledger: Ledger, epoch: EpochState) {
  const start = ledger.slotTime(epoch.epoch * ledger.epochLength)
  const times = epoch.blocks.map(hash => ledger.block(hash)!.time)
  return {
    epoch: epoch.epoch,
    start_time: start,
    end_time: ledger.slotTime((epoch.epoch + 1) * ledger.epochLength),
    first_block_time: times[0] ?? start,
    last_block_time: times[times.length - 1] ?? start,
    block_count: epoch.blocks.length,
    tx_count: epoch.txCount,
    output: str(epoch.output),
    fees: str(epoch.fees),
    active_stake: str(epoch.activeStake),
  }
}

export function parametersJson(ledger: Ledger, epoch: EpochState) {
  const p = ledger.params
  return {
    epoch: epoch.epoch,
    min_fee_a: p.minFeeA,
    min_fee_b: p.minFeeB,
    max_block_size: p.maxBlockSize,
    max_tx_size: p.maxTxSize,
    max_block_header_size: p.maxBlockHeaderSize,
    key_deposit: str(p.keyDeposit),
    pool_deposit: str(p.poolDeposit),
    e_max: p.eMax,
    n_opt: p.nOpt,
    a0: p.a0,
    rho: p.rho,
    tau: p.tau,
    decentralisation_param: 0,
    extra_entropy: null,
    protocol_major_ver: p.protocolMajorVer,
    protocol_minor_ver: p.protocolMinorVer,
    min_utxo: str(p.coinsPerUtxoByte),
    min_pool_cost: str(p.minPoolCost),
    nonce: epoch.nonce,
    cost_models: p.costModels,
    cost_models_raw: p.costModels,
    price_mem: p.priceMem,
    price_step: p.priceStep,
    max_tx_ex_mem: str(p.maxTxExMem),
    max_tx_ex_steps: str(p.maxTxExSteps),
    max_block_ex_mem: str(p.maxBlockExMem),
    max_block_ex_steps: str(p.maxBlockExSteps),
    max_val_size: str(p.maxValSize),
    collateral_percent: p.collateralPercent,
    max_collateral_inputs: p.maxCollateralInputs,
    coins_per_utxo_size: str(p.coinsPerUtxoByte),
    coins_per_utxo_word: str(p.coinsPerUtxoByte),
    pvt_motion_no_confidence: 0.51,
    pvt_committee_normal: 0.51,
    pvt_committee_no_confidence: 0.51,
    pvt_hard_fork_initiation: 0.51,
    dvt_motion_no_confidence: 0.67,
    dvt_committee_normal: 0.67,
    dvt_committee_no_confidence: 0.6,
    dvt_update_to_constitution: 0.75,
    dvt_hard_fork_initiation: 0.6,
    dvt_p_p_network_group: 0.67,
    dvt_p_p_economic_group: 0.67,
    dvt_p_p_technical_group: 0.67,
    dvt_p_p_gov_group: 0.75,
    dvt_treasury_withdrawal: 0.67,
    committee_min_size: str(p.committeeMinSize),
    committee_max_term_length: str(p.committeeMaxTermLength),
    gov_action_lifetime: str(p.govActionLifetime),
    gov_action_deposit: str(p.govActionDeposit),
    drep_deposit: str(p.drepDeposit),
    drep_activity: str(p.drepActivity),
    pvtpp_security_group: 0.51,
    pvt_p_p_security_group: 0.51,
    min_fee_ref_script_cost_per_byte: p.minFeeRefScriptCostPerByte,
  }
}

export function genesisJson(ledger: Ledger) {
  return {
    active_slots_coefficient: GENESIS.activeSlotsCoefficient,
    update_quorum: GENESIS.updateQuorum,
    max_lovelace_supply: str(GENESIS.maxLovelaceSupply),
    network_magic: GENESIS.networkMagic,
    epoch_length: ledger.epochLength,
    system_start: ledger.systemStart,
    slots_per_kes_period: GENESIS.slotsPerKesPeriod,
    // Blockfrost reports whole seconds.
    slot_length: Math.max(1, Math.round(ledger.slotLengthMs / 1000)),
    max_kes_evolutions: GENESIS.maxKesEvolutions,
    security_param: ledger.securityParam,
  }
}

export function networkJson(ledger: Ledger) {
  const { reserves, treasury } = ledger.pots
  return {
    supply: {
      max: str(GENESIS.maxLovelaceSupply),
      total: str(GENESIS.maxLovelaceSupply - reserves),
      circulating: str(ledger.utxoCoin),
      locked: str(ledger.scriptLockedCoin),
      treasury: str(treasury),
      reserves: str(reserves),
    },
    stake: {
      live: str(ledger.liveStake().total),
      active: str(ledger.latestEpoch.activeStake),
    },
  }
}
