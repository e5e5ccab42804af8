import cds from '@sap/cds'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { runningDevnet } from '../support/chain-a.ts'

const { GET, POST, PUT, PATCH, DELETE, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }
defaults.validateStatus = () => true

const SERVICE = '/odata/v4/chaina-odata'
const keyHash = CSL.Ed25519KeyHash.from_hex('ef'.repeat(28))
const mainnetAddress = CSL.EnterpriseAddress.new(1, CSL.Credential.from_keyhash(keyHash)).to_address().to_bech32()
const mainnetStake = CSL.RewardAddress.new(1, CSL.Credential.from_keyhash(keyHash)).to_address().to_bech32()

/** Each case: request, expected status and code. Every one must be a 4xx, never a 5xx. */
const reads: [string, number, string][] = [
  [`/Transactions('zz')`, 400, 'INVALID_TX_HASH'],
  [`/Transactions('${'g'.repeat(64)}')`, 400, 'INVALID_TX_HASH'],
  [`/Transactions('${'ab'.repeat(32)}')`, 404, 'TRANSACTION_NOT_FOUND'],
  [`/Blocks('${'cd'.repeat(32)}')`, 404, 'BLOCK_NOT_FOUND'],
  [`/Blocks('short')`, 400, 'INVALID_BLOCK_HASH'],
  [`/Addresses('not-an-address')`, 400, 'INVALID_ADDRESS'],
  [`/Addresses('${mainnetAddress}')`, 400, 'WRONG_NETWORK'],
  [`/Accounts('${mainnetStake}')`, 400, 'WRONG_NETWORK'],
  [`/Accounts('addr_test1xyz')`, 400, 'INVALID_STAKE_ADDRESS'],
  [`/Pools('pool1nope')`, 400, 'INVALID_POOL_ID'],
  [`/Dreps('nope')`, 400, 'INVALID_DREP_ID'],
  [`/Epochs(99999)`, 404, 'EPOCH_NOT_FOUND'],
  [`/AssetHistory?$filter=unit eq 'xyz'`, 400, 'INVALID_ASSET_UNIT'],
  [`/AddressUTxOs?$filter=address eq 'bad'`, 400, 'INVALID_ADDRESS'],
  [`/Transactions?$filter=blockHash eq 'zz'`, 400, 'INVALID_BLOCK_HASH'],
  [`/Transactions?$filter=blockHeight eq -1`, 400, 'INVALID_BLOCK_HEIGHT'],
  [`/Blocks?$filter=height eq -3`, 400, 'INVALID_BLOCK_HEIGHT'],
  [`/Accounts?$filter=poolId eq 'pool1nope'`, 400, 'INVALID_POOL_ID'],
  [`/Addresses?$filter=stakeAddress eq 'nope'`, 400, 'INVALID_STAKE_ADDRESS'],
  [`/Blocks('${'cd'.repeat(32)}')/transactions`, 404, 'BLOCK_NOT_FOUND'],
  [`/TransactionOutputs(txHash='${'ab'.repeat(32)}')`, 400, 'INVALID_KEY'],
  [`/Transactions(hash='${'ab'.repeat(32)}',extra=1)`, 400, 'INVALID_KEY'],
  [`/Blocks?$filter=height eq`, 400, 'INVALID_FILTER'],
  [`/Blocks?$filter=height eq 'a'`, 400, 'INVALID_VALUE'],
  [`/Blocks?$filter=nope eq 1`, 400, 'UNKNOWN_PROPERTY'],
  [`/Blocks?$orderby=nope`, 400, 'UNKNOWN_PROPERTY'],
  [`/Blocks?$select=nope`, 400, 'UNKNOWN_PROPERTY'],
  [`/Blocks?$expand=nope`, 400, 'UNKNOWN_NAVIGATION_PROPERTY'],
  [`/Blocks?$top=5000`, 400, 'TOP_LIMIT_EXCEEDED'],
  [`/Blocks?$top=-1`, 400, 'INVALID_TOP'],
  [`/Blocks?$top=abc`, 400, 'INVALID_TOP'],
  [`/Blocks?$skip=-5`, 400, 'INVALID_SKIP'],
  [`/Blocks?$count=maybe`, 400, 'INVALID_COUNT'],
  [`/Blocks?$foo=1`, 400, 'UNKNOWN_QUERY_OPTION'],
  [`/NoSuchSet`, 404, 'UNKNOWN_RESOURCE'],
]

beforeAll(() => runningDevnet())

describe('bad reads answer 4xx with a stable code', () => {
  test.each(reads)('GET %s → %i %s', async (path, status, code) => {
    const response = await GET(SERVICE + encodeURI(path).replace(/#/g, '%23'))
    expect(response.data.error).toMatchObject({ code, message: expect.any(String) })
    expect(response.status).toBe(status)
  })
})

describe('writes to the read-only service answer 405', () => {
  const hash = 'ab'.repeat(32)
  test.each([
    ['POST', () => POST(`${SERVICE}/Transactions`, { hash })],
    ['PUT', () => PUT(`${SERVICE}/Transactions('${hash}')`, { fee: '1' })],
    ['PATCH', () => PATCH(`${SERVICE}/Blocks('${hash}')`, { height: 1 })],
    ['DELETE', () => DELETE(`${SERVICE}/Pools('pool1abc')`)],
  ])('%s', async (_method, send) => {
    const response = await send()
    expect(response.data.error.code).toBe('ENTITY_IS_READ_ONLY')
    expect(response.status).toBe(405)
  })
})

describe('bad action input answers 400 with a code naming the parameter', () => {
  test.each([
    ['GetTransactionByHash', {}, 'INVALID_TX_HASH', 'hash'],
    ['GetTransactionByHash', { hash: 42 }, 'ASSERT_DATA_TYPE', 'hash'],
    ['GetAddressByBech32', { address: 'addr_test1qqqq' }, 'INVALID_ADDRESS', 'address'],
    ['GetUTxOsByAddress', { address: mainnetAddress }, 'WRONG_NETWORK', 'address'],
    ['GetMetadataByTxHash', { tx_hash: 'xyz' }, 'INVALID_TX_HASH', 'tx_hash'],
    ['GetUTxOByRef', { txHash: 'ab'.repeat(32), outputIndex: -1 }, 'INVALID_OUTPUT_INDEX', 'outputIndex'],
    ['GetUTxOByRef', { txHash: 'ab'.repeat(32), outputIndex: 'x' }, 'ASSERT_DATA_TYPE', 'outputIndex'],
    ['GetPoolById', { poolId: 'pool' }, 'INVALID_POOL_ID', 'poolId'],
    ['GetAccountByStakeAddress', { stakeAddress: mainnetStake }, 'WRONG_NETWORK', 'stakeAddress'],
    ['GetDrepById', { drepId: 'drep1zzz' }, 'INVALID_DREP_ID', 'drepId'],
    ['GetAssetHistory', { unit: 'lovelace' }, 'INVALID_ASSET_UNIT', 'unit'],
  ])('%s %j', async (action, body, code, target) => {
    const response = await POST(`${SERVICE}/${action}`, body)
    expect(response.data.error).toMatchObject({ code })
    expect(response.data.error.target).toContain(target)
    expect(response.status).toBe(400)
  })

  test('malformed JSON answers 400 MALFORMED_JSON', async () => {
    const response = await POST(`${SERVICE}/GetTransactionByHash`, '{bad', { headers: { 'content-type': 'application/json' } })
    expect(response.data.error.code).toBe('MALFORMED_JSON')
    expect(response.status).toBe(400)
  })

  test('an unknown parameter answers 400', async () => {
    const response = await POST(`${SERVICE}/GetTransactionByHash`, { hash: 'ab'.repeat(32), nope: 1 })
    expect(response.data.error.code).toMatch(/^[A-Z_]+$/)
    expect(response.status).toBe(400)
  })
})
