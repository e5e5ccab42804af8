import cds from '@sap/cds'
import { runningDevnet, growChain } from '../support/chain-a.ts'

const { GET, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }
defaults.validateStatus = () => true

const SERVICE = '/odata/v4/chaina-odata'

/** The 18 entity sets of the contract (spec 2.1), and AssetHistory which GetAssetHistory answers. */
const ENTITY_SETS = [
  'Accounts', 'AddressAssets', 'AddressTransactions', 'AddressUTxOs', 'Addresses', 'AssetHistory', 'Blocks', 'Dreps', 'Epochs',
  'LedgerProtocolParameters', 'NetworkInformation', 'Pools', 'TransactionInputAssets', 'TransactionInputs', 'TransactionMetadata',
  'TransactionOutputAssets', 'TransactionOutputs', 'Transactions', 'UTxOAssets',
]

const serviceEntities = () =>
  Object.values(cds.model!.definitions).filter((d: any) => d.kind === 'entity' && /^ChainAReadService\.[^.]+$/.test(d.name)) as any[]

/** An entity set's keys, scalar elements and navigation properties, from the served model. */
function describe_(name: string) {
  const elements = Object.values((cds.model!.definitions as any)['ChainAReadService.' + name].elements) as any[]
  return {
    keys: elements.filter(e => e.key).map(e => e.name),
    scalars: elements.filter(e => !e.isAssociation && !e.key && e.type !== 'cds.LargeString').map(e => e.name),
    navigation: elements.filter(e => e.isAssociation).map(e => ({ name: e.name, keys: Object.keys(e._target.keys) })),
  }
}

/** Indexes data for every entity set, so each query below has rows to answer. */
beforeAll(async () => {
  const devnet = runningDevnet()
  const events = growChain(devnet, ['transfer', 'mint', 'burn', 'message'])
  const wallet = devnet.wallets()[0]
  const mint = events.find(event => event.kind === 'mint')!.txHash!
  const burn = events.find(event => event.kind === 'burn')!.txHash!
  const message = events.find(event => event.kind === 'message')!.txHash!
  const minter = devnet.ledger.txs.get(mint)!.outputs.find(output => output.value.assets.size)!.address
  const unit = [...devnet.ledger.txs.get(mint)!.mint.keys()][0]
  const reads = [
    `/Transactions('${mint}')`, `/Transactions('${burn}')`, `/Transactions('${message}')?$expand=block`,
    `/Addresses('${minter}')?$expand=transactions`, `/Accounts('${wallet.stakeAddress}')?$expand=pool,drep`,
    `/Epochs(0)?$expand=parameters`, `/NetworkInformation`, `/AssetHistory?$filter=unit eq '${unit}'`,
  ]
  for (const path of reads) expect((await GET(SERVICE + path)).status).toBe(200)
})

test('the service serves exactly these entity sets', () => {
  expect(serviceEntities().map(entity => entity.name.split('.')[1]).sort()).toEqual([...ENTITY_SETS].sort())
})

describe('$filter, $select, $expand, $top, $skip, $count and $orderby on every entity set', () => {
  test.each(ENTITY_SETS)('%s', async name => {
    const set = describe_(name)
    const [key] = set.keys
    const selected = set.scalars.length ? set.scalars.slice(0, 2) : set.keys
    const navigation = set.navigation[0]
    const options = [
      `$filter=${key} ne null`,
      `$select=${selected.join(',')}`,
      `$orderby=${key} desc`,
      '$top=3',
      '$skip=0',
      '$count=true',
      ...(navigation ? [`$expand=${navigation.name}($select=${navigation.keys[0]})`] : []),
    ]
    const response = await GET(`${SERVICE}/${name}?${options.join('&')}`)
    expect(response.data.error).toBeUndefined()
    expect(response.status).toBe(200)
    expect(response.data['@odata.count']).toBeGreaterThan(0)
    expect(response.data.value.length).toBeLessThanOrEqual(3)
    for (const row of response.data.value) {
      const expected = new Set([...set.keys, ...selected, ...(navigation ? [navigation.name] : [])])
      expect(Object.keys(row).filter(name => !name.startsWith('@')).every(name => expected.has(name))).toBe(true)
    }
  })
})

test('$skip without $top in the $expand of a to-one navigation that expands further is read, as a to-one of at most one row (was a 500 from the database layer)', async () => {
  const [asset] = (await GET(`${SERVICE}/UTxOAssets?$top=1&$select=txHash,outputIndex,unit`)).data.value
  const entity = `${SERVICE}/UTxOAssets(txHash='${asset.txHash}',outputIndex=${asset.outputIndex},unit='${asset.unit}')`
  const rowsOf = (data: any): any[] => data.value ?? [data]
  for (const read of [(expand: string) => GET(`${entity}?$skip=0&$expand=${expand}`), (expand: string) => GET(`${SERVICE}/UTxOAssets?$top=2&$expand=${expand}`)]) {
    const kept = await read('utxo($select=outputIndex;$expand=owner($select=address);$skip=0)')
    expect(kept.data.error).toBeUndefined()
    expect(kept.status).toBe(200)
    for (const row of rowsOf(kept.data)) expect(row.utxo).toMatchObject({ outputIndex: expect.any(Number), owner: { address: expect.any(String) } })
    const skipped = await read('utxo($select=outputIndex;$expand=owner;$skip=1)')
    expect(skipped.data.error).toBeUndefined()
    expect(skipped.status).toBe(200)
    for (const row of rowsOf(skipped.data)) expect(row.utxo).toBeNull()
  }
})
