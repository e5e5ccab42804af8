import fs from 'node:fs'
import path from 'node:path'
import Ajv, { type ValidateFunction } from 'ajv'
import { parse as parseYaml } from 'yaml'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import type { ChainADevnet, WalletKeyPair } from '../../devnet/chain-a/index.ts'
import { ADA, buildTx, getJson, largestUtxo, plutusData, startDevnet } from '../support/devnet.ts'
import fixture from '../fixtures/plutus/redeemer-equals-datum.plutus.json'

/**
 * The devnet's Koios REST API v1 (/koios/api/v1): every endpoint a chain-A client uses answers
 * what Koios' published OpenAPI description says, with the same figures as the devnet's Blockfrost
 * API for the same objects, and PostgREST's filters, order, paging, columns and errors.
 */

const KOIOS = '/koios/api/v1'
const spec = parseYaml(fs.readFileSync(path.join(__dirname, '../fixtures/openapi/koios-preprod.yaml'), 'utf8')) as any

/** The spec's node with every `$ref` into the document replaced by what it points to. */
function resolved(node: any, depth = 0): any {
  if (depth > 40) throw new Error('$ref nesting too deep')
  if (Array.isArray(node)) return node.map(item => resolved(item, depth))
  if (!node || typeof node !== 'object') return node
  if (typeof node.$ref === 'string') {
    const target = node.$ref.replace(/^#\//, '').split('/').reduce((at: any, key: string) => at[key.replace(/~1/g, '/').replace(/~0/g, '~')], spec)
    if (target === undefined) throw new Error(`unresolved ${node.$ref}`)
    return resolved(target, depth + 1)
  }
  return Object.fromEntries(Object.entries(node).filter(([key]) => key !== 'example' && key !== 'examples').map(([key, value]) => [key, resolved(value, depth)]))
}

const ajv = new Ajv({ strict: false, allErrors: true })
  .addFormat('hex', /^([0-9a-f]{2})*$/)
  .addFormat('binary', true).addFormat('boolean', true).addFormat('double', true).addFormat('integer', true)
const validators = new Map<string, ValidateFunction>()

/** The validator of a path's success answer, from the spec's response schema for that method. */
function validatorFor(route: string, method: 'get' | 'post'): ValidateFunction {
  const key = `${method} ${route}`
  if (!validators.has(key)) {
    const operation = spec.paths[route]?.[method]
    if (!operation) throw new Error(`the spec has no ${key}`)
    const response = operation.responses['200'] ?? operation.responses['202']
    validators.set(key, ajv.compile(resolved(response.content['application/json'].schema)))
  }
  return validators.get(key)!
}

interface Answer { status: number; body: any; headers: Headers }

async function koios(route: string, body?: unknown, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(devnet.url + KOIOS + route, body === undefined
    ? init
    : { method: 'POST', headers: { 'Content-Type': 'application/json', ...init.headers }, body: typeof body === 'string' ? body : JSON.stringify(body) })
  const text = await response.text()
  let parsed: unknown = text
  try {
    parsed = JSON.parse(text)
  } catch { /* a text answer */ }
  return { status: response.status, body: parsed, headers: response.headers }
}

/** Calls an endpoint and checks the answer against the spec: status 200 and a body its schema accepts. */
async function valid(route: string, body?: unknown): Promise<any[]> {
  const answer = await koios(route, body)
  expect({ route, status: answer.status }).toEqual({ route, status: 200 })
  const validate = validatorFor(route.split('?')[0], body === undefined ? 'get' : 'post')
  const ok = validate(answer.body)
  expect({ route, errors: ok ? null : validate.errors }).toEqual({ route, errors: null })
  expect(Array.isArray(answer.body)).toBe(true)
  return answer.body
}

const blockfrost = async (route: string) => {
  const { status, body } = await getJson(devnet, route)
  expect({ route, status }).toEqual({ route, status: 200 })
  return body
}

const lovelaceOf = (amounts: { unit: string; quantity: string }[]) => amounts.find(a => a.unit === 'lovelace')?.quantity ?? '0'

let devnet: ChainADevnet
let w1: WalletKeyPair
let w2: WalletKeyPair
let transferTx: string
let delegationTx: string
let newPool: string
let drepId: string
let mintedUnit: string
let mintTx: string
let scriptTx: string
let lockedRef: string
let collateralRef: string
const validator = CSL.PlutusScript.from_bytes_v3(Buffer.from(fixture.cborHex, 'hex'))
const scriptAddress = CSL.EnterpriseAddress.new(0, CSL.Credential.from_scripthash(validator.hash())).to_address().to_bech32()

beforeAll(async () => {
  devnet = await startDevnet({ seed: 'koios-test', activity: true, epochLength: 15 })
  w1 = devnet.walletKeys('wallet-1')
  w2 = devnet.walletKeys('wallet-2')
  for (let i = 0; i < 36; i++) {
    devnet.activity.round()
    devnet.produceBlock()
  }
  const ledger = devnet.ledger
  // A transfer from wallet 1 to wallet 2.
  transferTx = devnet.submit(buildTx({ inputs: [largestUtxo(devnet, w1.address)], outputs: [{ address: w2.address, coin: 7n * ADA }], signers: [w1.payment] }))
  devnet.produceBlock()
  // Wallet 2 delegates its stake to another pool and its vote to a DRep.
  const account = ledger.accounts.get(w2.stakeAddress)!
  const pool = [...ledger.pools.values()].find(p => p.hex !== account.pool)!
  newPool = pool.id
  const drep = [...ledger.dreps.values()].find(d => d.hex !== account.drep)!
  drepId = drep.id
  const credential = CSL.Credential.from_keyhash(w2.stake.to_public().hash())
  delegationTx = devnet.submit(buildTx({
    inputs: [largestUtxo(devnet, w2.address)],
    certificates: [
      CSL.Certificate.new_stake_delegation(CSL.StakeDelegation.new(credential, CSL.Ed25519KeyHash.from_hex(pool.hex))),
      CSL.Certificate.new_vote_delegation(CSL.VoteDelegation.new(credential, CSL.DRep.new_key_hash(CSL.Ed25519KeyHash.from_hex(drep.hex)))),
    ],
    signers: [w2.payment, w2.stake],
  }))
  devnet.produceBlock()
  // Wallet 1 locks 10 ADA under a Plutus V3 validator (redeemer must equal datum), then spends it.
  const datum = { int: 42 }
  const lockTx = devnet.submit(buildTx({
    inputs: [largestUtxo(devnet, w1.address)], outputs: [{ address: scriptAddress, coin: 10n * ADA, datum: { inline: plutusData(datum) } }], signers: [w1.payment],
  }))
  devnet.produceBlock()
  lockedRef = `${lockTx}#0`
  const locked = ledger.outputs.get(lockedRef)!
  const [funding, collateral] = ledger.unspentAt(w1.address).filter(o => o.value.assets.size === 0).sort((a, b) => Number(b.value.coin - a.value.coin))
  collateralRef = collateral.ref
  const index = [locked.ref, funding.ref].sort((a, b) => (a.split('#')[0] === b.split('#')[0] ? Number(a.split('#')[1]) - Number(b.split('#')[1]) : a < b ? -1 : 1)).indexOf(locked.ref)
  scriptTx = devnet.submit(buildTx({
    inputs: [locked, funding], outputs: [{ address: w2.address, coin: 5n * ADA }], change: w1.address, plutusScripts: [validator],
    redeemers: [{ tag: 'spend', index, data: plutusData(datum), mem: 1_000_000, steps: 500_000_000 }], collateral: [collateral], signers: [w1.payment],
  }))
  for (let i = 0; i < 4; i++) devnet.produceBlock()
  const minted = [...ledger.assets.values()].find(a => a.quantity > 0n && a.onchainMetadata)!
  mintedUnit = minted.unit
  mintTx = minted.initialMintTx
})
afterAll(() => devnet.stop())

describe('every endpoint answers what the published schema describes, with the Blockfrost API\'s figures', () => {
  it('GET /tip is the newest block', async () => {
    const [tip] = await valid('/tip')
    const latest = await blockfrost('/blocks/latest')
    expect(tip).toMatchObject({ hash: latest.hash, block_height: latest.height, block_no: latest.height, abs_slot: latest.slot, epoch_no: latest.epoch, epoch_slot: latest.epoch_slot, block_time: latest.time })
  })

  it('GET /genesis', async () => {
    const [genesis] = await valid('/genesis')
    const bf = await blockfrost('/genesis')
    expect(genesis).toMatchObject({
      networkmagic: String(bf.network_magic), epochlength: String(bf.epoch_length), maxlovelacesupply: bf.max_lovelace_supply, systemstart: bf.system_start,
      activeslotcoeff: String(bf.active_slots_coefficient), securityparam: String(bf.security_param), slotlength: String(bf.slot_length),
    })
    expect(JSON.parse(genesis.alonzogenesis).collateralPercentage).toBe(150)
  })

  it('GET /totals, per epoch and for one epoch', async () => {
    const all = await valid('/totals')
    expect(all.map(t => t.epoch_no)).toEqual(Array.from({ length: devnet.ledger.currentEpoch + 1 }, (_, i) => devnet.ledger.currentEpoch - i))
    const max = BigInt((await blockfrost('/genesis')).max_lovelace_supply)
    for (const t of all) {
      expect(BigInt(t.supply) + BigInt(t.reserves)).toBe(max)
      expect(BigInt(t.circulation) + BigInt(t.treasury) + BigInt(t.reward) + BigInt(t.fees) + BigInt(t.deposits_stake) + BigInt(t.deposits_drep)).toBe(BigInt(t.supply))
    }
    expect(BigInt(all[0].treasury)).toBeGreaterThan(0n)
    const [one] = await valid('/totals?_epoch_no=1')
    expect(one).toEqual(all.find(t => t.epoch_no === 1))
  })

  it('GET /epoch_info, all epochs newest first and one epoch', async () => {
    const all = await valid('/epoch_info')
    expect(all[0].epoch_no).toBe(devnet.ledger.currentEpoch)
    expect(all[0].total_rewards).toBeNull()
    const [one] = await valid('/epoch_info?_epoch_no=1')
    const bf = await blockfrost('/epochs/1')
    expect(one).toMatchObject({
      epoch_no: 1, out_sum: bf.output, fees: bf.fees, tx_count: bf.tx_count, blk_count: bf.block_count, start_time: bf.start_time, end_time: bf.end_time,
      first_block_time: bf.first_block_time, last_block_time: bf.last_block_time, active_stake: bf.active_stake, era: 'Conway',
    })
    expect(BigInt(one.total_rewards)).toBeGreaterThan(0n)
  })

  it('GET /epoch_params, all epochs and one epoch', async () => {
    const all = await valid('/epoch_params')
    expect(all).toHaveLength(devnet.ledger.currentEpoch + 1)
    const [one] = await valid('/epoch_params?_epoch_no=2')
    const bf = await blockfrost('/epochs/2/parameters')
    expect(one).toMatchObject({
      epoch_no: 2, min_fee_a: bf.min_fee_a, min_fee_b: bf.min_fee_b, max_tx_size: bf.max_tx_size, key_deposit: bf.key_deposit, pool_deposit: bf.pool_deposit,
      optimal_pool_count: bf.n_opt, coins_per_utxo_size: bf.coins_per_utxo_size, max_tx_ex_mem: Number(bf.max_tx_ex_mem), nonce: bf.nonce,
      collateral_percent: bf.collateral_percent, drep_deposit: bf.drep_deposit, cost_models: bf.cost_models, protocol_major: bf.protocol_major_ver,
      block_hash: (await blockfrost('/epochs/2/blocks?count=1'))[0],
    })
  })

  it('GET /blocks lists all blocks newest first', async () => {
    const blocks = await koios('/blocks')
    expect(blocks.status).toBe(200)
    expect(blocks.body.map((b: any) => b.block_height)).toEqual(devnet.ledger.blocks.map(b => b.height).reverse())
    // The genesis block has no issuer: Koios answers null for its pool, VRF key and parent.
    const validate = validatorFor('/blocks', 'get')
    expect(validate(blocks.body.filter((b: any) => b.block_height > 0))).toBe(true)
    expect(blocks.body[blocks.body.length - 1]).toMatchObject({ block_height: 0, pool: null, vrf_key: null, parent_hash: null })
    const bf = await blockfrost('/blocks/latest')
    expect(blocks.body[0]).toMatchObject({ hash: bf.hash, tx_count: bf.tx_count, block_size: bf.size, vrf_key: bf.block_vrf, pool: bf.slot_leader, parent_hash: bf.previous_block })
  })

  it('POST /block_info and /block_txs', async () => {
    const block = devnet.ledger.block(devnet.ledger.txs.get(transferTx)!.included.blockHash)!
    const [info] = await valid('/block_info', { _block_hashes: [block.hash] })
    const bf = await blockfrost(`/blocks/${block.hash}`)
    expect(info).toMatchObject({
      hash: bf.hash, block_height: bf.height, abs_slot: bf.slot, epoch_no: bf.epoch, tx_count: bf.tx_count, total_output: bf.output, total_fees: bf.fees,
      num_confirmations: bf.confirmations, parent_hash: bf.previous_block, child_hash: bf.next_block, op_cert: bf.op_cert, vrf_key: bf.block_vrf, pool: bf.slot_leader,
    })
    const txs = await valid('/block_txs', { _block_hashes: [block.hash] })
    expect(txs.map(t => t.tx_hash)).toEqual(await blockfrost(`/blocks/${block.hash}/txs`))
    expect(txs.every(t => t.block_hash === block.hash && t.block_height === block.height)).toBe(true)
    expect(await valid('/block_info', { _block_hashes: ['00'.repeat(32)] })).toEqual([])
  })

  it('POST /tx_info with every detail matches /txs/{hash} and /txs/{hash}/utxos', async () => {
    const all = { _inputs: true, _metadata: true, _assets: true, _withdrawals: true, _certs: true, _scripts: true, _bytecode: true }
    const [info] = await valid('/tx_info', { _tx_hashes: [mintTx], ...all })
    const tx = await blockfrost(`/txs/${mintTx}`)
    const utxos = await blockfrost(`/txs/${mintTx}/utxos`)
    expect(info).toMatchObject({
      tx_hash: mintTx, block_hash: tx.block, block_height: tx.block_height, absolute_slot: tx.slot, tx_timestamp: tx.block_time, tx_block_index: tx.index,
      tx_size: tx.size, fee: tx.fees, deposit: tx.deposit, total_output: lovelaceOf(tx.output_amount), invalid_before: tx.invalid_before, invalid_after: tx.invalid_hereafter,
    })
    expect(info.inputs.map((i: any) => [i.tx_hash, i.tx_index, i.payment_addr.bech32, i.value])).toEqual(
      utxos.inputs.filter((i: any) => !i.collateral && !i.reference).map((i: any) => [i.tx_hash, i.output_index, i.address, lovelaceOf(i.amount)]))
    expect(info.outputs.map((o: any) => [o.tx_index, o.payment_addr.bech32, o.value, o.asset_list.map((a: any) => [a.policy_id + a.asset_name, a.quantity])])).toEqual(
      utxos.outputs.map((o: any) => [o.output_index, o.address, lovelaceOf(o.amount), o.amount.filter((a: any) => a.unit !== 'lovelace').map((a: any) => [a.unit, a.quantity])]))
    const metadata = await blockfrost(`/txs/${mintTx}/metadata`)
    expect(info.metadata).toEqual(Object.fromEntries(metadata.map((m: any) => [m.label, m.json_metadata])))
    expect(info.assets_minted.map((a: any) => a.policy_id + a.asset_name)).toContain(mintedUnit)
    expect(info.native_scripts.length).toBeGreaterThan(0)
    expect(info.native_scripts[0].script_hash).toBe(mintedUnit.slice(0, 56))
  })

  it('POST /tx_info shows a Plutus execution, its collateral and the script\'s bytecode', async () => {
    const [info] = await valid('/tx_info', { _tx_hashes: [scriptTx], _inputs: true, _scripts: true, _bytecode: true })
    const utxos = await blockfrost(`/txs/${scriptTx}/utxos`)
    expect(info.collateral_inputs.map((i: any) => `${i.tx_hash}#${i.tx_index}`)).toEqual(utxos.inputs.filter((i: any) => i.collateral).map((i: any) => `${i.tx_hash}#${i.output_index}`))
    expect(info.collateral_inputs.map((i: any) => `${i.tx_hash}#${i.tx_index}`)).toEqual([collateralRef])
    const spentInput = info.inputs.find((i: any) => `${i.tx_hash}#${i.tx_index}` === lockedRef)
    expect(spentInput.inline_datum).toEqual({ bytes: expect.any(String), value: { int: 42 } })
    expect((await blockfrost(`/txs/${scriptTx}`)).redeemer_count).toBe(info.plutus_contracts.length)
    expect(info.plutus_contracts).toEqual([expect.objectContaining({
      address: scriptAddress,
      spends_input: { tx_hash: lockedRef.split('#')[0], tx_index: 0 },
      script_hash: validator.hash().to_hex(),
      bytecode: Buffer.from(validator.bytes()).toString('hex'),
      size: validator.bytes().length,
      valid_contract: true,
      input: {
        redeemer: { purpose: 'spend', fee: expect.any(String), unit: { mem: '1000000', steps: '500000000' }, datum: { hash: expect.any(String), value: { int: 42 } } },
        datum: { hash: expect.any(String), value: { int: 42 } },
      },
    })])
    const [withoutBytecode] = await valid('/tx_info', { _tx_hashes: [scriptTx], _scripts: true })
    expect(withoutBytecode.plutus_contracts[0].bytecode).toBeNull()
    expect(withoutBytecode.collateral_inputs).toEqual([])
  })

  it('POST /tx_info leaves out what its flags do not ask for, as Koios does', async () => {
    const [bare] = await valid('/tx_info', { _tx_hashes: [mintTx] })
    expect(bare).toMatchObject({ inputs: [], metadata: null, assets_minted: [], certificates: [], withdrawals: [], native_scripts: [], collateral_inputs: [], collateral_output: null })
    expect(bare.outputs.length).toBeGreaterThan(0)
    expect(bare.outputs.every((o: any) => o.asset_list.length === 0)).toBe(true)
    const [certs] = await valid('/tx_info', { _tx_hashes: [delegationTx], _certs: true })
    expect(certs.certificates).toEqual([
      { index: 0, type: 'pool_delegation', info: expect.objectContaining({ stake_address: w2.stakeAddress, pool_id_bech32: newPool }) },
      { index: 1, type: 'vote_delegation', info: expect.objectContaining({ stake_address: w2.stakeAddress, drep_id: drepId }) },
    ])
  })

  it('POST /tx_cbor and /tx_status', async () => {
    const [cbor] = await valid('/tx_cbor', { _tx_hashes: [transferTx] })
    expect(cbor.cbor).toBe((await blockfrost(`/txs/${transferTx}/cbor`)).cbor)
    const unknown = 'ab'.repeat(32)
    const status = await valid('/tx_status', { _tx_hashes: [transferTx, unknown] })
    const confirmations = (await blockfrost(`/blocks/${(await blockfrost(`/txs/${transferTx}`)).block}`)).confirmations
    expect(status).toEqual([{ tx_hash: transferTx, num_confirmations: confirmations }, { tx_hash: unknown, num_confirmations: null }])
  })

  it('POST /address_info, /address_utxos, /address_txs and /address_assets', async () => {
    const address = devnet.ledger.genesis.activityWallets[0].address
    const [info] = await valid('/address_info', { _addresses: [address] })
    const bf = await blockfrost(`/addresses/${address}`)
    expect(info).toMatchObject({ address, balance: lovelaceOf(bf.amount), stake_address: bf.stake_address, script_address: bf.script })
    const bfUtxos = await blockfrost(`/addresses/${address}/utxos`)
    const refs = (rows: any[]) => rows.map(u => `${u.tx_hash}#${u.tx_index ?? u.output_index}`).sort()
    expect(refs(info.utxo_set)).toEqual(refs(bfUtxos))

    const utxos = await valid('/address_utxos', { _addresses: [address] })
    expect(refs(utxos)).toEqual(refs(bfUtxos))
    expect(utxos.every(u => u.asset_list === null && u.is_spent === false && u.address === address)).toBe(true)
    const extended = await valid('/address_utxos', { _addresses: [address], _extended: true })
    const held = (rows: any[]) => rows.flatMap(u => u.asset_list).reduce((sum: bigint, a: any) => sum + BigInt(a.quantity), 0n)
    const bfHeld = bf.amount.filter((a: any) => a.unit !== 'lovelace').reduce((sum: bigint, a: any) => sum + BigInt(a.quantity), 0n)
    expect(held(extended)).toBe(bfHeld)

    const txs = await valid('/address_txs', { _addresses: [address] })
    const bfTxs = await blockfrost(`/addresses/${address}/transactions?order=desc`)
    expect(txs.map(t => t.tx_hash).sort()).toEqual(bfTxs.map((t: any) => t.tx_hash).sort())
    expect(txs.map(t => t.block_height)).toEqual([...txs.map(t => t.block_height)].sort((a, b) => b - a))
    const after = txs[Math.floor(txs.length / 2)].block_height
    const later = await valid('/address_txs', { _addresses: [address], _after_block_height: after })
    expect(later.length).toBeGreaterThan(0)
    expect(later.every(t => t.block_height >= after)).toBe(true)

    const assets = await valid('/address_assets', { _addresses: [address] })
    expect(assets.map(a => [a.policy_id + a.asset_name, a.quantity]).sort()).toEqual(bf.amount.filter((a: any) => a.unit !== 'lovelace').map((a: any) => [a.unit, a.quantity]).sort())
    expect(await valid('/address_info', { _addresses: ['addr_test1qqunknown'] })).toEqual([])
  })

  it('POST /utxo_info answers outputs by reference, spent or not', async () => {
    const bf = await blockfrost(`/txs/${lockedRef.split('#')[0]}/utxos`)
    const locked = bf.outputs.find((o: any) => o.output_index === Number(lockedRef.split('#')[1]))
    expect(locked.consumed_by_tx).toBe(scriptTx)
    const unspent = `${transferTx}#0`
    const rows = await valid('/utxo_info', { _utxo_refs: [lockedRef, unspent, `${'ab'.repeat(32)}#0`], _extended: true })
    expect(rows.map(row => [`${row.tx_hash}#${row.tx_index}`, row.is_spent]).sort()).toEqual([[lockedRef, true], [unspent, devnet.ledger.outputs.get(unspent)!.spentBy !== null]].sort())
    expect(rows.find(row => `${row.tx_hash}#${row.tx_index}` === lockedRef)).toMatchObject({ value: locked.amount.find((a: any) => a.unit === 'lovelace').quantity, inline_datum: { bytes: expect.any(String) } })
  })

  it('POST /credential_utxos and /credential_txs', async () => {
    const credential = CSL.BaseAddress.from_address(CSL.Address.from_bech32(w1.address))!.payment_cred().to_keyhash()!.to_hex()
    const utxos = await valid('/credential_utxos', { _payment_credentials: [credential] })
    expect(utxos.map(u => `${u.tx_hash}#${u.tx_index}`).sort()).toEqual((await valid('/address_utxos', { _addresses: [w1.address] })).map(u => `${u.tx_hash}#${u.tx_index}`).sort())
    expect(utxos.every(u => u.payment_cred === credential)).toBe(true)
    const txs = await valid('/credential_txs', { _payment_credentials: [credential] })
    expect(txs.map(t => t.tx_hash)).toContain(transferTx)
  })

  it('POST /account_info and /account_addresses', async () => {
    const [info] = await valid('/account_info', { _stake_addresses: [w2.stakeAddress] })
    const bf = await blockfrost(`/accounts/${w2.stakeAddress}`)
    expect(info).toMatchObject({
      stake_address: w2.stakeAddress, status: 'registered', delegated_pool: newPool, delegated_drep: drepId, total_balance: bf.controlled_amount,
      rewards: bf.rewards_sum, withdrawals: bf.withdrawals_sum, rewards_available: bf.withdrawable_amount,
    })
    expect(BigInt(info.utxo) + BigInt(info.rewards_available)).toBe(BigInt(info.total_balance))
    const [addresses] = await valid('/account_addresses', { _stake_addresses: [w2.stakeAddress] })
    expect(addresses.addresses).toEqual((await blockfrost(`/accounts/${w2.stakeAddress}/addresses`)).map((a: any) => a.address))
    const [first] = await valid('/account_addresses', { _stake_addresses: [w2.stakeAddress], _first_only: true, _empty: true })
    expect(first.addresses).toHaveLength(1)
  })

  it('GET /asset_history, POST /asset_info, GET /asset_txs', async () => {
    const policy = mintedUnit.slice(0, 56)
    const name = mintedUnit.slice(56)
    const [info] = await valid('/asset_info', { _asset_list: [[policy, name]] })
    const bf = await blockfrost(`/assets/${mintedUnit}`)
    expect(info).toMatchObject({ policy_id: policy, asset_name: name, fingerprint: bf.fingerprint, total_supply: bf.quantity, token_registry_metadata: null })
    expect(info.mint_cnt + info.burn_cnt).toBe(bf.mint_or_burn_count)
    expect(info.minting_tx_metadata['721']).toBeDefined()

    const [history] = await valid(`/asset_history?_asset_policy=${policy}&_asset_name=${name}`)
    const bfHistory = await blockfrost(`/assets/${mintedUnit}/history?order=desc`)
    expect(history.minting_txs.map((m: any) => [m.tx_hash, m.quantity.replace('-', '')])).toEqual(bfHistory.map((h: any) => [h.tx_hash, h.amount]))
    expect(await valid(`/asset_history?_asset_policy=${policy}`)).toEqual(expect.arrayContaining([history]))

    const txs = await valid(`/asset_txs?_asset_policy=${policy}&_asset_name=${name}&_history=true`)
    expect(txs.map(t => t.tx_hash).sort()).toEqual([...new Set(await blockfrost(`/assets/${mintedUnit}/txs`))].sort())
    const current = await valid(`/asset_txs?_asset_policy=${policy}&_asset_name=${name}`)
    expect(current.map(t => t.tx_hash).sort()).toEqual([...new Set(devnet.ledger.unspentWithAsset(mintedUnit).map(o => o.txHash))].sort())
  })

  it('GET /pool_list, POST /pool_info, GET /pool_delegators', async () => {
    const list = await valid('/pool_list')
    expect(list.map(p => p.pool_id_bech32).sort()).toEqual((await blockfrost('/pools')).sort())
    const [info] = await valid('/pool_info', { _pool_bech32_ids: [newPool] })
    const bf = await blockfrost(`/pools/${newPool}`)
    expect(info).toMatchObject({
      pool_id_bech32: newPool, pool_id_hex: bf.hex, vrf_key_hash: bf.vrf_key, margin: bf.margin_cost, fixed_cost: bf.fixed_cost, pledge: bf.declared_pledge,
      reward_addr: bf.reward_account, owners: bf.owners, active_stake: bf.active_stake, live_stake: bf.live_stake, live_pledge: bf.live_pledge,
      live_delegators: bf.live_delegators, block_count: bf.blocks_minted, pool_status: 'registered',
    })
    const delegators = await valid(`/pool_delegators?_pool_bech32=${newPool}`)
    const bfDelegators = await blockfrost(`/pools/${newPool}/delegators`)
    expect(delegators.map(d => [d.stake_address, d.amount]).sort()).toEqual(bfDelegators.map((d: any) => [d.address, d.live_stake]).sort())
    expect(delegators.find(d => d.stake_address === w2.stakeAddress)).toMatchObject({ latest_delegation_tx_hash: delegationTx })
  })

  it('GET /drep_list, POST /drep_info, GET /drep_delegators', async () => {
    const list = await valid('/drep_list')
    expect(list.map(d => d.drep_id).sort()).toEqual((await blockfrost('/governance/dreps')).map((d: any) => d.drep_id).sort())
    const [info] = await valid('/drep_info', { _drep_ids: [drepId] })
    const bf = await blockfrost(`/governance/dreps/${drepId}`)
    expect(info).toMatchObject({ drep_id: drepId, hex: bf.hex, amount: bf.amount, active: !bf.expired, drep_status: 'registered' })
    const delegators = await valid(`/drep_delegators?_drep_id=${drepId}`)
    const bfDelegators = await blockfrost(`/governance/dreps/${drepId}/delegators`)
    expect(delegators.map(d => [d.stake_address, d.amount]).sort()).toEqual(bfDelegators.map((d: any) => [d.address, d.amount]).sort())
    expect(info.live_delegator_count).toBe(delegators.length)
    const mine = delegators.find(d => d.stake_address === w2.stakeAddress)
    expect(mine.epoch_no).toBe(devnet.ledger.epochOf(devnet.ledger.txs.get(delegationTx)!.included.slot))
  })
})

describe('POST /submittx', () => {
  it('accepts a signed transaction (202, its hash) and refuses one the ledger rejects with the reason (400)', async () => {
    const input = largestUtxo(devnet, w1.address)
    const cbor = buildTx({ inputs: [input], outputs: [{ address: w2.address, coin: 3n * ADA }], signers: [w1.payment] })
    const post = (bytes: Uint8Array, contentType = 'application/cbor') =>
      koios('/submittx', undefined, { method: 'POST', headers: { 'Content-Type': contentType }, body: Buffer.from(bytes) })
    const accepted = await post(cbor)
    expect(accepted.status).toBe(202)
    expect(accepted.body).toMatch(/^[0-9a-f]{64}$/)
    const validate = validatorFor('/submittx', 'post')
    expect(validate(accepted.body)).toBe(true)
    expect(devnet.ledger.mempoolTransactions().map(tx => tx.hash)).toContain(accepted.body)

    // Spending the same output again: the same rule, and the same reason, as Blockfrost's route.
    const conflicting = buildTx({ inputs: [input], outputs: [{ address: w2.address, coin: 4n * ADA }], signers: [w1.payment] })
    const refused = await post(conflicting)
    expect(refused.status).toBe(400)
    expect(typeof refused.body).toBe('string')
    expect(refused.body).toMatch(/^BadInputsUTxO/)
    const bf = await fetch(devnet.url + '/tx/submit', { method: 'POST', headers: { 'Content-Type': 'application/cbor' }, body: Buffer.from(conflicting) })
    expect((await bf.json()).message).toBe(refused.body)
    expect((await post(new Uint8Array([0x83, 0x01]))).body).toMatch(/^DeserialiseFailure/)

    devnet.produceBlock()
    const [status] = await valid('/tx_status', { _tx_hashes: [accepted.body] })
    expect(status.num_confirmations).toBe(0)
  })
})

describe('PostgREST conventions', () => {
  it('filters rows with eq, neq, gt, gte, lt, lte, in and is', async () => {
    const heights = async (query: string) => (await valid(`/blocks?${query}`)).map(b => b.block_height)
    expect(await heights('block_height=gt.5&block_height=lte.8')).toEqual([8, 7, 6])
    expect(await heights('block_height=gte.5&block_height=lt.7')).toEqual([6, 5])
    expect(await heights('block_height=eq.3')).toEqual([3])
    expect(await heights('block_height=in.(2,4,9)')).toEqual([9, 4, 2])
    expect(await heights(`block_height=neq.0&block_height=lt.3`)).toEqual([2, 1])
    const genesis = await koios('/blocks?pool=is.null')
    expect(genesis.body.map((b: any) => b.block_height)).toEqual([0])
    const tip = devnet.ledger.tip
    expect(await heights(`hash=eq.${tip.hash}`)).toEqual([tip.height])
    const epochs = await valid('/epoch_info?epoch_no=in.(0,1)')
    expect(epochs.map(e => e.epoch_no)).toEqual([1, 0])
  })

  it('orders rows by one or more columns', async () => {
    const asc = await koios('/blocks?order=block_height.asc&limit=3')
    expect(asc.body.map((b: any) => b.block_height)).toEqual([0, 1, 2])
    const byEpoch = await valid('/blocks?block_height=gt.0&order=epoch_no.asc,block_height.desc&limit=2')
    const epoch0 = devnet.ledger.epochs.get(0)!.blocks.length
    expect(byEpoch.map(b => b.block_height)).toEqual([epoch0 - 1, epoch0 - 2])
  })

  it('pages with offset and limit, or a Range header, and says which rows it answers in Content-Range', async () => {
    const page = await koios('/blocks?offset=2&limit=3&order=block_height.asc')
    expect(page.body.map((b: any) => b.block_height)).toEqual([2, 3, 4])
    expect(page.headers.get('content-range')).toBe('2-4/*')
    const ranged = await koios('/blocks?order=block_height.asc', undefined, { headers: { Range: '5-6' } })
    expect(ranged.body.map((b: any) => b.block_height)).toEqual([5, 6])
    expect(ranged.headers.get('content-range')).toBe('5-6/*')
    const empty = await koios('/blocks?offset=100000')
    expect(empty.body).toEqual([])
    expect(empty.headers.get('content-range')).toBe('*/*')
    const all = await koios('/blocks')
    expect(all.headers.get('content-range')).toBe(`0-${devnet.ledger.blocks.length - 1}/*`)
  })

  it('answers at most 1000 rows', async () => {
    const epochLength = devnet.ledger.epochLength
    expect(epochLength).toBeGreaterThan(0)
    // A thousand blocks take seconds on a busy machine: the event loop is let run between them, so a kept-alive
    // connection the server closes meanwhile is seen closed before the next request would reuse it.
    for (let made = 0; devnet.ledger.blocks.length <= 1005; made++) {
      devnet.produceBlock()
      if (made % 20 === 0) await new Promise(resolve => setImmediate(resolve))
    }
    const page = await koios('/blocks')
    expect(page.body).toHaveLength(1000)
    expect(page.headers.get('content-range')).toBe('0-999/*')
    const next = await koios('/blocks?offset=1000&limit=5000')
    expect(next.body).toHaveLength(devnet.ledger.blocks.length - 1000)
    expect((await koios('/blocks?limit=2000')).body).toHaveLength(1000)
  })

  it('selects columns', async () => {
    const [tip] = await valid('/tip?select=hash,block_height')
    expect(tip).toEqual({ hash: devnet.ledger.tip.hash, block_height: devnet.ledger.tip.height })
    const infos = await valid('/tx_info?select=tx_hash,fee', { _tx_hashes: [transferTx] })
    expect(infos).toEqual([{ tx_hash: transferTx, fee: String(devnet.ledger.txs.get(transferTx)!.fee) }])
  })

  it('refuses unknown columns, malformed filters and bad arguments with 400 and a PostgREST error', async () => {
    const error = { code: expect.any(String), details: null, hint: null, message: expect.any(String) }
    for (const route of ['/blocks?nonexistent=eq.1', '/blocks?order=nonexistent.desc', '/tip?select=hash,nonexistent']) {
      const answer = await koios(route)
      expect({ route, status: answer.status, body: answer.body }).toEqual({ route, status: 400, body: error })
      expect(answer.body.message).toContain('nonexistent')
    }
    const textOrNull = (value: unknown) => value === null || typeof value === 'string'
    const checks: [string, unknown][] = [
      ['/blocks?block_height=zz.1', undefined],
      ['/blocks?block_height=gt.abc', undefined],
      ['/blocks?limit=-1', undefined],
      ['/blocks?order=block_height.sideways', undefined],
      ['/epoch_info?_epoch_no=abc', undefined],
      ['/tx_info', '{"_tx_hashes": ['],
      ['/tx_info', { _tx_hashes: 'not a list' }],
      ['/tx_info', { _tx_hashes: [1, 2] }],
      ['/tx_info', { _tx_hashes: [transferTx], _inputs: 'yes' }],
      ['/tx_info', {}],
      ['/tx_info', []],
      ['/address_txs', { _addresses: [w1.address], _after_block_height: 'x' }],
      ['/asset_info', { _asset_list: ['not pairs'] }],
      ['/asset_txs?_asset_name=00', undefined],
    ]
    for (const [route, body] of checks) {
      const answer = await koios(route, body)
      expect({ route, body, status: answer.status }).toEqual({ route, body, status: 400 })
      expect(Object.keys(answer.body).sort()).toEqual(['code', 'details', 'hint', 'message'])
      expect([typeof answer.body.code, typeof answer.body.message, textOrNull(answer.body.details), textOrNull(answer.body.hint)]).toEqual(['string', 'string', true, true])
    }
  })

  it('answers 404 for an endpoint it does not serve', async () => {
    const answer = await koios('/no_such_endpoint')
    expect(answer.status).toBe(404)
    expect(answer.body).toEqual(expect.objectContaining({ code: expect.any(String), message: expect.any(String) }))
    expect((await koios('/tip/extra')).status).toBe(404)
    // An argument the function does not take: PostgREST finds no such function.
    expect((await koios('/tip?_epoch_no=1')).status).toBe(404)
    expect((await koios('/tx_status', { _tx_hashes: [transferTx], _unknown: true })).status).toBe(404)
  })
})
