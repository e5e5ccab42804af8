import { BlockfrostAdapter } from '../../srv/chains/chain-a/blockfrost.ts'
import { answerFromSchemas, bodyFor } from './support/openapi-server.ts'
import { sendJson, sendUpstreamError, startTestServer, upstreamConfig, type TestServer } from './support/test-server.ts'

/* Payload shapes the schema examples do not show: absent optional parts, other eras, empty answers. */

type Json = Record<string, any>

const TX = '1e043f100dce12d107f679685acd2fc0610e10f72a92d412794c9773d11d8477'
const POOL = 'pool1pu5jlj4q9w9jlxeu370a3c9myx47md5j5m2str0naunn2q3lkdy'

/** Answers per path: a body (200) or a bare status (a Blockfrost error); anything else from the schemas. */
let overrides: Record<string, unknown> = {}
let server: TestServer
let adapter: BlockfrostAdapter

beforeAll(async () => {
  server = await startTestServer((request, response) => {
    if (!(request.path in overrides)) return answerFromSchemas(request, response)
    const answer = overrides[request.path]
    if (typeof answer === 'number') return sendUpstreamError(response, answer, 'The requested component has not been found.')
    sendJson(response, 200, answer)
  })
  adapter = new BlockfrostAdapter(upstreamConfig({ url: server.url }))
})
afterAll(() => server.close())
beforeEach(() => {
  overrides = {}
})

const object = (path: string) => bodyFor(path) as Json

describe('pools', () => {
  it('without registered metadata ({}) have null ticker, name, homepage and description', async () => {
    overrides[`/pools/${POOL}/metadata`] = {}
    expect(await adapter.pool(POOL)).toMatchObject({ poolId: POOL, ticker: null, name: null, homepage: null, description: null })
  })

  it('whose metadata answers 404 still answer, with null metadata', async () => {
    overrides[`/pools/${POOL}/metadata`] = 404
    expect(await adapter.pool(POOL)).toMatchObject({ poolId: POOL, liveStake: '6900000000', ticker: null, name: null })
  })

  it('that are not retiring say so', async () => {
    overrides[`/pools/${POOL}`] = { ...object(`/pools/${POOL}`), retirement: [] }
    expect((await adapter.pool(POOL))!.retiring).toBe(false)
  })

  it('that do not exist are null', async () => {
    overrides[`/pools/${POOL}`] = 404
    overrides[`/pools/${POOL}/metadata`] = 404
    expect(await adapter.pool(POOL)).toBeNull()
  })
})

describe('protocol parameters', () => {
  it('use cost_models when cost_models_raw is absent', async () => {
    const { cost_models_raw: _raw, ...params } = object('/epochs/latest/parameters')
    overrides['/epochs/latest/parameters'] = params
    expect(JSON.parse((await adapter.protocolParameters())!.costModels!)).toEqual(params.cost_models)
  })

  it('have null cost models and Plutus prices before Alonzo', async () => {
    const params = object('/epochs/200/parameters')
    overrides['/epochs/200/parameters'] = { ...params, cost_models: null, cost_models_raw: null, price_mem: null, price_step: null, coins_per_utxo_size: null }
    expect(await adapter.protocolParameters(200)).toMatchObject({ costModels: null, priceMem: null, priceStep: null, coinsPerUtxoSize: '0' })
  })
})

describe('transactions', () => {
  it('carry collateral and reference inputs and unspent outputs', async () => {
    const utxos = object(`/txs/${TX}/utxos`)
    const [input] = utxos.inputs
    const [output] = utxos.outputs
    overrides[`/txs/${TX}/utxos`] = {
      ...utxos,
      inputs: [input, { ...input, output_index: 1, collateral: true, reference: false }, { ...input, output_index: 2, collateral: false, reference: true }],
      outputs: [{ ...output, consumed_by_tx: undefined }],
    }
    const tx = await adapter.transaction(TX)
    expect(tx!.inputs.map(i => [i.outputIndex, i.collateral, i.reference])).toEqual([
      [input.output_index, false, false],
      [1, true, false],
      [2, false, true],
    ])
    expect(tx!.outputs[0].consumedBy).toBeNull()
  })

  it('without metadata have an empty metadata list', async () => {
    overrides[`/txs/${TX}/metadata`] = []
    expect((await adapter.transaction(TX))!.metadata).toEqual([])
  })

  it('keep metadata text and nested JSON as JSON text', async () => {
    overrides[`/txs/${TX}/metadata`] = [
      { label: '674', json_metadata: { msg: ['hello', 'world'] } },
      { label: '18446744073709551615', json_metadata: 'plain text' },
    ]
    expect((await adapter.transaction(TX))!.metadata).toEqual([
      { label: '674', json: '{"msg":["hello","world"]}' },
      { label: '18446744073709551615', json: '"plain text"' },
    ])
  })
})

describe('addresses and blocks', () => {
  it('an address holding only lovelace has no assets', async () => {
    overrides['/addresses/addr_test1x'] = { ...object('/addresses/addr_test1x'), amount: [{ unit: 'lovelace', quantity: '18446744073709551616' }] }
    expect(await adapter.address('addr_test1x')).toMatchObject({ lovelace: '18446744073709551616', assets: [] })
  })

  it('a Byron address reports its era', async () => {
    overrides['/addresses/Ae2x'] = { ...object('/addresses/Ae2x'), type: 'byron', stake_address: null }
    expect(await adapter.address('Ae2x')).toMatchObject({ era: 'byron', stakeAddress: null })
  })

  it('a Byron epoch-boundary block without height, slot and epoch counts them as 0', async () => {
    overrides['/blocks/ebb'] = { ...object('/blocks/ebb'), height: null, slot: null, epoch: null, epoch_slot: null, previous_block: null }
    expect(await adapter.block('ebb')).toMatchObject({ height: 0, slot: 0, epoch: 0, epochSlot: 0, previousBlock: null })
  })
})
