import cds from '@sap/cds'
import { expectedTicker, runningDevnet, growChain, firstOf } from '../support/chain-a.ts'
import type { ActivityEvent } from '../../devnet/chain-a/activity.ts'

const { GET, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }

const SERVICE = '/odata/v4/chaina-odata'
const get = async (path: string) => (await GET(SERVICE + path)).data

let events: ActivityEvent[]
let devnet: ReturnType<typeof runningDevnet>

beforeAll(() => {
  devnet = runningDevnet()
  events = growChain(devnet, ['transfer', 'payTestWallet', 'mint', 'burn', 'message', 'metadata'])
})

/** The generator wallet that minted first (its name is not one of the test wallets'). */
function minterAddress(): string {
  const minter = events.find(event => event.kind === 'mint')!.wallet
  return devnet.ledger.genesis.activityWallets.find(wallet => wallet.name === minter)!.address
}

describe('every entity set of the chain-A read service reflects the devnet', () => {
  test('NetworkInformation carries supply and genesis parameters', async () => {
    const { value } = await get('/NetworkInformation?$select=network,securityParam,maxSupply,epochLength')
    expect(value).toEqual([{ network: 'devnet', securityParam: 10, maxSupply: '45000000000000000', epochLength: expect.any(Number) }])
  })

  test('Blocks ordered by height descending, top 1, is the tip', async () => {
    const { value } = await get('/Blocks?$orderby=height desc&$top=1')
    expect(value[0].hash).toBe(devnet.ledger.tip.hash)
    expect(value[0]).toMatchObject({ height: devnet.ledger.tip.height, slot: devnet.ledger.tip.slot, epoch: devnet.ledger.tip.epoch })
    expect(new Date(value[0].time).getTime()).toBe(devnet.ledger.tip.time * 1000)
  })

  test('Blocks filtered by epoch with $select answer only those fields of that epoch', async () => {
    const transfer = firstOf(events, 'transfer')
    await get(`/Transactions('${transfer}')`)
    const { value } = await get('/Blocks?$filter=epoch eq 0&$select=hash,height,time&$orderby=height')
    expect(value.length).toBeGreaterThan(0)
    for (const block of value) expect(Object.keys(block).sort()).toEqual(['hash', 'height', 'time'])
    for (const block of value) expect(devnet.ledger.blocks.find(b => b.hash === block.hash)?.epoch).toBe(0)
  })

  test('Epochs by key with their protocol parameters expanded', async () => {
    const body = await get('/Epochs(0)?$expand=parameters($select=minFeeA,minFeeB,coinsPerUtxoSize)')
    expect(body).toMatchObject({ epoch: 0, parameters: { minFeeA: 44, minFeeB: 155381, coinsPerUtxoSize: '4310' } })
    expect(body.blockCount).toBeGreaterThan(0)
  })

  test('Transactions by hash with inputs, outputs and metadata expanded', async () => {
    const hash = firstOf(events, 'message')
    const onChain = devnet.ledger.txs.get(hash)!
    const body = await get(`/Transactions('${hash}')?$expand=inputs,outputs,metadata,block($select=height)`)
    expect(body).toMatchObject({ hash, fee: String(onChain.fee), blockHeight: onChain.included.blockHeight, hasMetadata: true })
    expect(body.inputs).toHaveLength(onChain.inputs.length)
    expect(body.outputs).toHaveLength(onChain.outputs.length)
    expect(body.block.height).toBe(onChain.included.blockHeight)
    expect(body.metadata).toEqual([expect.objectContaining({ label: '674', payload: expect.stringContaining('msg') })])
  })

  test('TransactionInputs filtered by transaction with $count', async () => {
    const hash = firstOf(events, 'transfer')
    const body = await get(`/TransactionInputs?$filter=txHash eq '${hash}'&$count=true&$orderby=inputIndex`)
    expect(body['@odata.count']).toBe(devnet.ledger.txs.get(hash)!.inputs.length)
    expect(body.value[0]).toMatchObject({ txHash: hash, inputIndex: 0, spentTxHash: expect.stringMatching(/^[0-9a-f]{64}$/) })
  })

  test('TransactionOutputs by composite key with assets expanded', async () => {
    const hash = firstOf(events, 'mint')
    const outputs = devnet.ledger.txs.get(hash)!.outputs
    const index = outputs.findIndex(output => output.value.assets.size > 0)
    const body = await get(`/TransactionOutputs(txHash='${hash}',outputIndex=${index})?$expand=assets`)
    expect(body.address).toBe(outputs[index].address)
    expect(body.assets.length).toBe(outputs[index].value.assets.size)
    expect(body.assets[0]).toMatchObject({ policyId: devnet.activity.policyId, fingerprint: expect.stringMatching(/^asset1/) })
  })

  test('TransactionInputAssets of a burn show the burnt token coming in', async () => {
    const hash = firstOf(events, 'burn')
    await get(`/Transactions('${hash}')`)
    const { value } = await get(`/TransactionInputAssets?$filter=txHash eq '${hash}' and policyId eq '${devnet.activity.policyId}'`)
    expect(value.length).toBeGreaterThan(0)
    expect(BigInt(value[0].quantity)).toBeGreaterThan(0n)
  })

  test('TransactionOutputAssets of a mint carry the minted quantity', async () => {
    const hash = firstOf(events, 'mint')
    const { value } = await get(`/TransactionOutputAssets?$filter=txHash eq '${hash}'&$select=unit,quantity,assetName`)
    expect(value.length).toBeGreaterThan(0)
    expect(value[0].unit.startsWith(devnet.activity.policyId)).toBe(true)
  })

  test('TransactionMetadata filtered by label', async () => {
    const hash = firstOf(events, 'metadata')
    await get(`/Transactions('${hash}')`)
    const { value } = await get(`/TransactionMetadata?$filter=txHash eq '${hash}' and label ne '674'`)
    expect(value.length).toBeGreaterThan(0)
    expect(() => JSON.parse(value[0].payload)).not.toThrow()
  })

  test('Addresses by bech32 with UTxOs and assets expanded, balance as on chain', async () => {
    const wallet = devnet.wallets()[0]
    const body = await get(`/Addresses('${wallet.address}')?$expand=utxos($expand=assets),assets`)
    const unspent = devnet.ledger.unspentAt(wallet.address)
    const total = unspent.reduce((sum, output) => sum + output.value.coin, 0n)
    expect(body).toMatchObject({ address: wallet.address, stakeAddress: wallet.stakeAddress, type: 'base', isScript: false, totalLovelace: String(total), utxoCount: unspent.length })
    expect(body.utxos).toHaveLength(unspent.length)
  })

  test('AddressAssets of the generator wallet that minted, ordered by quantity', async () => {
    const address = minterAddress()
    const { value } = await get(`/AddressAssets?$filter=address eq '${address}'&$orderby=quantity desc`)
    expect(value.length).toBeGreaterThan(0)
    expect(value.every((asset: any) => asset.address === address && asset.policyId === devnet.activity.policyId)).toBe(true)
  })

  test('AddressUTxOs paged with $top, $skip and $count', async () => {
    const wallet = devnet.wallets()[0]
    const count = devnet.ledger.unspentAt(wallet.address).length
    const body = await get(`/AddressUTxOs?$filter=address eq '${wallet.address}'&$top=1&$skip=1&$count=true&$orderby=txHash,outputIndex`)
    expect(body['@odata.count']).toBe(count)
    expect(body.value).toHaveLength(count > 1 ? 1 : 0)
  })

  test('UTxOAssets of an address holding tokens', async () => {
    const address = minterAddress()
    const { value } = await get(`/UTxOAssets?$filter=address eq '${address}'&$select=txHash,outputIndex,unit,quantity`)
    expect(value.length).toBeGreaterThan(0)
  })

  test('AddressTransactions of a test wallet that was paid', async () => {
    const paid = firstOf(events, 'payTestWallet')
    const recipient = devnet.ledger.txs.get(paid)!.outputs.find(output => devnet.wallets().some(w => w.address === output.address))!.address
    await get(`/Transactions('${paid}')`)
    const { value } = await get(`/AddressTransactions?$filter=address eq '${recipient}'&$orderby=blockHeight desc&$expand=transaction($select=fee)`)
    expect(value.map((row: any) => row.txHash)).toContain(paid)
    expect(value.find((row: any) => row.txHash === paid).transaction.fee).toBe(String(devnet.ledger.txs.get(paid)!.fee))
  })

  test('Pools by id and Accounts with their pool expanded', async () => {
    const wallet = devnet.wallets()[0]
    const account = await get(`/Accounts('${wallet.stakeAddress}')?$expand=pool($select=ticker,name)`)
    expect(account.stakeAddress).toBe(wallet.stakeAddress)
    expect(account.poolId).toMatch(/^pool1/)
    expect(account.pool.ticker).toEqual(expectedTicker())
    const pool = await get(`/Pools('${account.poolId}')?$select=ticker,liveStake,margin`)
    expect(pool).toMatchObject({ poolId: account.poolId, ticker: account.pool.ticker })
  })

  test('Dreps by id', async () => {
    const drep = [...devnet.ledger.dreps.values()][0]
    const body = await get(`/Dreps('${drep.id}')`)
    expect(body.drepId).toBe(drep.id)
    expect(BigInt(body.amount)).toBeGreaterThanOrEqual(0n)
  })

  test('LedgerProtocolParameters of the current epoch', async () => {
    const { value } = await get('/LedgerProtocolParameters?$orderby=epoch desc&$top=1&$select=epoch,minFeeA,maxTxSize,collateralPercent')
    expect(value).toEqual([{ epoch: devnet.ledger.tip.epoch, minFeeA: 44, maxTxSize: 16384, collateralPercent: 150 }])
  })

  test('AssetHistory of a minted unit', async () => {
    const hash = firstOf(events, 'mint')
    const unit = [...devnet.ledger.txs.get(hash)!.mint.keys()][0]
    const { value } = await get(`/AssetHistory?$filter=unit eq '${unit}'&$orderby=position`)
    expect(value.map((row: any) => row.txHash)).toContain(hash)
    expect(value.find((row: any) => row.txHash === hash).action).toBe('minted')
  })
})
