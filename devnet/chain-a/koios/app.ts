import express, { type Request, type Response, type Router } from 'express'
import { parseDrepId, parsePoolId, paymentCredentialOf } from '../addresses.ts'
import { LedgerRuleError } from '../decode.ts'
import type { Ledger } from '../ledger.ts'
import { toHex } from '../crypto.ts'
import { invalidInput, PostgrestError, postgrestErrorHandler, sendRows, type Row } from './postgrest.ts'
import {
  accountInfoRow, addressInfoRow, assetItem, assetHistoryRow, assetInfoRow, blockInfoRow, blockRow, blockTxRows, drepDelegatorRows, drepInfoRow,
  drepListRow, epochInfoRow, epochParamsRow, genesisRow, poolDelegatorRows, poolInfoRow, poolListRow, tipRow, totalsRow, txInfoRow, txRefRow, utxoRow,
} from './present.ts'

/**
 * Koios' REST API v1 over the devnet's ledger, mounted at `/koios/api/v1`: the endpoints a chain-A
 * client uses, each computing its full result, which `postgrest.ts` then filters, orders, pages
 * and narrows as PostgREST does.
 */

/** Koios answers request bodies of up to a few kilobytes; the devnet is generous. */
const BODY_LIMIT = 65536
/** As the Blockfrost route POST /tx/submit: anything above max_tx_size fails MaxTxSizeUTxO. */
const SUBMIT_BODY_LIMIT = 65536

// The result columns of each endpoint, in the order Koios answers them (filters, order and select
// on other columns are refused).
const UTXO_COLUMNS = ['tx_hash', 'tx_index', 'address', 'value', 'stake_address', 'payment_cred', 'epoch_no', 'block_height', 'block_time', 'datum_hash', 'inline_datum', 'reference_script', 'asset_list', 'is_spent']
const TX_REF_COLUMNS = ['tx_hash', 'epoch_no', 'block_height', 'block_time']
const BLOCK_COLUMNS = ['hash', 'epoch_no', 'abs_slot', 'epoch_slot', 'block_height', 'block_size', 'block_time', 'tx_count', 'vrf_key', 'pool', 'op_cert_counter', 'proto_major', 'proto_minor', 'parent_hash']
const POOL_LIST_COLUMNS = ['pool_id_bech32', 'pool_id_hex', 'active_epoch_no', 'margin', 'fixed_cost', 'pledge', 'deposit', 'reward_addr', 'owners', 'relays', 'ticker', 'pool_group', 'meta_url', 'meta_hash', 'pool_status', 'active_stake', 'retiring_epoch']

const COLUMNS = {
  tip: ['hash', 'era', 'epoch_no', 'abs_slot', 'epoch_slot', 'block_height', 'block_no', 'block_time'],
  genesis: ['networkmagic', 'networkid', 'epochlength', 'slotlength', 'maxlovelacesupply', 'systemstart', 'activeslotcoeff', 'slotsperkesperiod', 'maxkesrevolutions', 'securityparam', 'updatequorum', 'alonzogenesis'],
  totals: ['epoch_no', 'circulation', 'treasury', 'reward', 'supply', 'reserves', 'fees', 'deposits_stake', 'deposits_drep', 'deposits_proposal', 'treasury_donation', 'treasury_withdrawal', 'reserves_withdrawal'],
  epoch_info: ['epoch_no', 'era', 'out_sum', 'fees', 'tx_count', 'blk_count', 'start_time', 'end_time', 'first_block_time', 'last_block_time', 'active_stake', 'total_rewards', 'avg_blk_reward'],
  epoch_params: [
    'epoch_no', 'era', 'min_fee_a', 'min_fee_b', 'max_block_size', 'max_tx_size', 'max_bh_size', 'key_deposit', 'pool_deposit', 'max_epoch', 'optimal_pool_count',
    'influence', 'monetary_expand_rate', 'treasury_growth_rate', 'decentralisation', 'extra_entropy', 'protocol_major', 'protocol_minor', 'min_utxo_value',
    'min_pool_cost', 'nonce', 'block_hash', 'cost_models', 'price_mem', 'price_step', 'max_tx_ex_mem', 'max_tx_ex_steps', 'max_block_ex_mem', 'max_block_ex_steps',
    'max_val_size', 'collateral_percent', 'max_collateral_inputs', 'coins_per_utxo_size', 'pvt_motion_no_confidence', 'pvt_committee_normal',
    'pvt_committee_no_confidence', 'pvt_hard_fork_initiation', 'dvt_motion_no_confidence', 'dvt_committee_normal', 'dvt_committee_no_confidence',
    'dvt_update_to_constitution', 'dvt_hard_fork_initiation', 'dvt_p_p_network_group', 'dvt_p_p_economic_group', 'dvt_p_p_technical_group', 'dvt_p_p_gov_group',
    'dvt_treasury_withdrawal', 'committee_min_size', 'committee_max_term_length', 'gov_action_lifetime', 'gov_action_deposit', 'drep_deposit', 'drep_activity',
    'pvtpp_security_group', 'min_fee_ref_script_cost_per_byte',
  ],
  blocks: BLOCK_COLUMNS,
  block_info: [
    'hash', 'epoch_no', 'abs_slot', 'epoch_slot', 'block_height', 'block_size', 'block_time', 'tx_count', 'vrf_key', 'era', 'op_cert', 'op_cert_counter', 'pool',
    'proto_major', 'proto_minor', 'total_output', 'total_fees', 'num_confirmations', 'parent_hash', 'child_hash',
  ],
  block_txs: ['block_hash', 'tx_hash', 'epoch_no', 'block_height', 'block_time'],
  tx_info: [
    'tx_hash', 'block_hash', 'block_height', 'epoch_no', 'epoch_slot', 'absolute_slot', 'tx_timestamp', 'tx_block_index', 'tx_size', 'total_output', 'fee',
    'treasury_donation', 'deposit', 'invalid_before', 'invalid_after', 'collateral_inputs', 'collateral_output', 'reference_inputs', 'inputs', 'outputs',
    'withdrawals', 'assets_minted', 'metadata', 'certificates', 'native_scripts', 'plutus_contracts', 'voting_procedures', 'proposal_procedures',
  ],
  tx_cbor: ['tx_hash', 'block_hash', 'block_height', 'epoch_no', 'absolute_slot', 'tx_timestamp', 'cbor', 'valid_contract'],
  tx_status: ['tx_hash', 'num_confirmations'],
  address_info: ['address', 'balance', 'stake_address', 'script_address', 'utxo_set'],
  utxos: UTXO_COLUMNS,
  txs: TX_REF_COLUMNS,
  address_assets: ['address', 'policy_id', 'asset_name', 'fingerprint', 'decimals', 'quantity'],
  account_info: ['stake_address', 'status', 'delegated_drep', 'delegated_pool', 'total_balance', 'utxo', 'rewards', 'withdrawals', 'rewards_available', 'deposit', 'reserves', 'treasury', 'proposal-refund'],
  account_addresses: ['stake_address', 'addresses'],
  asset_history: ['policy_id', 'asset_name', 'fingerprint', 'minting_txs'],
  asset_info: ['policy_id', 'asset_name', 'asset_name_ascii', 'fingerprint', 'minting_tx_hash', 'total_supply', 'mint_cnt', 'burn_cnt', 'creation_time', 'minting_tx_metadata', 'token_registry_metadata', 'cip68_metadata'],
  pool_list: POOL_LIST_COLUMNS,
  pool_info: [
    'pool_id_bech32', 'pool_id_hex', 'active_epoch_no', 'vrf_key_hash', 'margin', 'fixed_cost', 'pledge', 'deposit', 'reward_addr', 'reward_addr_delegated_drep',
    'owners', 'relays', 'meta_url', 'meta_hash', 'meta_json', 'pool_status', 'retiring_epoch', 'op_cert', 'op_cert_counter', 'active_stake', 'sigma',
    'block_count', 'live_pledge', 'live_stake', 'live_delegators', 'live_saturation', 'voting_power',
  ],
  pool_delegators: ['stake_address', 'amount', 'active_epoch_no', 'latest_delegation_tx_hash'],
  drep_list: ['drep_id', 'hex', 'has_script', 'drep_status'],
  drep_info: ['drep_id', 'hex', 'has_script', 'drep_status', 'deposit', 'active', 'expires_epoch_no', 'amount', 'meta_url', 'meta_hash', 'live_delegator_count'],
  drep_delegators: ['stake_address', 'stake_address_hex', 'script_hash', 'epoch_no', 'amount'],
} as const

// ---- arguments ----------------------------------------------------------------------------

type Body = Record<string, unknown>

/** The JSON object of a POST body, with only the endpoint's arguments (PostgREST finds no function for others). */
function bodyOf(req: Request, endpoint: string, allowed: readonly string[]): Body {
  const body = req.body
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body) || Buffer.isBuffer(body)) {
    throw new PostgrestError(400, 'PGRST102', 'Empty or invalid json', `the body of ${endpoint} is a JSON object of its arguments`)
  }
  const unknown = Object.keys(body).filter(key => !allowed.includes(key))
  if (unknown.length) {
    throw new PostgrestError(404, 'PGRST202', `Could not find the function grest.${endpoint}(${Object.keys(body).sort().join(', ')}) in the schema cache`, null,
      `The function takes ${allowed.join(', ')}`)
  }
  return body as Body
}

/** The query of a GET call: its `_` parameters are the function's arguments, and only those it takes. */
function checkedQuery(req: Request, endpoint: string, allowed: readonly string[]): Request {
  const unknown = Object.keys(req.query).filter(key => key.startsWith('_') && !allowed.includes(key))
  if (unknown.length) {
    throw new PostgrestError(404, 'PGRST202', `Could not find the function grest.${endpoint}(${unknown.sort().join(', ')}) in the schema cache`, null,
      allowed.length ? `The function takes ${allowed.join(', ')}` : 'The function takes no arguments')
  }
  return req
}

function stringList(body: Body, name: string): string[] {
  const value = body[name]
  if (value === undefined) throw invalidInput(`${name} is required`)
  if (!Array.isArray(value) || !value.every(item => typeof item === 'string')) throw invalidInput(`${name} must be an array of text`)
  return value as string[]
}

function flag(body: Body, name: string): boolean {
  const value = body[name]
  if (value === undefined || value === null) return false
  if (typeof value !== 'boolean') throw invalidInput(`invalid input syntax for type boolean: ${JSON.stringify(value)} (${name})`)
  return value
}

function optionalHeight(value: unknown, name: string): number {
  if (value === undefined || value === null || value === '') return 0
  const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value
  if (typeof number !== 'number' || !Number.isInteger(number) || number < 0) throw invalidInput(`invalid input syntax for type integer: ${JSON.stringify(value)} (${name})`)
  return number
}

function queryText(req: Request, name: string, required: boolean): string | undefined {
  const value = req.query[name]
  if (value === undefined) {
    if (required) throw invalidInput(`${name} is required`)
    return undefined
  }
  if (typeof value !== 'string') throw invalidInput(`${name} is given more than once`)
  return value
}

function queryEpoch(req: Request): number | undefined {
  const value = queryText(req, '_epoch_no', false)
  if (value === undefined || value === '') return undefined
  if (!/^\d{1,9}$/.test(value)) throw invalidInput(`invalid input syntax for type integer: "${value}" (_epoch_no)`)
  return Number(value)
}

function queryBoolean(req: Request, name: string): boolean {
  const value = queryText(req, name, false)
  if (value === undefined || value === '') return false
  if (value !== 'true' && value !== 'false') throw invalidInput(`invalid input syntax for type boolean: "${value}" (${name})`)
  return value === 'true'
}

const unique = <T>(items: T[]) => [...new Set(items)]
const byHeightDesc = (a: Row, b: Row) => (b.block_height as number) - (a.block_height as number)

// ---- routes -------------------------------------------------------------------------------

export function koiosRouter(ledger: Ledger): Router {
  const router = express.Router({ strict: false })
  const json = express.json({ limit: BODY_LIMIT, type: () => true, strict: false })

  const get = (endpoint: string, columns: readonly string[], args: readonly string[], rows: (req: Request) => Row[]) =>
    router.get(`/${endpoint}`, (req, res) => sendRows(req, res, endpoint, columns, rows(checkedQuery(req, endpoint, args))))
  const post = (endpoint: string, columns: readonly string[], args: readonly string[], rows: (body: Body) => Row[]) =>
    router.post(`/${endpoint}`, json, (req, res) => sendRows(req, res, endpoint, columns, rows(bodyOf(req, endpoint, args))))

  const epochs = (req: Request) => {
    const epoch = queryEpoch(req)
    if (epoch !== undefined) return ledger.epochs.has(epoch) ? [ledger.epochs.get(epoch)!] : []
    // All epochs, newest first.
    return [...ledger.epochs.values()].sort((a, b) => b.epoch - a.epoch)
  }

  // Network and epochs
  get('tip', COLUMNS.tip, [], () => [tipRow(ledger)])
  get('genesis', COLUMNS.genesis, [], () => [genesisRow(ledger)])
  get('totals', COLUMNS.totals, ['_epoch_no'], req => epochs(req).map(totalsRow))
  get('epoch_info', COLUMNS.epoch_info, ['_epoch_no', '_include_next_epoch'], req => {
    queryBoolean(req, '_include_next_epoch')
    return epochs(req).map(epoch => epochInfoRow(ledger, epoch))
  })
  get('epoch_params', COLUMNS.epoch_params, ['_epoch_no'], req => epochs(req).map(epoch => epochParamsRow(ledger, epoch)))

  // Blocks
  get('blocks', COLUMNS.blocks, [], () => [...ledger.blocks].reverse().map(block => blockRow(ledger, block)))
  const blocksOf = (body: Body) => unique(stringList(body, '_block_hashes').map(hash => hash.toLowerCase())).flatMap(hash => ledger.block(hash) ?? [])
  post('block_info', COLUMNS.block_info, ['_block_hashes'], body => blocksOf(body).map(block => blockInfoRow(ledger, block)))
  post('block_txs', COLUMNS.block_txs, ['_block_hashes'], body => blocksOf(body).flatMap(blockTxRows))

  // Transactions
  const txsOf = (body: Body) => unique(stringList(body, '_tx_hashes').map(hash => hash.toLowerCase())).flatMap(hash => ledger.txs.get(hash) ?? [])
  post('tx_info', COLUMNS.tx_info, ['_tx_hashes', '_inputs', '_metadata', '_assets', '_withdrawals', '_certs', '_scripts', '_bytecode', '_governance'], body => {
    const options = {
      inputs: flag(body, '_inputs'), metadata: flag(body, '_metadata'), assets: flag(body, '_assets'), withdrawals: flag(body, '_withdrawals'),
      certs: flag(body, '_certs'), scripts: flag(body, '_scripts'), bytecode: flag(body, '_bytecode'),
    }
    flag(body, '_governance')
    return txsOf(body).map(tx => txInfoRow(ledger, tx, options))
  })
  post('tx_cbor', COLUMNS.tx_cbor, ['_tx_hashes'], body => txsOf(body).filter(tx => tx.cbor).map(tx => {
    const { tx_hash, epoch_no, block_height, block_time } = txRefRow(ledger, tx)
    return { tx_hash, block_hash: tx.included.blockHash, block_height, epoch_no, absolute_slot: tx.included.slot, tx_timestamp: block_time, cbor: toHex(tx.cbor!), valid_contract: tx.validContract }
  }))
  // One row per hash asked for, in order: null confirmations for a transaction not on chain (yet).
  post('tx_status', COLUMNS.tx_status, ['_tx_hashes'], body => stringList(body, '_tx_hashes').map(hash => {
    const tx = ledger.txs.get(hash.toLowerCase())
    return { tx_hash: hash, num_confirmations: tx ? ledger.tip.height - tx.included.blockHeight : null }
  }))
  router.post('/submittx', express.raw({ type: () => true, limit: SUBMIT_BODY_LIMIT }), (req: Request, res: Response) => {
    if (!req.is('application/cbor')) throw new PostgrestError(415, 'PGRST107', 'Content-Type must be application/cbor.')
    const body: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0)
    try {
      res.status(202).json(ledger.submit(new Uint8Array(body)))
    } catch (error) {
      // As Koios' submit API relays the node's refusal: 400 with the reason as text.
      if (error instanceof LedgerRuleError) {
        res.status(400).type('text/plain').send(error.message)
        return
      }
      throw error
    }
  })

  // Outputs by reference, spent or not (`is_spent` tells)
  post('utxo_info', COLUMNS.utxos, ['_utxo_refs', '_extended'], body => {
    const extended = flag(body, '_extended')
    return unique(stringList(body, '_utxo_refs').map(ref => ref.toLowerCase())).flatMap(ref => ledger.outputs.get(ref) ?? []).map(output => utxoRow(ledger, output, extended))
  })

  // Addresses and payment credentials
  const addressesOf = (body: Body) => unique(stringList(body, '_addresses'))
  post('address_info', COLUMNS.address_info, ['_addresses'], body => addressesOf(body).flatMap((address): Row[] => { const row = addressInfoRow(ledger, address); return row ? [row] : [] }))
  post('address_utxos', COLUMNS.utxos, ['_addresses', '_extended'], body => {
    const extended = flag(body, '_extended')
    return addressesOf(body).flatMap(address => ledger.unspentAt(address)).map(output => utxoRow(ledger, output, extended))
  })
  const txsAt = (addresses: string[], after: number) => {
    const hashes = unique(addresses.flatMap(address => ledger.addresses.get(address)?.txs ?? []))
    return hashes.map(hash => ledger.txs.get(hash)!).filter(tx => tx.included.blockHeight >= after).map(tx => txRefRow(ledger, tx)).sort(byHeightDesc)
  }
  post('address_txs', COLUMNS.txs, ['_addresses', '_after_block_height'], body => txsAt(addressesOf(body), optionalHeight(body._after_block_height, '_after_block_height')))
  post('address_assets', COLUMNS.address_assets, ['_addresses'], body => addressesOf(body).flatMap(address => {
    const held = new Map<string, bigint>()
    for (const output of ledger.unspentAt(address)) for (const [unit, quantity] of output.value.assets) held.set(unit, (held.get(unit) ?? 0n) + quantity)
    return [...held].map(([unit, quantity]) => ({ address, ...assetItem(ledger, unit, quantity) }))
  }))

  /** The addresses of the chain whose payment credential is one of these (key or script hashes, hex). */
  const addressesWithCredentials = (credentials: string[]) => {
    const wanted = new Set(credentials.map(c => c.toLowerCase()))
    return [...ledger.addresses.keys()].filter(address => {
      const credential = paymentCredentialOf(address)
      return credential !== null && wanted.has(credential.hash)
    })
  }
  post('credential_utxos', COLUMNS.utxos, ['_payment_credentials', '_extended'], body => {
    const extended = flag(body, '_extended')
    return addressesWithCredentials(stringList(body, '_payment_credentials')).flatMap(address => ledger.unspentAt(address)).map(output => utxoRow(ledger, output, extended))
  })
  post('credential_txs', COLUMNS.txs, ['_payment_credentials', '_after_block_height'], body =>
    txsAt(addressesWithCredentials(stringList(body, '_payment_credentials')), optionalHeight(body._after_block_height, '_after_block_height')))

  // Stake accounts
  const accountsOf = (body: Body) => unique(stringList(body, '_stake_addresses')).flatMap(address => ledger.accounts.get(address) ?? [])
  post('account_info', COLUMNS.account_info, ['_stake_addresses'], body => accountsOf(body).map(account => accountInfoRow(ledger, account)))
  post('account_addresses', COLUMNS.account_addresses, ['_stake_addresses', '_first_only', '_empty'], body => {
    const firstOnly = flag(body, '_first_only')
    const empty = flag(body, '_empty')
    return accountsOf(body).map(account => {
      // Without `_empty`, only addresses that hold unspent outputs.
      const addresses = [...account.addresses].filter(address => empty || ledger.unspentAt(address).length > 0)
      return { stake_address: account.stakeAddress, addresses: firstOnly ? addresses.slice(0, 1) : addresses }
    })
  })

  // Native assets
  const policyOf = (req: Request) => {
    const policy = queryText(req, '_asset_policy', true)!.toLowerCase()
    if (!/^[0-9a-f]{56}$/.test(policy)) throw invalidInput(`invalid _asset_policy: "${policy}"`)
    return policy
  }
  const nameOf = (req: Request) => {
    const name = (queryText(req, '_asset_name', false) ?? '').toLowerCase()
    if (!/^([0-9a-f]{2}){0,32}$/.test(name)) throw invalidInput(`invalid _asset_name: "${name}"`)
    return name
  }
  get('asset_history', COLUMNS.asset_history, ['_asset_policy', '_asset_name'], req => {
    const policy = policyOf(req)
    const name = req.query._asset_name === undefined ? undefined : nameOf(req)
    return [...ledger.assets.values()].filter(a => a.policyId === policy && (name === undefined || a.nameHex === name)).map(asset => assetHistoryRow(ledger, asset))
  })
  post('asset_info', COLUMNS.asset_info, ['_asset_list'], body => {
    const list = body._asset_list
    if (!Array.isArray(list) || !list.every(pair => Array.isArray(pair) && pair.length >= 1 && pair.length <= 2 && pair.every(part => typeof part === 'string'))) {
      throw invalidInput('_asset_list must be an array of [policy id, asset name (hex)] pairs')
    }
    return unique((list as string[][]).map(([policy, name = '']) => (policy + name).toLowerCase())).flatMap(unit => {
      const asset = ledger.assets.get(unit)
      return asset ? [assetInfoRow(ledger, asset)] : []
    })
  })
  get('asset_txs', COLUMNS.txs, ['_asset_policy', '_asset_name', '_after_block_height', '_history'], req => {
    const unit = policyOf(req) + nameOf(req)
    const after = optionalHeight(queryText(req, '_after_block_height', false), '_after_block_height')
    const history = queryBoolean(req, '_history')
    const asset = ledger.assets.get(unit)
    if (!asset) return []
    // Without `_history`, only the transactions whose outputs still hold the asset.
    const hashes = history ? unique(asset.txs) : unique(ledger.unspentWithAsset(unit).map(output => output.txHash))
    return hashes.map(hash => ledger.txs.get(hash)!).filter(tx => tx.included.blockHeight >= after).map(tx => txRefRow(ledger, tx)).sort(byHeightDesc)
  })

  // Pools
  get('pool_list', COLUMNS.pool_list, [], () => [...ledger.pools.values()].map(pool => poolListRow(ledger, pool)))
  post('pool_info', COLUMNS.pool_info, ['_pool_bech32_ids'], body =>
    unique(stringList(body, '_pool_bech32_ids')).flatMap(id => ledger.pools.get(parsePoolId(id) ?? '') ?? []).map(pool => poolInfoRow(ledger, pool)))
  get('pool_delegators', COLUMNS.pool_delegators, ['_pool_bech32'], req => {
    const pool = ledger.pools.get(parsePoolId(queryText(req, '_pool_bech32', true)!) ?? '')
    return pool ? poolDelegatorRows(ledger, pool) : []
  })

  // DReps
  get('drep_list', COLUMNS.drep_list, [], () => [...ledger.dreps.values()].map(drep => drepListRow(ledger, drep)))
  post('drep_info', COLUMNS.drep_info, ['_drep_ids'], body =>
    unique(stringList(body, '_drep_ids')).flatMap(id => ledger.dreps.get(parseDrepId(id) ?? '') ?? []).map(drep => drepInfoRow(ledger, drep)))
  get('drep_delegators', COLUMNS.drep_delegators, ['_drep_id'], req => {
    const drep = ledger.dreps.get(parseDrepId(queryText(req, '_drep_id', true)!) ?? '')
    return drep ? drepDelegatorRows(ledger, drep) : []
  })

  router.use((req, _res, next) => {
    next(new PostgrestError(404, 'PGRST202', `Could not find the function grest.${req.path.replace(/^\//, '')} in the schema cache`, null, null))
  })
  router.use(postgrestErrorHandler)
  return router
}
