import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { sortedRefs } from '../../../srv/chains/chain-a/csl.ts'
import { parseAddress } from '../addresses.ts'
import { assetFingerprint, toHex } from '../crypto.ts'
import type { Account, AssetState, Drep, EpochState, Ledger, Pool } from '../ledger.ts'
import { GENESIS } from '../params.ts'
import { accountJson, addressSummaryJson, blockJson, drepDelegators, drepLabel, drepJson, drepListJson, epochJson, genesisJson, parametersJson, poolJson, transactionJson } from '../api/present.ts'
import { createdOutputs, type Block, type Certificate, type Output, type TxRecord } from '../types.ts'
import type { Value } from '../values.ts'

/**
 * The ledger's records in Koios' JSON shapes (REST API v1): lovelace amounts and quantities as
 * strings, heights, epochs, slots and times as numbers. Figures the Blockfrost presenters already
 * compute are taken from them. Where the devnet has no value for a field, the value Koios answers
 * in that case is given, with a comment.
 */

type Row = Record<string, unknown>

const str = (value: bigint | number) => String(value)

/** The devnet runs one era from its genesis (Conway parameters, protocol version 10). */
export const ERA = 'Conway'

// ---- network and epochs -------------------------------------------------------------------

export function tipRow(ledger: Ledger): Row {
  const tip = ledger.tip
  // `block_no` is the deprecated name the published schema still lists; Koios answers both.
  return { hash: tip.hash, era: ERA, epoch_no: tip.epoch, abs_slot: tip.slot, epoch_slot: tip.epochSlot, block_height: tip.height, block_no: tip.height, block_time: tip.time }
}

export function genesisRow(ledger: Ledger): Row {
  const g = genesisJson(ledger)
  const p = ledger.params
  const alonzo = {
    lovelacePerUTxOWord: Number(p.coinsPerUtxoByte) * 8,
    executionPrices: { prMem: p.priceMem, prSteps: p.priceStep },
    maxTxExUnits: { exUnitsMem: Number(p.maxTxExMem), exUnitsSteps: Number(p.maxTxExSteps) },
    maxBlockExUnits: { exUnitsMem: Number(p.maxBlockExMem), exUnitsSteps: Number(p.maxBlockExSteps) },
    maxValueSize: p.maxValSize,
    collateralPercentage: p.collateralPercent,
    maxCollateralInputs: p.maxCollateralInputs,
    costModels: { PlutusV1: p.costModels.PlutusV1, PlutusV2: p.costModels.PlutusV2 },
  }
  return {
    networkmagic: str(g.network_magic),
    networkid: GENESIS.networkId === 1 ? 'Mainnet' : 'Testnet',
    epochlength: str(g.epoch_length),
    // The genesis' slot length in seconds, fractions kept (Blockfrost rounds to whole seconds).
    slotlength: str(ledger.slotLengthMs / 1000),
    maxlovelacesupply: g.max_lovelace_supply,
    systemstart: g.system_start,
    activeslotcoeff: str(g.active_slots_coefficient),
    slotsperkesperiod: str(g.slots_per_kes_period),
    maxkesrevolutions: str(g.max_kes_evolutions),
    securityparam: str(g.security_param),
    updatequorum: str(g.update_quorum),
    alonzogenesis: JSON.stringify(alonzo),
  }
}

export function totalsRow(epoch: EpochState): Row {
  const t = epoch.totals
  return {
    epoch_no: epoch.epoch,
    circulation: str(t.circulation),
    treasury: str(t.treasury),
    reward: str(t.rewards),
    supply: str(GENESIS.maxLovelaceSupply - t.reserves),
    reserves: str(t.reserves),
    fees: str(t.fees),
    deposits_stake: str(t.depositsStake),
    deposits_drep: str(t.depositsDrep),
    // No governance proposals, MIR certificates or treasury withdrawals on the devnet; donations
    // go to the treasury at once (no donation pot waits for the epoch boundary).
    deposits_proposal: '0',
    treasury_donation: '0',
    treasury_withdrawal: '0',
    reserves_withdrawal: '0',
  }
}

/** Rewards earned for an epoch, once the epoch has closed (Koios: null until they are computed). */
function epochRewards(ledger: Ledger, epoch: number): bigint | null {
  if (epoch >= ledger.currentEpoch) return null
  let total = 0n
  for (const account of ledger.accounts.values()) for (const reward of account.rewardHistory) if (reward.epoch === epoch) total += reward.amount
  return total
}

export function epochInfoRow(ledger: Ledger, epoch: EpochState): Row {
  const e = epochJson(ledger, epoch)
  const rewards = epochRewards(ledger, epoch.epoch)
  return {
    epoch_no: e.epoch,
    era: ERA,
    out_sum: e.output,
    fees: e.fees,
    tx_count: e.tx_count,
    blk_count: e.block_count,
    start_time: e.start_time,
    end_time: e.end_time,
    first_block_time: e.first_block_time,
    last_block_time: e.last_block_time,
    active_stake: e.active_stake,
    total_rewards: rewards === null ? null : str(rewards),
    avg_blk_reward: rewards === null || e.block_count === 0 ? null : str(rewards / BigInt(e.block_count)),
  }
}

/** The block that opened the epoch's parameters: its first block, or the last before it for an epoch without blocks. */
function epochBlock(ledger: Ledger, epoch: EpochState): Block {
  if (epoch.blocks.length) return ledger.block(epoch.blocks[0])!
  const start = epoch.epoch * ledger.epochLength
  return [...ledger.blocks].reverse().find(block => block.slot < start) ?? ledger.blocks[0]
}

export function epochParamsRow(ledger: Ledger, epoch: EpochState): Row {
  const p = parametersJson(ledger, epoch)
  return {
    epoch_no: p.epoch,
    era: ERA,
    min_fee_a: p.min_fee_a,
    min_fee_b: p.min_fee_b,
    max_block_size: p.max_block_size,
    max_tx_size: p.max_tx_size,
    max_bh_size: p.max_block_header_size,
    key_deposit: p.key_deposit,
    pool_deposit: p.pool_deposit,
    max_epoch: p.e_max,
    optimal_pool_count: p.n_opt,
    influence: p.a0,
    monetary_expand_rate: p.rho,
    treasury_growth_rate: p.tau,
    decentralisation: p.decentralisation_param,
    extra_entropy: p.extra_entropy,
    protocol_major: p.protocol_major_ver,
    protocol_minor: p.protocol_minor_ver,
    min_utxo_value: p.min_utxo,
    min_pool_cost: p.min_pool_cost,
    // The genesis epoch has no nonce yet (Koios: null).
    nonce: p.nonce || null,
    block_hash: epochBlock(ledger, epoch).hash,
    cost_models: p.cost_models,
    price_mem: p.price_mem,
    price_step: p.price_step,
    max_tx_ex_mem: Number(p.max_tx_ex_mem),
    max_tx_ex_steps: Number(p.max_tx_ex_steps),
    max_block_ex_mem: Number(p.max_block_ex_mem),
    max_block_ex_steps: Number(p.max_block_ex_steps),
    max_val_size: Number(p.max_val_size),
    collateral_percent: p.collateral_percent,
    max_collateral_inputs: p.max_collateral_inputs,
    coins_per_utxo_size: p.coins_per_utxo_size,
    pvt_motion_no_confidence: p.pvt_motion_no_confidence,
    pvt_committee_normal: p.pvt_committee_normal,
    pvt_committee_no_confidence: p.pvt_committee_no_confidence,
    pvt_hard_fork_initiation: p.pvt_hard_fork_initiation,
    dvt_motion_no_confidence: p.dvt_motion_no_confidence,
    dvt_committee_normal: p.dvt_committee_normal,
    dvt_committee_no_confidence: p.dvt_committee_no_confidence,
    dvt_update_to_constitution: p.dvt_update_to_constitution,
    dvt_hard_fork_initiation: p.dvt_hard_fork_initiation,
    dvt_p_p_network_group: p.dvt_p_p_network_group,
    dvt_p_p_economic_group: p.dvt_p_p_economic_group,
    dvt_p_p_technical_group: p.dvt_p_p_technical_group,
    dvt_p_p_gov_group: p.dvt_p_p_gov_group,
    dvt_treasury_withdrawal: p.dvt_treasury_withdrawal,
    committee_min_size: Number(p.committee_min_size),
    committee_max_term_length: Number(p.committee_max_term_length),
    gov_action_lifetime: Number(p.gov_action_lifetime),
    gov_action_deposit: p.gov_action_deposit,
    drep_deposit: p.drep_deposit,
    drep_activity: Number(p.drep_activity),
    pvtpp_security_group: p.pvtpp_security_group,
    min_fee_ref_script_cost_per_byte: p.min_fee_ref_script_cost_per_byte,
  }
}

// ---- blocks -------------------------------------------------------------------------------

export function blockRow(ledger: Ledger, block: Block): Row {
  const b = blockJson(ledger, block)
  const p = ledger.params
  return {
    hash: b.hash,
    epoch_no: b.epoch,
    abs_slot: b.slot,
    epoch_slot: b.epoch_slot,
    block_height: b.height,
    block_size: b.size,
    block_time: b.time,
    tx_count: b.tx_count,
    // The genesis block has no issuer: no VRF key, pool or operational certificate (Koios: null).
    vrf_key: b.block_vrf,
    pool: block.poolHex ? b.slot_leader : null,
    op_cert_counter: b.op_cert_counter === null ? null : Number(b.op_cert_counter),
    proto_major: p.protocolMajorVer,
    proto_minor: p.protocolMinorVer,
    parent_hash: b.previous_block,
  }
}

export function blockInfoRow(ledger: Ledger, block: Block): Row {
  const b = blockJson(ledger, block)
  const { pool, op_cert_counter, proto_major, proto_minor, parent_hash, ...row } = blockRow(ledger, block)
  return {
    ...row,
    era: ERA,
    op_cert: b.op_cert,
    op_cert_counter,
    pool,
    proto_major,
    proto_minor,
    // Blocks without transactions have no totals (Koios: null, a sum over no rows).
    total_output: b.output,
    total_fees: b.fees,
    num_confirmations: b.confirmations,
    parent_hash,
    // The tip has no child yet (Koios: null).
    child_hash: b.next_block,
  }
}

export const blockTxRows = (block: Block): Row[] =>
  block.txs.map(hash => ({ block_hash: block.hash, tx_hash: hash, epoch_no: block.epoch, block_height: block.height, block_time: block.time }))

// ---- outputs ------------------------------------------------------------------------------

export function assetItem(ledger: Ledger, unit: string, quantity: bigint): Row {
  const policy = unit.slice(0, 56)
  const name = unit.slice(56)
  return {
    policy_id: policy,
    asset_name: name,
    fingerprint: ledger.assets.get(unit)?.fingerprint ?? assetFingerprint(policy, name),
    // No token registry on the devnet: Koios' asset cache then holds 0 decimals.
    decimals: 0,
    quantity: str(quantity),
  }
}

export const assetItems = (ledger: Ledger, value: Value): Row[] => [...value.assets].map(([unit, quantity]) => assetItem(ledger, unit, quantity))

export function inlineDatum(cbor: string | null): Row | null {
  if (cbor === null) return null
  let value: unknown = null
  try {
    value = JSON.parse(CSL.PlutusData.from_hex(cbor).to_json(CSL.PlutusDatumSchema.DetailedSchema))
  } catch {
    // Data the detailed JSON schema cannot show (Koios: the bytes, no value).
  }
  return { bytes: cbor, value }
}

const PLUTUS_TYPES: Record<number, string> = {
  [CSL.LanguageKind.PlutusV1]: 'plutusV1',
  [CSL.LanguageKind.PlutusV2]: 'plutusV2',
  [CSL.LanguageKind.PlutusV3]: 'plutusV3',
}

export function referenceScript(output: Pick<Output, 'referenceScript' | 'referenceScriptHash'>): Row | null {
  if (!output.referenceScript || !output.referenceScriptHash) return null
  try {
    const ref = CSL.ScriptRef.from_hex(output.referenceScript)
    if (ref.is_plutus_script()) {
      const script = ref.plutus_script()!
      const bytes = script.bytes()
      return { hash: output.referenceScriptHash, size: bytes.length, type: PLUTUS_TYPES[script.language_version().kind()] ?? 'plutusV3', bytes: toHex(bytes), value: null }
    }
    const script = ref.native_script()!
    return { hash: output.referenceScriptHash, size: script.to_bytes().length, type: 'timelock', bytes: script.to_hex(), value: JSON.parse(script.to_json()) }
  } catch {
    return { hash: output.referenceScriptHash, size: output.referenceScript.length / 2, type: 'plutusV3', bytes: output.referenceScript, value: null }
  }
}

const paymentCredential = (output: Pick<Output, 'payment'>) => output.payment?.hash ?? null

export interface OutputOptions {
  assets: boolean
  scripts: boolean
}

/** An input or output in `tx_info`'s shape; assets and datum/script objects only when asked for. */
export function txOutputItem(ledger: Ledger, output: Output, options: OutputOptions): Row {
  return {
    payment_addr: { bech32: output.address, cred: paymentCredential(output) },
    stake_addr: output.stakeAddress,
    tx_hash: output.txHash,
    tx_index: output.index,
    value: str(output.value.coin),
    datum_hash: output.dataHash,
    inline_datum: options.scripts ? inlineDatum(output.inlineDatum) : null,
    reference_script: options.scripts ? referenceScript(output) : null,
    asset_list: options.assets ? assetItems(ledger, output.value) : [],
  }
}

/** An unspent (or spent) output in `address_utxos`' shape; datum, script and assets only when extended. */
export function utxoRow(ledger: Ledger, output: Output, extended: boolean): Row {
  const block = ledger.block(output.blockHash)!
  return {
    tx_hash: output.txHash,
    tx_index: output.index,
    address: output.address,
    value: str(output.value.coin),
    stake_address: output.stakeAddress,
    payment_cred: paymentCredential(output),
    epoch_no: block.epoch,
    block_height: block.height,
    block_time: block.time,
    datum_hash: output.dataHash,
    inline_datum: extended ? inlineDatum(output.inlineDatum) : null,
    reference_script: extended ? referenceScript(output) : null,
    asset_list: extended ? assetItems(ledger, output.value) : null,
    is_spent: output.spentBy !== null,
  }
}

// ---- transactions -------------------------------------------------------------------------

export interface TxInfoOptions {
  inputs: boolean
  metadata: boolean
  assets: boolean
  withdrawals: boolean
  certs: boolean
  scripts: boolean
  bytecode: boolean
}

function certificateItem(ledger: Ledger, cert: Certificate, index: number): Row {
  switch (cert.kind) {
    case 'registration':
      return { index, type: 'stake_registration', info: { stake_address: cert.stakeAddress, deposit: str(cert.deposit) } }
    case 'deregistration':
      return { index, type: 'stake_deregistration', info: { stake_address: cert.stakeAddress } }
    case 'delegation':
      return { index, type: 'pool_delegation', info: { stake_address: cert.stakeAddress, pool_id_bech32: ledger.pools.get(cert.pool)?.id ?? null, pool_id_hex: cert.pool } }
    case 'vote_delegation':
      return { index, type: 'vote_delegation', info: { stake_address: cert.stakeAddress, drep_id: drepLabel(cert.drep), drep_hex: cert.drep.startsWith('drep_always') ? null : cert.drep } }
    case 'pool_registration': {
      const pool = cert.pool
      return {
        index, type: 'pool_update',
        info: {
          pool_id_bech32: ledger.pools.get(pool.hex)?.id ?? null, pool_id_hex: pool.hex, active_epoch_no: null, vrf_key_hash: pool.vrfKeyHash,
          margin: Number(pool.marginPpm) / 1e6, fixed_cost: str(pool.cost), pledge: str(pool.pledge), reward_addr: pool.rewardAccount,
          owners: pool.owners, relays: [], meta_url: pool.metadata.url, meta_hash: pool.metadata.hash,
        },
      }
    }
    case 'drep_registration':
      return { index, type: 'drep_registration', info: { drep_id: ledger.dreps.get(cert.drep)?.id ?? null, drep_hex: cert.drep, deposit: str(cert.deposit), meta_url: null, meta_hash: null } }
  }
}


/** Native scripts in the transaction's witness set, with cardano-node's JSON form. */
function nativeScripts(tx: TxRecord): Row[] {
  if (!tx.cbor) return []
  const scripts = CSL.Transaction.from_bytes(tx.cbor).witness_set().native_scripts()
  const rows: Row[] = []
  for (let i = 0; i < (scripts?.len() ?? 0); i++) {
    const script = scripts!.get(i)
    rows.push({ script_hash: script.hash().to_hex(), script_json: nodeScriptJson(script) })
  }
  return rows
}

/** A native script as cardano-node writes it: `{ type: sig | all | any | atLeast | after | before, ... }`. */
function nodeScriptJson(script: CSL.NativeScript): Row {
  const list = (scripts: CSL.NativeScripts) => Array.from({ length: scripts.len() }, (_, i) => nodeScriptJson(scripts.get(i)))
  switch (script.kind()) {
    case CSL.NativeScriptKind.ScriptPubkey: return { type: 'sig', keyHash: script.as_script_pubkey()!.addr_keyhash().to_hex() }
    case CSL.NativeScriptKind.ScriptAll: return { type: 'all', scripts: list(script.as_script_all()!.native_scripts()) }
    case CSL.NativeScriptKind.ScriptAny: return { type: 'any', scripts: list(script.as_script_any()!.native_scripts()) }
    case CSL.NativeScriptKind.ScriptNOfK: {
      const n = script.as_script_n_of_k()!
      return { type: 'atLeast', required: n.n(), scripts: list(n.native_scripts()) }
    }
    case CSL.NativeScriptKind.TimelockStart: return { type: 'after', slot: Number(script.as_timelock_start()!.slot_bignum().to_str()) }
    default: return { type: 'before', slot: Number(script.as_timelock_expiry()!.slot_bignum().to_str()) }
  }
}

const REDEEMER_PURPOSES: Record<number, string> = {
  [CSL.RedeemerTagKind.Spend]: 'spend',
  [CSL.RedeemerTagKind.Mint]: 'mint',
  [CSL.RedeemerTagKind.Cert]: 'cert',
  [CSL.RedeemerTagKind.Reward]: 'reward',
}

/**
 * Plutus executions of the transaction, one per redeemer, from its witness set: the script run
 * (by hash, found in the witness set or a reference input), the redeemer's purpose, data and
 * execution units, and for a spend the input and its datum.
 */
function plutusContracts(ledger: Ledger, tx: TxRecord, bytecode: boolean): Row[] {
  if (!tx.cbor || tx.redeemerCount === 0) return []
  const parsed = CSL.Transaction.from_bytes(tx.cbor)
  const witnesses = parsed.witness_set()
  const redeemers = witnesses.redeemers()
  if (!redeemers) return []
  const scripts = new Map<string, CSL.PlutusScript>()
  const plutus = witnesses.plutus_scripts()
  for (let i = 0; i < (plutus?.len() ?? 0); i++) scripts.set(plutus!.get(i).hash().to_hex(), plutus!.get(i))
  for (const ref of [...tx.inputs, ...tx.referenceInputs]) {
    const output = ledger.outputs.get(ref)
    if (!output?.referenceScript) continue
    try {
      const script = CSL.ScriptRef.from_hex(output.referenceScript).plutus_script()
      if (script) scripts.set(script.hash().to_hex(), script)
    } catch { /* not a script reference CSL reads */ }
  }
  const datums = new Map<string, string>()
  const plutusData = witnesses.plutus_data()
  for (let i = 0; i < (plutusData?.len() ?? 0); i++) datums.set(CSL.hash_plutus_data(plutusData!.get(i)).to_hex(), plutusData!.get(i).to_hex())
  const sortedInputs = sortedRefs(tx.inputs)
  const mintPolicies = [...new Set([...tx.mint.keys()].map(unit => unit.slice(0, 56)))].sort()
  const prices = ledger.params
  const rows: Row[] = []
  for (let i = 0; i < redeemers.len(); i++) {
    const redeemer = redeemers.get(i)
    const purpose = REDEEMER_PURPOSES[redeemer.tag().kind()] ?? 'spend'
    const index = Number(redeemer.index().to_str())
    let scriptHash: string | null = null
    let spent: Output | undefined
    if (purpose === 'spend') {
      spent = ledger.outputs.get(sortedInputs[index])
      scriptHash = spent?.payment?.type === 'script' ? spent.payment.hash : null
    } else if (purpose === 'mint') {
      scriptHash = mintPolicies[index] ?? null
    }
    const script = scriptHash ? scripts.get(scriptHash) : undefined
    const mem = Number(redeemer.ex_units().mem().to_str())
    const steps = Number(redeemer.ex_units().steps().to_str())
    const datumCbor = spent ? spent.inlineDatum ?? (spent.dataHash ? datums.get(spent.dataHash) ?? null : null) : null
    const datumValue = datumCbor ? inlineDatum(datumCbor)!.value : null
    rows.push({
      address: spent?.address ?? null,
      spends_input: spent ? { tx_hash: spent.txHash, tx_index: spent.index } : null,
      script_hash: scriptHash,
      bytecode: bytecode && script ? toHex(script.bytes()) : null,
      size: script ? script.bytes().length : 0,
      valid_contract: tx.validContract,
      input: {
        redeemer: {
          purpose,
          fee: str(Math.ceil(mem * prices.priceMem + steps * prices.priceStep)),
          unit: { steps: str(steps), mem: str(mem) },
          datum: { hash: CSL.hash_plutus_data(redeemer.data()).to_hex(), value: inlineDatum(redeemer.data().to_hex())!.value },
        },
        datum: spent ? { hash: spent.dataHash ?? (datumCbor ? CSL.hash_plutus_data(CSL.PlutusData.from_hex(datumCbor)).to_hex() : null), value: datumValue } : null,
      },
    })
  }
  return rows
}

export function txInfoRow(ledger: Ledger, tx: TxRecord, options: TxInfoOptions): Row {
  const t = transactionJson(tx)
  const block = ledger.block(tx.included.blockHash)!
  const outputOptions = { assets: options.assets, scripts: options.scripts }
  const spentOutput = (ref: string) => txOutputItem(ledger, ledger.outputs.get(ref)!, outputOptions)
  const created = createdOutputs(tx).map(([index]) => ledger.outputs.get(`${tx.hash}#${index}`)!)
  // A transaction whose scripts failed created only its collateral return: Koios lists it as the
  // collateral output, not among the outputs.
  const collateralReturn = tx.validContract ? null : created[0] ?? null
  const withInputsAndScripts = options.inputs && options.scripts
  return {
    tx_hash: t.hash,
    block_hash: t.block,
    block_height: t.block_height,
    epoch_no: block.epoch,
    epoch_slot: block.epochSlot,
    absolute_slot: t.slot,
    tx_timestamp: t.block_time,
    tx_block_index: t.index,
    tx_size: t.size,
    total_output: t.output_amount[0].quantity,
    fee: t.fees,
    treasury_donation: t.treasury_donation,
    deposit: t.deposit,
    invalid_before: t.invalid_before,
    invalid_after: t.invalid_hereafter,
    collateral_inputs: withInputsAndScripts ? tx.collateral.map(spentOutput) : [],
    collateral_output: options.scripts && collateralReturn ? txOutputItem(ledger, collateralReturn, outputOptions) : null,
    reference_inputs: withInputsAndScripts ? tx.referenceInputs.map(spentOutput) : [],
    // The inputs a transaction consumed: its collateral when its scripts failed.
    inputs: options.inputs ? (tx.validContract ? tx.inputs : tx.collateral).map(spentOutput) : [],
    outputs: tx.validContract ? created.map(output => txOutputItem(ledger, output, outputOptions)) : [],
    withdrawals: options.withdrawals ? tx.withdrawals.map(w => ({ amount: str(w.amount), stake_addr: w.stakeAddress })) : [],
    assets_minted: options.assets && tx.validContract ? [...tx.mint].map(([unit, quantity]) => assetItem(ledger, unit, quantity)) : [],
    metadata: options.metadata && tx.metadata.length ? Object.fromEntries(tx.metadata.map(m => [m.label, m.json])) : null,
    certificates: options.certs && tx.validContract ? tx.certificates.map((cert, index) => certificateItem(ledger, cert, index)) : [],
    native_scripts: options.scripts ? nativeScripts(tx) : [],
    plutus_contracts: options.scripts ? plutusContracts(ledger, tx, options.bytecode) : [],
    // The devnet refuses votes and proposals in submitted transactions: always empty.
    voting_procedures: [],
    proposal_procedures: [],
  }
}

export function txRefRow(ledger: Ledger, tx: TxRecord): Row {
  const block = ledger.block(tx.included.blockHash)!
  return { tx_hash: tx.hash, epoch_no: block.epoch, block_height: tx.included.blockHeight, block_time: tx.included.blockTime }
}

// ---- addresses and accounts ---------------------------------------------------------------

export function addressInfoRow(ledger: Ledger, text: string): Row | undefined {
  const address = parseAddress(text)
  if (!address || !ledger.addresses.has(text)) return undefined
  const summary = addressSummaryJson(ledger, address, text)
  return {
    address: summary.address,
    balance: summary.amount[0].quantity,
    stake_address: summary.stake_address,
    script_address: summary.script,
    utxo_set: ledger.unspentAt(text).map(output => {
      const { tx_hash, tx_index, block_height, block_time, value, datum_hash, inline_datum, reference_script, asset_list } = utxoRow(ledger, output, true)
      return { tx_hash, tx_index, block_height, block_time, value, datum_hash, inline_datum, reference_script, asset_list }
    }),
  }
}

export function accountInfoRow(ledger: Ledger, account: Account): Row {
  const a = accountJson(ledger, account)
  return {
    stake_address: a.stake_address,
    status: account.registered ? 'registered' : 'not registered',
    delegated_drep: a.drep_id,
    delegated_pool: a.pool_id,
    total_balance: a.controlled_amount,
    utxo: str(BigInt(a.controlled_amount) - BigInt(a.withdrawable_amount)),
    rewards: a.rewards_sum,
    withdrawals: a.withdrawals_sum,
    rewards_available: a.withdrawable_amount,
    deposit: str(account.deposit),
    reserves: a.reserves_sum,
    treasury: a.treasury_sum,
    // No governance proposals on the devnet, so no proposal deposit comes back.
    'proposal-refund': '0',
  }
}

/** The reward address as bytes (header and credential), hex. */
export function stakeAddressHex(stakeAddress: string): string {
  return toHex(CSL.Address.from_bech32(stakeAddress).to_bytes())
}

// ---- assets -------------------------------------------------------------------------------

function mintingTxMetadata(ledger: Ledger, txHash: string): Row | null {
  const tx = ledger.txs.get(txHash)
  return tx && tx.metadata.length ? Object.fromEntries(tx.metadata.map(m => [m.label, m.json])) : null
}

export function assetInfoRow(ledger: Ledger, asset: AssetState): Row {
  const mints = asset.history.filter(h => h.action === 'minted')
  const latestMint = mints[mints.length - 1]?.txHash ?? asset.initialMintTx
  return {
    policy_id: asset.policyId,
    asset_name: asset.nameHex,
    asset_name_ascii: Buffer.from(asset.nameHex, 'hex').toString('latin1'),
    fingerprint: asset.fingerprint,
    minting_tx_hash: latestMint,
    total_supply: str(asset.quantity),
    mint_cnt: mints.length,
    burn_cnt: asset.history.length - mints.length,
    creation_time: ledger.txs.get(asset.initialMintTx)!.included.blockTime,
    minting_tx_metadata: mintingTxMetadata(ledger, latestMint),
    // No off-chain token registry (CIP-26) and no CIP-68 reference tokens on the devnet (Koios: null).
    token_registry_metadata: null,
    cip68_metadata: null,
  }
}

export function assetHistoryRow(ledger: Ledger, asset: AssetState): Row {
  return {
    policy_id: asset.policyId,
    asset_name: asset.nameHex,
    fingerprint: asset.fingerprint,
    // Newest first, burns as negative quantities.
    minting_txs: [...asset.history].reverse().map(h => {
      const tx = ledger.txs.get(h.txHash)!
      return {
        tx_hash: h.txHash,
        block_time: tx.included.blockTime,
        quantity: str(h.action === 'burned' ? -h.amount : h.amount),
        metadata: tx.metadata.map(m => ({ key: m.label, json: m.json })),
      }
    }),
  }
}

// ---- pools and DReps ----------------------------------------------------------------------

/** The epoch a pool's registration took effect: the genesis pools from epoch 0, others two epochs on. */
function poolActiveEpoch(ledger: Ledger, pool: Pool): number | null {
  const registration = ledger.txs.get(pool.registrations[pool.registrations.length - 1])
  if (!registration) return null
  return registration.included.blockHeight === 0 ? 0 : ledger.epochOf(registration.included.slot) + 2
}

export function poolListRow(ledger: Ledger, pool: Pool): Row {
  const p = poolJson(ledger, pool)
  return {
    pool_id_bech32: p.pool_id,
    pool_id_hex: p.hex,
    active_epoch_no: poolActiveEpoch(ledger, pool),
    margin: p.margin_cost,
    fixed_cost: p.fixed_cost,
    pledge: p.declared_pledge,
    deposit: str(ledger.params.poolDeposit),
    reward_addr: p.reward_account,
    owners: p.owners,
    // Devnet pools announce no relays.
    relays: [],
    ticker: pool.metadata.ticker,
    // Pool groups are an off-chain list Koios keeps; the devnet has none (null).
    pool_group: null,
    meta_url: pool.metadata.url,
    meta_hash: pool.metadata.hash,
    // The devnet has no pool retirement.
    pool_status: 'registered',
    active_stake: p.active_stake,
    retiring_epoch: null,
  }
}

export function poolInfoRow(ledger: Ledger, pool: Pool): Row {
  const p = poolJson(ledger, pool)
  // pool_info has no pool_group column, and gives the ticker inside meta_json.
  const { ticker, pool_group: _group, ...list } = poolListRow(ledger, pool)
  const latest = pool.blocks.length ? ledger.block(pool.blocks[pool.blocks.length - 1])! : null
  const rewardDrep = ledger.accounts.get(pool.rewardAccount)?.drep ?? null
  return {
    ...list,
    vrf_key_hash: pool.vrfKeyHash,
    reward_addr_delegated_drep: rewardDrep === null ? null : drepLabel(rewardDrep),
    meta_json: { name: pool.metadata.name, ticker, homepage: pool.metadata.homepage, description: pool.metadata.description },
    // The operational certificate of the pool's newest block (none before its first block: null).
    op_cert: latest?.opCert ?? null,
    op_cert_counter: latest?.opCertCounter === null || latest === null ? null : Number(latest.opCertCounter),
    sigma: p.active_size,
    block_count: p.blocks_minted,
    live_pledge: p.live_pledge,
    live_stake: p.live_stake,
    live_delegators: p.live_delegators,
    // Koios gives saturation in percent, two decimals.
    live_saturation: Math.round(p.live_saturation * 10000) / 100,
    // A pool votes with its active stake.
    voting_power: p.active_stake,
  }
}

export function poolDelegatorRows(ledger: Ledger, pool: Pool): Row[] {
  return [...ledger.liveStake().accounts]
    .filter(([, delegation]) => delegation.pool === pool.hex)
    .map(([stakeAddress, { amount }]) => {
      const account = ledger.accounts.get(stakeAddress)!
      return {
        stake_address: stakeAddress,
        amount: str(amount),
        active_epoch_no: account.activeEpoch,
        latest_delegation_tx_hash: account.delegations[account.delegations.length - 1]?.txHash ?? null,
      }
    })
}

const drepStatus = (ledger: Ledger, drep: Drep) => (ledger.dreps.has(drep.hex) ? 'registered' : 'not_registered')

export function drepListRow(ledger: Ledger, drep: Drep): Row {
  const d = drepListJson(ledger, drep)
  return { drep_id: d.drep_id, hex: d.hex, has_script: d.has_script, drep_status: drepStatus(ledger, drep) }
}

export function drepInfoRow(ledger: Ledger, drep: Drep): Row {
  const d = drepJson(ledger, drep)
  return {
    drep_id: d.drep_id,
    hex: d.hex,
    has_script: d.has_script,
    drep_status: drepStatus(ledger, drep),
    deposit: str(drep.deposit),
    active: !d.expired,
    expires_epoch_no: drep.lastActiveEpoch + ledger.params.drepActivity,
    amount: d.amount,
    // DReps of the devnet register without an anchor (Koios: null).
    meta_url: null,
    meta_hash: null,
    live_delegator_count: drepDelegators(ledger, drep).length,
  }
}

/** The epoch of an account's newest vote delegation, from the certificates on chain. */
function voteDelegationEpoch(ledger: Ledger, stakeAddress: string, drep: string): number {
  const txs = [...ledger.txs.values()]
  for (let i = txs.length - 1; i >= 0; i--) {
    const tx = txs[i]
    if (tx.validContract && tx.certificates.some(c => c.kind === 'vote_delegation' && c.stakeAddress === stakeAddress && c.drep === drep)) return ledger.epochOf(tx.included.slot)
  }
  return 0
}

export function drepDelegatorRows(ledger: Ledger, drep: Drep): Row[] {
  return drepDelegators(ledger, drep).map(account => {
    const credential = CSL.RewardAddress.from_address(CSL.Address.from_bech32(account.stakeAddress))!.payment_cred()
    return {
      stake_address: account.stakeAddress,
      stake_address_hex: stakeAddressHex(account.stakeAddress),
      // The script hash of a script stake credential; null for a key (all of the devnet's).
      script_hash: credential.kind() === CSL.CredKind.Script ? credential.to_scripthash()!.to_hex() : null,
      epoch_no: voteDelegationEpoch(ledger, account.stakeAddress, drep.hex),
      amount: str(ledger.controlledStake(account.stakeAddress)),
    }
  })
}
