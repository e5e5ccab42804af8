import type * as Port from './port.ts'

/**
 * Pure mappings from Koios REST API v1 rows to the chain-A port types. What Koios does not report
 * is null where the port allows it (a pool's live size, the supply locked in scripts, the total live
 * stake, an account's active epoch, a DRep's last active epoch); docs/chain-a-backends.md
 * lists these.
 */

export interface KoiosAsset { policy_id: string; asset_name: string | null; quantity: string }
interface KoiosOutputFields {
  value: string
  datum_hash?: string | null
  inline_datum?: { bytes: string } | null
  reference_script?: { hash: string } | null
  asset_list?: KoiosAsset[] | null
}
export interface KoiosTxOutput extends KoiosOutputFields {
  payment_addr: { bech32: string }
  tx_hash: string
  tx_index: number
}
export interface KoiosBlock {
  hash: string
  epoch_no: number
  abs_slot: number
  epoch_slot: number
  block_height: number
  block_size: number
  block_time: number
  tx_count: number
  vrf_key: string
  pool: string | null
  total_output?: string | null
  total_fees?: string | null
  num_confirmations?: number
  parent_hash: string | null
}
export interface KoiosEpoch {
  epoch_no: number
  out_sum: string
  fees: string
  tx_count: number
  blk_count: number
  start_time: number
  end_time: number
  first_block_time: number
  last_block_time: number
  active_stake: string | null
}
export type KoiosParameters = Record<string, unknown> & { epoch_no: number }
export interface KoiosTransaction {
  tx_hash: string
  block_hash: string
  block_height: number
  absolute_slot: number
  tx_timestamp: number
  tx_block_index: number
  tx_size: number
  fee: string
  deposit: string
  invalid_before: string | null
  invalid_after: string | null
  valid_contract?: boolean | null
  collateral_inputs?: KoiosTxOutput[] | null
  collateral_output?: KoiosTxOutput | null
  reference_inputs?: KoiosTxOutput[] | null
  inputs: KoiosTxOutput[]
  outputs: KoiosTxOutput[]
  withdrawals?: unknown[] | null
  assets_minted?: unknown[] | null
  metadata?: Record<string, unknown> | null
  certificates?: { type: string }[] | null
  plutus_contracts?: unknown[] | null
}
export interface KoiosAddress {
  address: string
  balance: string
  stake_address: string | null
  script_address: boolean
  utxo_set: KoiosOutputFields[]
}
export interface KoiosUtxo extends KoiosOutputFields {
  tx_hash: string
  tx_index: number
  address: string
  block_height: number
}
export interface KoiosAccount {
  stake_address: string
  status: string
  delegated_drep: string | null
  delegated_pool: string | null
  total_balance: string
  rewards: string
  withdrawals: string
  rewards_available: string
  reserves: string
  treasury: string
}
export interface KoiosPool {
  pool_id_bech32: string
  pool_id_hex: string
  vrf_key_hash: string | null
  margin: number | null
  fixed_cost: string | null
  pledge: string | null
  reward_addr: string | null
  owners: string[] | null
  meta_json: { name?: string; ticker?: string; homepage?: string; description?: string } | null
  pool_status: string
  retiring_epoch: number | null
  active_stake: string | null
  sigma: number | null
  block_count: number | null
  live_pledge: string | null
  live_stake: string | null
  live_delegators: number
  live_saturation: number | null
}
export interface KoiosDrep {
  drep_id: string
  hex: string
  has_script: boolean
  drep_status: string
  active?: boolean
  amount?: string
}
export interface KoiosMintingTx { tx_hash: string; block_time: number; quantity: string }
export type KoiosGenesis = Record<string, string | number>
export interface KoiosTotals { circulation: string; treasury: string; supply: string; reserves: string }

const text = (value: unknown): string | null => (value === null || value === undefined ? null : String(value))
const count = (list: unknown[] | null | undefined) => list?.length ?? 0

function assets(list: KoiosAsset[] | null | undefined): Port.AssetQuantity[] {
  return (list ?? []).map(asset => ({ unit: asset.policy_id + (asset.asset_name ?? ''), quantity: asset.quantity }))
}

function outputContent(output: KoiosOutputFields, address: string): Port.ChainOutputContent {
  return {
    address,
    lovelace: output.value,
    assets: assets(output.asset_list),
    dataHash: output.datum_hash ?? null,
    inlineDatum: output.inline_datum?.bytes ?? null,
    referenceScriptHash: output.reference_script?.hash ?? null,
  }
}

export function toBlock(block: KoiosBlock, tipHeight: number): Port.ChainBlock {
  return {
    hash: block.hash,
    height: block.block_height,
    slot: block.abs_slot,
    epoch: block.epoch_no,
    epochSlot: block.epoch_slot,
    time: block.block_time,
    slotLeader: block.pool ?? block.vrf_key,
    size: block.block_size,
    txCount: block.tx_count,
    output: block.total_output ?? null,
    fees: block.total_fees ?? null,
    previousBlock: block.parent_hash ?? null,
    confirmations: block.num_confirmations ?? Math.max(0, tipHeight - block.block_height),
  }
}

export function toEpoch(epoch: KoiosEpoch): Port.ChainEpoch {
  return {
    epoch: epoch.epoch_no,
    startTime: epoch.start_time,
    endTime: epoch.end_time,
    firstBlockTime: epoch.first_block_time,
    lastBlockTime: epoch.last_block_time,
    blockCount: epoch.blk_count,
    txCount: epoch.tx_count,
    output: epoch.out_sum,
    fees: epoch.fees,
    activeStake: epoch.active_stake ?? null,
  }
}

export function toProtocolParameters(params: KoiosParameters): Port.ChainProtocolParameters {
  const number = (name: string) => Number(params[name] ?? 0)
  const maybe = (name: string) => (params[name] === null || params[name] === undefined ? null : Number(params[name]))
  return {
    epoch: params.epoch_no,
    minFeeA: number('min_fee_a'),
    minFeeB: number('min_fee_b'),
    maxBlockSize: number('max_block_size'),
    maxTxSize: number('max_tx_size'),
    maxBlockHeaderSize: number('max_bh_size'),
    keyDeposit: text(params.key_deposit) ?? '0',
    poolDeposit: text(params.pool_deposit) ?? '0',
    eMax: number('max_epoch'),
    nOpt: number('optimal_pool_count'),
    a0: number('influence'),
    rho: number('monetary_expand_rate'),
    tau: number('treasury_growth_rate'),
    protocolMajorVer: number('protocol_major'),
    protocolMinorVer: number('protocol_minor'),
    minPoolCost: text(params.min_pool_cost) ?? '0',
    // Epochs before Babbage priced outputs per word; Koios reports no per-byte price there.
    coinsPerUtxoSize: text(params.coins_per_utxo_size) ?? '0',
    priceMem: maybe('price_mem'),
    priceStep: maybe('price_step'),
    maxTxExMem: text(params.max_tx_ex_mem),
    maxTxExSteps: text(params.max_tx_ex_steps),
    maxBlockExMem: text(params.max_block_ex_mem),
    maxBlockExSteps: text(params.max_block_ex_steps),
    maxValSize: text(params.max_val_size),
    collateralPercent: maybe('collateral_percent'),
    maxCollateralInputs: maybe('max_collateral_inputs'),
    govActionDeposit: text(params.gov_action_deposit),
    drepDeposit: text(params.drep_deposit),
    minFeeRefScriptCostPerByte: maybe('min_fee_ref_script_cost_per_byte'),
    costModels: params.cost_models === null || params.cost_models === undefined ? null : JSON.stringify(params.cost_models),
  }
}

/** Koios's certificate types the port counts. */
const DELEGATIONS = new Set(['delegation', 'stake_delegation'])
const STAKE_CERTIFICATES = new Set(['stake_registration', 'stake_deregistration'])
const POOL_UPDATES = new Set(['pool_update'])

/** `spenders`: who spent each output, by its index (Koios's tx_info does not say; the adapter finds them). */
export function toTransaction(tx: KoiosTransaction, spenders: Map<number, string>): Port.ChainTransaction {
  const input = (output: KoiosTxOutput, kind: 'spent' | 'collateral' | 'reference'): Port.ChainTxInput => ({
    ...outputContent(output, output.payment_addr.bech32), txHash: output.tx_hash, outputIndex: output.tx_index, collateral: kind === 'collateral', reference: kind === 'reference',
  })
  const output = (made: KoiosTxOutput, collateral: boolean): Port.ChainTxOutput => ({
    ...outputContent(made, made.payment_addr.bech32), outputIndex: made.tx_index, collateral, consumedBy: spenders.get(made.tx_index) ?? null,
  })
  const certificates = tx.certificates ?? []
  return {
    hash: tx.tx_hash,
    blockHash: tx.block_hash,
    blockHeight: tx.block_height,
    blockTime: tx.tx_timestamp,
    slot: tx.absolute_slot,
    index: tx.tx_block_index,
    fee: tx.fee,
    deposit: tx.deposit,
    size: tx.tx_size,
    invalidBefore: text(tx.invalid_before),
    invalidHereafter: text(tx.invalid_after),
    validContract: tx.valid_contract ?? true,
    inputs: [
      ...tx.inputs.map(spent => input(spent, 'spent')),
      ...(tx.collateral_inputs ?? []).map(spent => input(spent, 'collateral')),
      ...(tx.reference_inputs ?? []).map(read => input(read, 'reference')),
    ],
    outputs: [...tx.outputs.map(made => output(made, false)), ...(tx.collateral_output ? [output(tx.collateral_output, true)] : [])],
    metadata: Object.entries(tx.metadata ?? {})
      .sort(([a], [b]) => (BigInt(a) < BigInt(b) ? -1 : 1))
      .map(([label, json]) => ({ label, json: JSON.stringify(json) })),
    assetMintOrBurnCount: count(tx.assets_minted),
    withdrawalCount: count(tx.withdrawals),
    delegationCount: certificates.filter(certificate => DELEGATIONS.has(certificate.type)).length,
    stakeCertCount: certificates.filter(certificate => STAKE_CERTIFICATES.has(certificate.type)).length,
    poolUpdateCount: certificates.filter(certificate => POOL_UPDATES.has(certificate.type)).length,
    redeemerCount: count(tx.plutus_contracts),
  }
}

/** Shelley addresses are bech32 (addr1…, addr_test1…); Byron addresses are base58. */
const isByron = (address: string) => !/^addr(_test)?1/.test(address)

export function toAddress(address: KoiosAddress): Port.ChainAddress {
  const held = new Map<string, bigint>()
  for (const utxo of address.utxo_set) for (const { unit, quantity } of assets(utxo.asset_list)) held.set(unit, (held.get(unit) ?? 0n) + BigInt(quantity))
  return {
    address: address.address,
    stakeAddress: address.stake_address ?? null,
    era: isByron(address.address) ? 'byron' : 'shelley',
    script: address.script_address,
    lovelace: address.balance,
    assets: [...held].map(([unit, quantity]) => ({ unit, quantity: quantity.toString() })),
  }
}

export function toUtxo(utxo: KoiosUtxo, blockHash: string): Port.ChainUtxo {
  return { ...outputContent(utxo, utxo.address), txHash: utxo.tx_hash, outputIndex: utxo.tx_index, blockHash }
}

export function toAssetHistoryEntry(minting: KoiosMintingTx): Port.ChainAssetHistoryEntry {
  const burned = minting.quantity.startsWith('-')
  return { txHash: minting.tx_hash, action: burned ? 'burned' : 'minted', amount: burned ? minting.quantity.slice(1) : minting.quantity }
}

export function toAccount(account: KoiosAccount): Port.ChainAccount {
  return {
    stakeAddress: account.stake_address,
    active: account.status === 'registered',
    activeEpoch: null,
    controlledAmount: account.total_balance,
    rewardsSum: account.rewards,
    withdrawalsSum: account.withdrawals,
    reservesSum: account.reserves,
    treasurySum: account.treasury,
    withdrawableAmount: account.rewards_available,
    poolId: account.delegated_pool ?? null,
    drepId: account.delegated_drep ?? null,
  }
}

/** Koios reports a pool's saturation in percent (two decimals); the port, as Blockfrost, as a ratio. */
const saturation = (percent: number | null) => (percent ?? 0) / 100

export function toPool(pool: KoiosPool, blocksEpoch: number): Port.ChainPool {
  return {
    poolId: pool.pool_id_bech32,
    hex: pool.pool_id_hex,
    vrfKey: pool.vrf_key_hash ?? '',
    blocksMinted: pool.block_count ?? 0,
    blocksEpoch,
    liveStake: pool.live_stake ?? '0',
    liveSize: null,
    liveSaturation: saturation(pool.live_saturation),
    liveDelegators: pool.live_delegators,
    activeStake: pool.active_stake ?? '0',
    activeSize: pool.sigma ?? 0,
    declaredPledge: pool.pledge ?? '0',
    livePledge: pool.live_pledge ?? '0',
    marginCost: pool.margin ?? 0,
    fixedCost: pool.fixed_cost ?? '0',
    rewardAccount: pool.reward_addr ?? '',
    owners: pool.owners ?? [],
    retiring: pool.pool_status === 'retiring' || pool.retiring_epoch !== null,
    ticker: pool.meta_json?.ticker ?? null,
    name: pool.meta_json?.name ?? null,
    homepage: pool.meta_json?.homepage ?? null,
    description: pool.meta_json?.description ?? null,
  }
}

export function toPoolSummary(pool: KoiosPool): Port.ChainPoolSummary {
  return {
    poolId: pool.pool_id_bech32,
    hex: pool.pool_id_hex,
    activeStake: pool.active_stake ?? '0',
    liveStake: pool.live_stake ?? '0',
    liveSaturation: saturation(pool.live_saturation),
    blocksMinted: pool.block_count ?? 0,
    declaredPledge: pool.pledge ?? '0',
    marginCost: pool.margin ?? 0,
    fixedCost: pool.fixed_cost ?? '0',
    ticker: pool.meta_json?.ticker ?? null,
    name: pool.meta_json?.name ?? null,
    homepage: pool.meta_json?.homepage ?? null,
    description: pool.meta_json?.description ?? null,
  }
}

export function toDrep(drep: KoiosDrep): Port.ChainDrep {
  return {
    drepId: drep.drep_id,
    hex: drep.hex,
    amount: drep.amount ?? '0',
    hasScript: drep.has_script,
    retired: drep.drep_status === 'retired',
    expired: drep.active === false && drep.drep_status !== 'retired',
    lastActiveEpoch: null,
  }
}

export function toNetwork(totals: KoiosTotals, maxSupply: string, activeStake: string | null): Port.ChainNetwork {
  return {
    maxSupply,
    totalSupply: totals.supply,
    circulatingSupply: totals.circulation,
    lockedSupply: null,
    treasurySupply: totals.treasury,
    reservesSupply: totals.reserves,
    liveStake: null,
    activeStake: activeStake ?? '0',
  }
}

export function toGenesis(genesis: KoiosGenesis): Port.ChainGenesis {
  const number = (name: string) => Number(genesis[name])
  return {
    activeSlotsCoefficient: number('activeslotcoeff'),
    updateQuorum: number('updatequorum'),
    maxLovelaceSupply: String(genesis.maxlovelacesupply),
    networkMagic: number('networkmagic'),
    epochLength: number('epochlength'),
    systemStart: number('systemstart'),
    slotsPerKesPeriod: number('slotsperkesperiod'),
    slotLength: number('slotlength'),
    maxKesEvolutions: number('maxkesrevolutions'),
    securityParam: number('securityparam'),
  }
}
