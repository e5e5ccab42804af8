import Ajv from 'ajv'
import { getSchemaForEndpoint } from '@blockfrost/openapi'
import type { ChainADevnet } from '../../devnet/chain-a/index.ts'
import { getJson, startDevnet } from '../support/devnet.ts'

/*
 * The devnet's epoch lists (`/epochs/{number}/next` and `/previous`) answer Blockfrost's paths,
 * paging and JSON shapes, validated against @blockfrost/openapi.
 */

let devnet: ChainADevnet
const ajv = new Ajv({ strict: false })

beforeAll(async () => {
  // Five slots an epoch and a block a slot: twelve blocks reach epoch 2.
  devnet = await startDevnet({ seed: 'epoch-lists', epochLength: 5 })
  for (let i = 0; i < 12; i++) devnet.produceBlock()
  expect(devnet.ledger.currentEpoch).toBeGreaterThanOrEqual(2)
})
afterAll(() => devnet.stop())

const epochsIn = (body: any[]) => body.map(epoch => epoch.epoch)

test.each([
  ['/epochs/{number}/next', '/epochs/0/next', () => Array.from({ length: devnet.ledger.currentEpoch }, (_, i) => i + 1)],
  ['/epochs/{number}/next', '/epochs/0/next?count=1&page=2', () => [2]],
  ['/epochs/{number}/previous', '/epochs/2/previous', () => [0, 1]],
  ['/epochs/{number}/previous', '/epochs/2/previous?count=1&page=2', () => [0]],
])('%s: GET %s', async (endpoint, path, expected) => {
  const { status, body } = await getJson(devnet, path)
  expect(status).toBe(200)
  const validate = ajv.compile(getSchemaForEndpoint(endpoint).response['200'])
  expect(validate(body) ? [] : validate.errors).toEqual([])
  expect(epochsIn(body)).toEqual(expected())
  expect(body[0]).toEqual((await getJson(devnet, `/epochs/${body[0].epoch}`)).body)
})

test.each([
  ['past the current epoch', () => `/epochs/${devnet.ledger.currentEpoch}/next`, 200, []],
  ['before epoch 0', () => '/epochs/0/previous', 200, []],
  ['of an epoch not yet begun', () => '/epochs/999/next', 404, undefined],
  ['with a bad count', () => '/epochs/0/next?count=101', 400, undefined],
])('the epochs %s', async (_, path, status, expected) => {
  const response = await getJson(devnet, path())
  expect(response.status).toBe(status)
  if (expected) expect(response.body).toEqual(expected)
})
