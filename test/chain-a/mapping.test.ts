import { validateSchema } from '@blockfrost/openapi'
import { BlockfrostAdapter } from '../../srv/chains/chain-a/blockfrost.ts'
import { bodyFor, startOpenApiServer, templateFor } from './support/openapi-server.ts'
import { upstreamConfig, type TestServer } from './support/test-server.ts'

/* Every port method against answers synthesised from the Blockfrost OpenAPI schemas. */

type Json = Record<string, any>
type Amount = { unit: string; quantity: string }[]

let server: TestServer
let adapter: BlockfrostAdapter

beforeAll(async () => {
  server = await startOpenApiServer()
  adapter = new BlockfrostAdapter(upstreamConfig({ url: server.url }))
})
afterAll(() => server.close())
beforeEach(() => server.requests.splice(0))

const object = (path: string) => bodyFor(path) as Json
const list = (path: string) => bodyFor(path) as Json[]
const paths = () => server.requests.map(r => r.path)

function expectSplit(mapped: { lovelace: string; assets: { unit: string; quantity: string }[] }, amount: Amount) {
  expect(mapped.lovelace).toBe(amount.find(a => a.unit === 'lovelace')?.quantity)
  expect(mapped.assets).toEqual(amount.filter(a => a.unit !== 'lovelace'))
  expect(mapped.assets.some(a => a.unit === 'lovelace')).toBe(false)
}

describe('the synthesised upstream stays honest', () => {
  const endpoints: [string, string][] = [
    ['/blocks/latest', 'block_content'],
    ['/blocks/4ea1ba291e8eef538635a53e59fddba7810d1679631cc3aed7c8e6c4091a516a', 'block_content'],
    ['/epochs/225', 'epoch_content'],
    ['/epochs/latest', 'epoch_content'],
    ['/epochs/latest/parameters', 'epoch_param_content'],
    ['/epochs/225/parameters', 'epoch_param_content'],
    ['/txs/abc', 'tx_content'],
    ['/txs/abc/utxos', 'tx_content_utxo'],
    ['/txs/abc/metadata', 'tx_content_metadata'],
    ['/addresses/addr1x', 'address_content'],
    ['/addresses/addr1x/utxos', 'address_utxo_content'],
    ['/addresses/addr1x/transactions', 'address_transactions_content'],
    ['/assets/abc/history', 'asset_history'],
    ['/accounts/stake1x', 'account_content'],
    ['/pools/pool1x', 'pool'],
    ['/pools/pool1x/metadata', 'pool_metadata'],
    ['/governance/dreps/drep1x', 'drep'],
    ['/network', 'network'],
    ['/genesis', 'genesis_content'],
  ]

  afterEach(() => jest.restoreAllMocks())

  it.each(endpoints)('%s answers a valid %s', (path, component) => {
    jest.spyOn(console, 'warn').mockImplementation(() => undefined) // ajv notes Blockfrost's free-text formats
    const { isValid, errors } = validateSchema(component, bodyFor(path))
    expect(errors ?? []).toEqual([])
    expect(isValid).toBe(true)
  })

  it('routes literal paths before parameterised ones', () => {
    expect(templateFor('/blocks/latest')).toBe('/blocks/latest')
    expect(templateFor('/epochs/latest/parameters')).toBe('/epochs/latest/parameters')
    expect(templateFor('/epochs/12/parameters')).toBe('/epochs/{number}/parameters')
  })
})

/** A port field's source in the Blockfrost payload: a (dotted) field name, or a function of the payload. */
type Source = string | ((body: Json) => unknown)
const fieldsOf = (body: Json, fields: Record<string, Source>) =>
  Object.fromEntries(Object.entries(fields).map(([name, source]) =>
    [name, typeof source === 'function' ? source(body) : source.split('.').reduce((value: any, key) => value?.[key], body)]))

const BLOCK: Record<string, Source> = {
  hash: 'hash', height: 'height', slot: 'slot', epoch: 'epoch', epochSlot: 'epoch_slot', time: 'time', slotLeader: 'slot_leader',
  size: 'size', txCount: 'tx_count', output: 'output', fees: 'fees', previousBlock: 'previous_block', confirmations: 'confirmations',
}
const EPOCH: Record<string, Source> = {
  epoch: 'epoch', startTime: 'start_time', endTime: 'end_time', firstBlockTime: 'first_block_time', lastBlockTime: 'last_block_time',
  blockCount: 'block_count', txCount: 'tx_count', output: 'output', fees: 'fees', activeStake: 'active_stake',
}
const PARAMETERS: Record<string, Source> = {
  epoch: 'epoch', minFeeA: 'min_fee_a', minFeeB: 'min_fee_b', maxBlockSize: 'max_block_size', maxTxSize: 'max_tx_size',
  maxBlockHeaderSize: 'max_block_header_size', keyDeposit: 'key_deposit', poolDeposit: 'pool_deposit', eMax: 'e_max', nOpt: 'n_opt',
  a0: 'a0', rho: 'rho', tau: 'tau', protocolMajorVer: 'protocol_major_ver', protocolMinorVer: 'protocol_minor_ver', minPoolCost: 'min_pool_cost',
  coinsPerUtxoSize: 'coins_per_utxo_size', priceMem: 'price_mem', priceStep: 'price_step', maxTxExMem: 'max_tx_ex_mem',
  maxTxExSteps: 'max_tx_ex_steps', maxBlockExMem: 'max_block_ex_mem', maxBlockExSteps: 'max_block_ex_steps', maxValSize: 'max_val_size',
  collateralPercent: 'collateral_percent', maxCollateralInputs: 'max_collateral_inputs', govActionDeposit: 'gov_action_deposit',
  drepDeposit: 'drep_deposit', minFeeRefScriptCostPerByte: 'min_fee_ref_script_cost_per_byte',
  costModels: body => JSON.stringify(body.cost_models_raw),
}
const BLOCK_HASH = '4ea1ba291e8eef538635a53e59fddba7810d1679631cc3aed7c8e6c4091a516a'

/** Reads of one object: which payload it maps, which request it makes, and where each port field comes from. */
const OBJECT_READS: { read: string; call: (a: BlockfrostAdapter) => Promise<unknown>; payload: string; requested: string; fields: Record<string, Source> }[] = [
  { read: 'tip', call: a => a.tip(), payload: '/blocks/latest', requested: '/blocks/latest', fields: BLOCK },
  { read: 'block by hash', call: a => a.block(BLOCK_HASH), payload: '/blocks/latest', requested: `/blocks/${BLOCK_HASH}`, fields: BLOCK },
  { read: 'block by height', call: a => a.block(15243593), payload: '/blocks/latest', requested: '/blocks/15243593', fields: BLOCK },
  { read: 'epoch', call: a => a.epoch(225), payload: '/epochs/225', requested: '/epochs/225', fields: EPOCH },
  { read: 'latest epoch', call: a => a.latestEpoch(), payload: '/epochs/225', requested: '/epochs/latest', fields: EPOCH },
  { read: 'protocol parameters', call: a => a.protocolParameters(), payload: '/epochs/latest/parameters', requested: '/epochs/latest/parameters', fields: PARAMETERS },
  { read: 'protocol parameters of an epoch', call: a => a.protocolParameters(225), payload: '/epochs/latest/parameters', requested: '/epochs/225/parameters', fields: PARAMETERS },
  {
    read: 'account', call: a => a.account('stake1x'), payload: '/accounts/stake1x', requested: '/accounts/stake1x',
    fields: {
      stakeAddress: 'stake_address', active: 'active', activeEpoch: 'active_epoch', controlledAmount: 'controlled_amount', rewardsSum: 'rewards_sum',
      withdrawalsSum: 'withdrawals_sum', reservesSum: 'reserves_sum', treasurySum: 'treasury_sum', withdrawableAmount: 'withdrawable_amount',
      poolId: 'pool_id', drepId: 'drep_id',
    },
  },
  {
    read: 'drep', call: a => a.drep('drep1x'), payload: '/governance/dreps/drep1x', requested: '/governance/dreps/drep1x',
    fields: { drepId: 'drep_id', hex: 'hex', amount: 'amount', hasScript: 'has_script', retired: 'retired', expired: 'expired', lastActiveEpoch: 'last_active_epoch' },
  },
  {
    read: 'network supply and stake', call: a => a.network(), payload: '/network', requested: '/network',
    fields: {
      maxSupply: 'supply.max', totalSupply: 'supply.total', circulatingSupply: 'supply.circulating', lockedSupply: 'supply.locked',
      treasurySupply: 'supply.treasury', reservesSupply: 'supply.reserves', liveStake: 'stake.live', activeStake: 'stake.active',
    },
  },
  {
    read: 'genesis', call: a => a.genesis(), payload: '/genesis', requested: '/genesis',
    fields: {
      activeSlotsCoefficient: 'active_slots_coefficient', updateQuorum: 'update_quorum', maxLovelaceSupply: 'max_lovelace_supply',
      networkMagic: 'network_magic', epochLength: 'epoch_length', systemStart: 'system_start', slotsPerKesPeriod: 'slots_per_kes_period',
      slotLength: 'slot_length', maxKesEvolutions: 'max_kes_evolutions', securityParam: 'security_param',
    },
  },
]

describe('BlockfrostAdapter maps Blockfrost payloads to the port', () => {
  it.each(OBJECT_READS)('$read: every field from its payload field, one request to $requested', async ({ call, payload, requested, fields }) => {
    const expected = fieldsOf(object(payload), fields)
    expect(Object.keys(expected).filter(name => expected[name] === undefined)).toEqual([]) // a misspelt source would hide a missing field
    expect(await call(adapter)).toStrictEqual(expected)
    expect(paths()).toEqual([requested])
  })

  it('the synthesised payloads are the ones the table expects', () => {
    expect(object('/blocks/latest').height).toBe(15243593)
    expect(object('/governance/dreps/drep1x').last_active_epoch).toBe(509)
    expect(JSON.parse(fieldsOf(object('/epochs/latest/parameters'), PARAMETERS).costModels as string).PlutusV3).toEqual(object('/epochs/latest/parameters').cost_models_raw.PlutusV3)
  })

  it('a transaction with its utxos and metadata', async () => {
    const hash = '1e043f100dce12d107f679685acd2fc0610e10f72a92d412794c9773d11d8477'
    const tx = object(`/txs/${hash}`)
    const utxos = object(`/txs/${hash}/utxos`)
    const metadata = list(`/txs/${hash}/metadata`)
    const mapped = await adapter.transaction(hash)
    expect(mapped).toMatchObject({
      hash: tx.hash,
      blockHash: tx.block,
      blockHeight: tx.block_height,
      blockTime: tx.block_time,
      slot: tx.slot,
      index: tx.index,
      fee: tx.fees,
      deposit: tx.deposit,
      size: tx.size,
      invalidBefore: null,
      invalidHereafter: tx.invalid_hereafter,
      validContract: tx.valid_contract,
      assetMintOrBurnCount: tx.asset_mint_or_burn_count,
      withdrawalCount: tx.withdrawal_count,
      delegationCount: tx.delegation_count,
      stakeCertCount: tx.stake_cert_count,
      poolUpdateCount: tx.pool_update_count,
      redeemerCount: tx.redeemer_count,
    })
    expect(mapped!.inputs).toHaveLength(utxos.inputs.length)
    utxos.inputs.forEach((input: Json, i: number) => {
      const got = mapped!.inputs[i]
      expect(got).toMatchObject({
        address: input.address,
        txHash: input.tx_hash,
        outputIndex: input.output_index,
        dataHash: input.data_hash,
        inlineDatum: input.inline_datum,
        referenceScriptHash: input.reference_script_hash,
        collateral: input.collateral,
        reference: input.reference,
      })
      expectSplit(got, input.amount)
    })
    expect(mapped!.inputs[0].assets).toEqual([{ unit: 'b0d07d45fe9514f80213f4020e5a61241458be626841cde717cb38a76e7574636f696e', quantity: '12' }])
    expect(mapped!.outputs).toHaveLength(utxos.outputs.length)
    utxos.outputs.forEach((output: Json, i: number) => {
      const got = mapped!.outputs[i]
      expect(got).toMatchObject({
        address: output.address,
        outputIndex: output.output_index,
        dataHash: output.data_hash,
        inlineDatum: output.inline_datum,
        referenceScriptHash: output.reference_script_hash,
        collateral: output.collateral,
        consumedBy: output.consumed_by_tx,
      })
      expectSplit(got, output.amount)
    })
    expect(mapped!.outputs[0].consumedBy).toBe('66c29b56952f6085afac3b0632d781af78d020b080063bcfd6c54b8e2b8fed41')
    expect(mapped!.metadata).toEqual(metadata.map(m => ({ label: m.label, json: JSON.stringify(m.json_metadata) })))
    expect(paths().sort()).toEqual([`/txs/${hash}`, `/txs/${hash}/metadata`, `/txs/${hash}/utxos`])
  })

  it('an address', async () => {
    const body = object('/addresses/addr1x')
    const mapped = await adapter.address(body.address)
    expect(mapped).toEqual({
      address: body.address,
      stakeAddress: body.stake_address,
      era: body.type,
      script: body.script,
      lovelace: '42000000',
      assets: [{ unit: 'b0d07d45fe9514f80213f4020e5a61241458be626841cde717cb38a76e7574636f696e', quantity: '12' }],
    })
    expectSplit(mapped!, body.amount)
  })

  it('the utxos of an address', async () => {
    const body = list('/addresses/addr1x/utxos')
    const mapped = await adapter.addressUtxos('addr1x')
    expect(mapped).toHaveLength(body.length)
    body.forEach((utxo, i) => {
      expect(mapped[i]).toMatchObject({
        address: utxo.address,
        txHash: utxo.tx_hash,
        outputIndex: utxo.output_index,
        blockHash: utxo.block,
        dataHash: utxo.data_hash,
        inlineDatum: utxo.inline_datum,
        referenceScriptHash: utxo.reference_script_hash,
      })
      expectSplit(mapped[i], utxo.amount)
    })
    expect(mapped[2].assets).toHaveLength(1)
    expect(server.requests[0].query.get('count')).toBe('100')
  })

  it('the transactions of an address, newest first', async () => {
    const body = list('/addresses/addr1x/transactions')
    const mapped = await adapter.addressTransactions('addr1x', 10)
    expect(mapped).toEqual(body.map(tx => ({ txHash: tx.tx_hash, txIndex: tx.tx_index, blockHeight: tx.block_height, blockTime: tx.block_time })))
    expect(server.requests[0].query.get('order')).toBe('desc')
  })

  it('the mint and burn history of an asset, newest first', async () => {
    const body = list('/assets/abc/history')
    expect(await adapter.assetHistory('abc', 2)).toEqual(body.slice(0, 2).map(e => ({ txHash: e.tx_hash, action: e.action, amount: e.amount })))
    expect(server.requests[0].query.get('order')).toBe('desc')
    expect(server.requests[0].query.get('count')).toBe('2')
  })

  it('a pool with its metadata', async () => {
    const pool = object('/pools/pool1x')
    const metadata = object('/pools/pool1x/metadata')
    expect(await adapter.pool(pool.pool_id)).toEqual({
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
      retiring: true,
      ticker: metadata.ticker,
      name: metadata.name,
      homepage: metadata.homepage,
      description: metadata.description,
    })
    expect(metadata.ticker).toBe('NUTS')
    expect(paths().sort()).toEqual([`/pools/${pool.pool_id}`, `/pools/${pool.pool_id}/metadata`])
  })

  it('submit posts the CBOR and answers the hash', async () => {
    const cbor = Uint8Array.from([0x84, 0xa4, 0x00, 0x81])
    expect(await adapter.submit(cbor)).toBe(bodyFor('/tx/submit'))
    const [request] = server.requests
    expect(request).toMatchObject({ method: 'POST', path: '/tx/submit' })
    expect(request.headers['content-type']).toBe('application/cbor')
    expect([...request.body]).toEqual([...cbor])
  })

  it('escapes identifiers so they stay one path segment', async () => {
    const mapped = await adapter.address('addr1x/utxos')
    expect(paths()).toEqual(['/addresses/addr1x%2Futxos'])
    expect(mapped?.era).toBe('shelley')
  })
})
