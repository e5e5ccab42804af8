import Ajv from 'ajv'
import { getSchemaForEndpoint } from '@blockfrost/openapi'
import { BlockFrostAPI, BlockfrostServerError } from '@blockfrost/blockfrost-js'
import type { ChainADevnet } from '../../devnet/chain-a/index.ts'
import { ADA, buildTx, getJson, largestUtxo, startDevnet } from '../support/devnet.ts'

/**
 * Every endpoint answers bodies that validate against Blockfrost's published OpenAPI schema, and
 * the official blockfrost-js client works against the devnet unchanged.
 */

let devnet: ChainADevnet
const ajv = new Ajv({ strict: false })
  .addFormat('hex', /^([0-9a-f]{2})*$/)
  .addFormat('int64', { type: 'number', validate: Number.isSafeInteger })
  .addFormat('Lovelace or concatenation of asset policy_id and hex-encoded asset_name', /^(lovelace|[0-9a-f]{56}([0-9a-f]{2}){0,32})$/)
  .addFormat('Concatenation of the policy_id and hex-encoded asset_name', /^[0-9a-f]{56}([0-9a-f]{2}){0,32}$/)
const MANY_OUTPUTS = 120

beforeAll(async () => {
  devnet = await startDevnet({ seed: 'schema-test', activity: true, epochLength: 15 })
  for (let i = 0; i < 40; i++) {
    devnet.activity.round()
    devnet.produceBlock()
  }
  const w3 = devnet.walletKeys('wallet-3')
  const outputs = Array.from({ length: MANY_OUTPUTS }, () => ({ address: w3.address, coin: 2n * ADA }))
  devnet.submit(buildTx({ inputs: [largestUtxo(devnet, w3.address)], outputs, signers: [w3.payment] }))
  devnet.produceBlock()
})
afterAll(() => devnet.stop())

function samples() {
  const ledger = devnet.ledger
  const wallet = devnet.wallets()[0]
  const blockWithTxs = [...ledger.blocks].reverse().find(b => b.txs.length > 0 && b.height > 0)!
  const minted = [...ledger.assets.values()].find(a => a.onchainMetadata && a.quantity > 0n)!
  const mintTx = minted.initialMintTx
  const rewarded = [...ledger.accounts.values()].find(a => a.rewardHistory.length > 0)!
  const pool = [...ledger.pools.values()][0]
  const drep = [...ledger.dreps.values()][0]
  return {
    '/': '/', '/health': '/health', '/health/clock': '/health/clock', '/genesis': '/genesis', '/network': '/network',
    '/blocks/latest': '/blocks/latest',
    '/blocks/latest/txs': null,
    '/blocks/{hash_or_number}': `/blocks/${blockWithTxs.hash}`,
    '/blocks/{hash_or_number}/txs': `/blocks/${blockWithTxs.height}/txs`,
    '/blocks/{hash_or_number}/next': '/blocks/1/next?count=5',
    '/blocks/{hash_or_number}/previous': `/blocks/${blockWithTxs.hash}/previous?count=5`,
    '/epochs/latest': '/epochs/latest',
    '/epochs/{number}': '/epochs/1',
    '/epochs/latest/parameters': '/epochs/latest/parameters',
    '/epochs/{number}/parameters': '/epochs/0/parameters',
    '/epochs/{number}/blocks': '/epochs/1/blocks',
    '/txs/{hash}': `/txs/${mintTx}`,
    '/txs/{hash}/utxos': `/txs/${mintTx}/utxos`,
    '/txs/{hash}/metadata': `/txs/${mintTx}/metadata`,
    '/txs/{hash}/metadata/cbor': `/txs/${mintTx}/metadata/cbor`,
    '/txs/{hash}/cbor': `/txs/${mintTx}/cbor`,
    '/addresses/{address}': `/addresses/${wallet.address}`,
    '/addresses/{address}/extended': `/addresses/${ledger.outputs.get(`${mintTx}#0`)!.address}/extended`,
    '/addresses/{address}/total': `/addresses/${wallet.address}/total`,
    '/addresses/{address}/utxos': `/addresses/${wallet.address}/utxos`,
    '/addresses/{address}/utxos/{asset}': `/addresses/${ledger.unspentWithAsset(minted.unit)[0].address}/utxos/${minted.unit}`,
    '/addresses/{address}/transactions': `/addresses/${wallet.address}/transactions`,
    '/assets': '/assets',
    '/assets/{asset}': `/assets/${minted.unit}`,
    '/assets/{asset}/history': `/assets/${minted.unit}/history`,
    '/assets/{asset}/txs': `/assets/${minted.unit}/txs`,
    '/assets/{asset}/addresses': `/assets/${minted.unit}/addresses`,
    '/assets/policy/{policy_id}': `/assets/policy/${minted.policyId}`,
    '/accounts/{stake_address}': `/accounts/${rewarded.stakeAddress}`,
    '/accounts/{stake_address}/addresses': `/accounts/${wallet.stakeAddress}/addresses`,
    '/accounts/{stake_address}/rewards': `/accounts/${rewarded.stakeAddress}/rewards`,
    '/accounts/{stake_address}/delegations': `/accounts/${wallet.stakeAddress}/delegations`,
    '/pools': '/pools',
    '/pools/extended': '/pools/extended',
    '/pools/{pool_id}': `/pools/${pool.id}`,
    '/pools/{pool_id}/metadata': `/pools/${pool.hex}/metadata`,
    '/pools/{pool_id}/delegators': `/pools/${pool.id}/delegators`,
    '/pools/{pool_id}/blocks': `/pools/${pool.id}/blocks`,
    '/governance/dreps': '/governance/dreps',
    '/governance/dreps/{drep_id}': `/governance/dreps/${drep.id}`,
    '/governance/dreps/{drep_id}/delegators': `/governance/dreps/${drep.hex}/delegators`,
    '/metadata/txs/labels': '/metadata/txs/labels',
    '/metadata/txs/labels/{label}': '/metadata/txs/labels/721',
  } as Record<string, string | null>
}

const ENDPOINTS = Object.keys({
  '/': 0, '/health': 0, '/health/clock': 0, '/genesis': 0, '/network': 0, '/blocks/latest': 0, '/blocks/latest/txs': 0,
  '/blocks/{hash_or_number}': 0, '/blocks/{hash_or_number}/txs': 0, '/blocks/{hash_or_number}/next': 0, '/blocks/{hash_or_number}/previous': 0,
  '/epochs/latest': 0, '/epochs/{number}': 0, '/epochs/latest/parameters': 0, '/epochs/{number}/parameters': 0, '/epochs/{number}/blocks': 0,
  '/txs/{hash}': 0, '/txs/{hash}/utxos': 0, '/txs/{hash}/metadata': 0, '/txs/{hash}/metadata/cbor': 0, '/txs/{hash}/cbor': 0,
  '/addresses/{address}': 0, '/addresses/{address}/extended': 0, '/addresses/{address}/total': 0, '/addresses/{address}/utxos': 0,
  '/addresses/{address}/utxos/{asset}': 0, '/addresses/{address}/transactions': 0,
  '/assets': 0, '/assets/{asset}': 0, '/assets/{asset}/history': 0, '/assets/{asset}/txs': 0, '/assets/{asset}/addresses': 0, '/assets/policy/{policy_id}': 0,
  '/accounts/{stake_address}': 0, '/accounts/{stake_address}/addresses': 0, '/accounts/{stake_address}/rewards': 0, '/accounts/{stake_address}/delegations': 0,
  '/pools': 0, '/pools/extended': 0, '/pools/{pool_id}': 0, '/pools/{pool_id}/metadata': 0, '/pools/{pool_id}/delegators': 0, '/pools/{pool_id}/blocks': 0,
  '/governance/dreps': 0, '/governance/dreps/{drep_id}': 0, '/governance/dreps/{drep_id}/delegators': 0,
  '/metadata/txs/labels': 0, '/metadata/txs/labels/{label}': 0,
})

describe('OpenAPI conformance', () => {
  it.each(ENDPOINTS)('%s', async endpoint => {
    // The latest block may be empty; ask for the transactions of the latest block that has some.
    if (endpoint === '/blocks/latest/txs') {
      devnet.activity.round()
      devnet.produceBlock()
    }
    const path = samples()[endpoint] ?? endpoint
    const { status, body } = await getJson(devnet, path)
    expect(status).toBe(200)
    const validate = ajv.compile(getSchemaForEndpoint(endpoint).response['200'])
    expect(validate(body) ? [] : validate.errors).toEqual([])
    if (Array.isArray(body)) expect(body.length).toBeGreaterThan(0)
  })

  it('POST /tx/submit answers the hash as a JSON string', async () => {
    const w1 = devnet.walletKeys('wallet-1')
    const { status, body } = await fetch(devnet.url + '/tx/submit', {
      method: 'POST', headers: { 'Content-Type': 'application/cbor' },
      body: Buffer.from(buildTx({ inputs: [largestUtxo(devnet, w1.address)], signers: [w1.payment] })),
    }).then(async r => ({ status: r.status, body: await r.json() }))
    expect(status).toBe(200)
    const validate = ajv.compile(getSchemaForEndpoint('/tx/submit').response['200'])
    expect(validate(body)).toBe(true)
  })
})

describe('through blockfrost-js', () => {
  const client = () => new BlockFrostAPI({ customBackend: devnet.url, rateLimiter: false, retrySettings: { limit: 0, methods: [], statusCodes: [], errorCodes: [], calculateDelay: () => 0 } })

  it('reads the tip, parameters and a transaction', async () => {
    const api = client()
    expect((await api.blocksLatest()).hash).toBe(devnet.ledger.tip.hash)
    expect((await api.epochsLatestParameters()).min_fee_a).toBe(44)
    const hash = [...devnet.ledger.txs.keys()].pop()!
    expect((await api.txs(hash)).hash).toBe(hash)
  })

  it('pages through more than 100 UTxOs with addressesUtxosAll', async () => {
    const { address } = devnet.walletKeys('wallet-3')
    const all = await client().addressesUtxosAll(address)
    expect(all.length).toBe(devnet.ledger.unspentAt(address).length)
    expect(all.length).toBeGreaterThan(MANY_OUTPUTS)
    expect(new Set(all.map(u => `${u.tx_hash}#${u.output_index}`)).size).toBe(all.length)
  })

  it('submits a transaction and surfaces ledger errors as BlockfrostServerError', async () => {
    const w2 = devnet.walletKeys('wallet-2')
    const cbor = buildTx({ inputs: [largestUtxo(devnet, w2.address)], signers: [w2.payment] })
    const hash = await client().txSubmit(cbor)
    expect(devnet.ledger.mempoolTransactions().map(tx => tx.hash)).toContain(hash)
    const error = await client().txSubmit(cbor).catch(e => e)
    expect(error).toBeInstanceOf(BlockfrostServerError)
    expect(error).toMatchObject({ status_code: 400, message: `DuplicateTransaction: transaction ${hash} is already in the mempool` })
    const missing = await client().txs('00'.repeat(32)).catch(e => e)
    expect(missing).toMatchObject({ status_code: 404, error: 'Not Found' })
  })
})
