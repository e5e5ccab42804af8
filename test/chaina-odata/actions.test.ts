import cds from '@sap/cds'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { expectedTicker, runningDevnet, growChain, firstOf } from '../support/chain-a.ts'
import type { ActivityEvent } from '../../devnet/chain-a/activity.ts'

const { POST, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }
defaults.validateStatus = () => true

const SERVICE = '/odata/v4/chaina-odata'
const call = (action: string, body: object) => POST(`${SERVICE}/${action}`, body)

/** Well-formed identifiers that nothing on the devnet uses. */
const unusedKeyHash = CSL.Ed25519KeyHash.from_hex('cd'.repeat(28))
const unused = {
  address: CSL.EnterpriseAddress.new(0, CSL.Credential.from_keyhash(unusedKeyHash)).to_address().to_bech32(),
  stakeAddress: CSL.RewardAddress.new(0, CSL.Credential.from_keyhash(unusedKeyHash)).to_address().to_bech32(),
  poolId: unusedKeyHash.to_bech32('pool'),
  drepId: CSL.DRep.new_key_hash(unusedKeyHash).to_bech32(false),
  unit: 'ab'.repeat(28) + '01',
}

let events: ActivityEvent[]
let devnet: ReturnType<typeof runningDevnet>

beforeAll(() => {
  devnet = runningDevnet()
  events = growChain(devnet, ['transfer', 'payTestWallet', 'mint', 'message'])
})

describe('the 15 actions of the chain-A read service', () => {
  test('GetTransactionByHash(hash) answers the transaction', async () => {
    const hash = firstOf(events, 'transfer')
    const { data } = await call('GetTransactionByHash', { hash })
    expect(data).toMatchObject({ hash, fee: String(devnet.ledger.txs.get(hash)!.fee) })
  })

  test('GetAddressByBech32(address) answers balance and UTxO count', async () => {
    const wallet = devnet.wallets()[1]
    const { data } = await call('GetAddressByBech32', { address: wallet.address })
    expect(data).toMatchObject({ address: wallet.address, utxoCount: devnet.ledger.unspentAt(wallet.address).length })
  })

  test('GetAddressByBech32 of a well-formed address never used answers a zero balance', async () => {
    const { data, status } = await call('GetAddressByBech32', { address: unused.address })
    expect(data).toMatchObject({ address: unused.address, totalLovelace: '0', utxoCount: 0, type: 'enterprise' })
    expect(status).toBe(200)
  })

  test('GetUTxOsByAddress(address) answers every unspent output', async () => {
    const wallet = devnet.wallets()[0]
    const { data } = await call('GetUTxOsByAddress', { address: wallet.address })
    const expected = devnet.ledger.unspentAt(wallet.address).map(output => `${output.txHash}#${output.index}`).sort()
    expect(data.value.map((utxo: any) => `${utxo.txHash}#${utxo.outputIndex}`).sort()).toEqual(expected)
  })

  test('GetAssetsByAddress(address) answers the native assets held', async () => {
    const mint = devnet.ledger.txs.get(firstOf(events, 'mint'))!
    const holder = mint.outputs.find(output => output.value.assets.size > 0)!.address
    const { data } = await call('GetAssetsByAddress', { address: holder })
    expect(data.value.length).toBeGreaterThan(0)
    expect(data.value[0]).toMatchObject({ address: holder, fingerprint: expect.stringMatching(/^asset1/) })
  })

  test('GetMetadataByTxHash(tx_hash) answers the CIP-20 message', async () => {
    const hash = firstOf(events, 'message')
    const { data } = await call('GetMetadataByTxHash', { tx_hash: hash })
    expect(data.value).toEqual([expect.objectContaining({ txHash: hash, label: '674' })])
    expect(JSON.parse(data.value[0].payload).msg).toEqual(expect.any(Array))
  })

  test('GetPoolById(poolId) accepts bech32 and hex', async () => {
    const pool = [...devnet.ledger.pools.values()][0]
    const byBech32 = await call('GetPoolById', { poolId: pool.id })
    const byHex = await call('GetPoolById', { poolId: pool.hex })
    expect(byBech32.data).toMatchObject({ poolId: pool.id, ticker: expectedTicker() })
    expect(byHex.data.poolId).toBe(pool.id)
  })

  test('GetAccountByStakeAddress(stakeAddress) answers the delegation', async () => {
    const wallet = devnet.wallets()[0]
    const { data } = await call('GetAccountByStakeAddress', { stakeAddress: wallet.stakeAddress })
    expect(data).toMatchObject({ stakeAddress: wallet.stakeAddress, active: true, poolId: expect.stringMatching(/^pool1/) })
  })

  test('GetDrepById(drepId) answers the DRep', async () => {
    const drep = [...devnet.ledger.dreps.values()][0]
    const { data } = await call('GetDrepById', { drepId: drep.id })
    expect(data).toMatchObject({ drepId: drep.id, hex: drep.hex, retired: false })
  })

  test('GetTransactionsByAddress(address) answers the history, newest first', async () => {
    const paid = firstOf(events, 'payTestWallet')
    const recipient = devnet.ledger.txs.get(paid)!.outputs.find(output => devnet.wallets().some(w => w.address === output.address))!.address
    const { data } = await call('GetTransactionsByAddress', { address: recipient })
    const heights = data.value.map((row: any) => row.blockHeight)
    expect(data.value.map((row: any) => row.txHash)).toContain(paid)
    expect(heights).toEqual([...heights].sort((a: number, b: number) => b - a))
  })

  test('GetAssetHistory(unit) answers the mint', async () => {
    const hash = firstOf(events, 'mint')
    const unit = [...devnet.ledger.txs.get(hash)!.mint.keys()][0]
    const { data } = await call('GetAssetHistory', { unit })
    expect(data.value).toEqual(expect.arrayContaining([expect.objectContaining({ unit, txHash: hash, action: 'minted' })]))
  })

  test('GetUTxOByRef(txHash, outputIndex) answers an unspent output', async () => {
    const wallet = devnet.wallets()[0]
    const utxo = devnet.ledger.unspentAt(wallet.address)[0]
    const { data } = await call('GetUTxOByRef', { txHash: utxo.txHash, outputIndex: utxo.index })
    expect(data).toMatchObject({ txHash: utxo.txHash, outputIndex: utxo.index, address: wallet.address, lovelace: String(utxo.value.coin) })
  })

  test('GetUTxOByRef of a spent output answers 404 UTXO_SPENT', async () => {
    const transfer = devnet.ledger.txs.get(firstOf(events, 'transfer'))!
    const [txHash, index] = transfer.inputs[0].split('#')
    const { data, status } = await call('GetUTxOByRef', { txHash, outputIndex: Number(index) })
    expect(data.error.code).toBe('UTXO_SPENT')
    expect(status).toBe(404)
  })

  test('GetInputsByTxHash, GetOutputsByTxHash and their asset actions answer the parts', async () => {
    const hash = firstOf(events, 'mint')
    const onChain = devnet.ledger.txs.get(hash)!
    const inputs = await call('GetInputsByTxHash', { hash })
    const outputs = await call('GetOutputsByTxHash', { hash })
    const outputAssets = await call('GetOutputAssetsByTxHash', { hash })
    const inputAssets = await call('GetInputAssetsByTxHash', { hash })
    expect(inputs.data.value).toHaveLength(onChain.inputs.length)
    expect(outputs.data.value.map((o: any) => o.outputIndex)).toEqual(onChain.outputs.map((_, i) => i))
    const assetCount = onChain.outputs.reduce((sum, output) => sum + output.value.assets.size, 0)
    expect(outputAssets.data.value).toHaveLength(assetCount)
    expect(inputAssets.data.value).toEqual(expect.any(Array))
  })

  test('an unknown transaction answers 404 TRANSACTION_NOT_FOUND from every transaction action', async () => {
    const hash = 'ab'.repeat(32)
    for (const [action, body] of [
      ['GetTransactionByHash', { hash }], ['GetInputsByTxHash', { hash }], ['GetOutputsByTxHash', { hash }],
      ['GetInputAssetsByTxHash', { hash }], ['GetOutputAssetsByTxHash', { hash }], ['GetMetadataByTxHash', { tx_hash: hash }],
      ['GetUTxOByRef', { txHash: hash, outputIndex: 0 }],
    ] as const) {
      const { data, status } = await call(action, body)
      expect([action, data.error.code, status]).toEqual([action, 'TRANSACTION_NOT_FOUND', 404])
    }
  })

  test('unknown pool, account, DRep and asset answer 404 with a code naming them', async () => {
    const cases = [
      ['GetPoolById', { poolId: unused.poolId }, 'POOL_NOT_FOUND'],
      ['GetAccountByStakeAddress', { stakeAddress: unused.stakeAddress }, 'ACCOUNT_NOT_FOUND'],
      ['GetDrepById', { drepId: unused.drepId }, 'DREP_NOT_FOUND'],
      ['GetAssetHistory', { unit: unused.unit }, 'ASSET_NOT_FOUND'],
    ] as const
    for (const [action, body, code] of cases) {
      const { data, status } = await call(action, body)
      expect([action, data.error?.code, status]).toEqual([action, code, 404])
    }
  })
})
