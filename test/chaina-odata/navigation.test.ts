import cds from '@sap/cds'
import { runningDevnet, growChain, firstOf } from '../support/chain-a.ts'
import { chainAIndex } from '../../srv/chaina-odata/service.ts'
import { createdOutputs, type Output } from '../../devnet/chain-a/types.ts'
import type { ActivityEvent } from '../../devnet/chain-a/activity.ts'

const { GET, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }
defaults.validateStatus = () => true

/*
 * Every navigation of the read service indexes what it navigates to: each row names a keyed
 * entity, one of its navigations and the rows the devnet's ledger says it leads to. Each row is
 * read twice from an empty cache: as $expand and as a navigation path.
 */

const SERVICE = '/odata/v4/chaina-odata'

interface Navigation {
  from: string
  /** The key predicate of the entity navigated from, e.g. `('…')`. */
  key: () => string
  to: string
  /** What identifies a navigated row (its key by default). */
  pick?: (row: any) => string
  /** The identities of the rows the ledger says the navigation leads to. */
  expected: () => string[]
}

let devnet: ReturnType<typeof runningDevnet>
let events: ActivityEvent[]

const ledger = () => devnet.ledger
const tx = (hash: string) => ledger().txs.get(hash)!
const mintTx = () => firstOf(events, 'mint')
const burnTx = () => firstOf(events, 'burn')
const messageTx = () => firstOf(events, 'message')
const mintBlock = () => ledger().block(tx(mintTx()).included.blockHash)!
const mintedUnit = () => [...tx(mintTx()).mint.keys()][0]
const mintOutput = () => tx(mintTx()).outputs.findIndex(output => output.value.assets.has(mintedUnit()))
const burnInput = () => tx(burnTx()).inputs.findIndex(ref => ledger().outputs.get(ref)!.value.assets.size > 0)
const spentBy = (hash: string, index: number) => ledger().outputs.get(tx(hash).inputs[index])!
/** An unspent output that holds native assets, and its address. */
const tokenUtxo = (): Output => [...ledger().outputs.values()].find(output => !output.spentBy && output.value.assets.size > 0)!
const tokenUnit = () => [...tokenUtxo().value.assets.keys()][0]
const holder = () => tokenUtxo().address
const wallet = () => devnet.wallets()[0]
const account = () => ledger().accounts.get(wallet().stakeAddress)!
const pool = () => ledger().pools.get(account().pool!)!
const drep = () => ledger().dreps.get(account().drep!)!
const epoch = () => mintBlock().epoch

const quoted = (value: string) => `'${value}'`
const assetsOf = (assets: Map<string, bigint>) => [...assets].map(([unit, quantity]) => `${unit}:${quantity}`)
const byAsset = (row: any) => `${row.unit}:${row.quantity}`
const heldAssets = (address: string) => {
  const held = new Map<string, bigint>()
  for (const output of ledger().unspentAt(address)) for (const [unit, quantity] of output.value.assets) held.set(unit, (held.get(unit) ?? 0n) + quantity)
  return assetsOf(held)
}

const NAVIGATIONS: Navigation[] = [
  { from: 'Epochs', key: () => `(${epoch()})`, to: 'parameters', expected: () => [String(epoch())] },
  { from: 'Epochs', key: () => `(${epoch()})`, to: 'blocks', expected: () => ledger().epochs.get(epoch())!.blocks },
  { from: 'Blocks', key: () => `(${quoted(mintBlock().hash)})`, to: 'epochInfo', expected: () => [String(epoch())] },
  { from: 'Blocks', key: () => `(${quoted(mintBlock().hash)})`, to: 'transactions', expected: () => mintBlock().txs },
  { from: 'Transactions', key: () => `(${quoted(mintTx())})`, to: 'block', expected: () => [mintBlock().hash] },
  {
    from: 'Transactions', key: () => `(${quoted(burnTx())})`, to: 'inputs',
    pick: row => `${row.spentTxHash}#${row.spentOutputIndex}`,
    expected: () => [...tx(burnTx()).inputs, ...tx(burnTx()).collateral, ...tx(burnTx()).referenceInputs],
  },
  {
    from: 'Transactions', key: () => `(${quoted(mintTx())})`, to: 'outputs',
    pick: row => `${row.outputIndex}:${row.address}:${row.lovelace}`,
    expected: () => createdOutputs(tx(mintTx())).map(([index, output]) => `${index}:${output.address}:${output.value.coin}`),
  },
  { from: 'Transactions', key: () => `(${quoted(messageTx())})`, to: 'metadata', pick: row => row.label, expected: () => tx(messageTx()).metadata.map(entry => entry.label) },
  { from: 'TransactionInputs', key: () => `(txHash=${quoted(burnTx())},inputIndex=${burnInput()})`, to: 'transaction', expected: () => [burnTx()] },
  {
    from: 'TransactionInputs', key: () => `(txHash=${quoted(burnTx())},inputIndex=${burnInput()})`, to: 'assets',
    pick: byAsset, expected: () => assetsOf(spentBy(burnTx(), burnInput()).value.assets),
  },
  { from: 'TransactionOutputs', key: () => `(txHash=${quoted(mintTx())},outputIndex=${mintOutput()})`, to: 'transaction', expected: () => [mintTx()] },
  {
    from: 'TransactionOutputs', key: () => `(txHash=${quoted(mintTx())},outputIndex=${mintOutput()})`, to: 'assets',
    pick: byAsset, expected: () => assetsOf(tx(mintTx()).outputs[mintOutput()].value.assets),
  },
  {
    from: 'TransactionInputAssets',
    key: () => `(txHash=${quoted(burnTx())},inputIndex=${burnInput()},unit=${quoted([...spentBy(burnTx(), burnInput()).value.assets.keys()][0])})`,
    to: 'input', pick: row => `${row.spentTxHash}#${row.spentOutputIndex}`, expected: () => [tx(burnTx()).inputs[burnInput()]],
  },
  {
    from: 'TransactionOutputAssets', key: () => `(txHash=${quoted(mintTx())},outputIndex=${mintOutput()},unit=${quoted(mintedUnit())})`,
    to: 'output', pick: row => `${row.txHash}#${row.outputIndex}`, expected: () => [`${mintTx()}#${mintOutput()}`],
  },
  { from: 'TransactionMetadata', key: () => `(txHash=${quoted(messageTx())},label='674')`, to: 'transaction', expected: () => [messageTx()] },
  { from: 'Addresses', key: () => `(${quoted(holder())})`, to: 'account', expected: () => [ledger().outputs.get(tokenUtxo().ref)!.stakeAddress!] },
  {
    from: 'Addresses', key: () => `(${quoted(holder())})`, to: 'utxos',
    pick: row => `${row.txHash}#${row.outputIndex}`, expected: () => ledger().unspentAt(holder()).map(output => output.ref),
  },
  { from: 'Addresses', key: () => `(${quoted(holder())})`, to: 'assets', pick: byAsset, expected: () => heldAssets(holder()) },
  { from: 'Addresses', key: () => `(${quoted(holder())})`, to: 'transactions', pick: row => row.txHash, expected: () => ledger().addresses.get(holder())!.txs },
  { from: 'AddressAssets', key: () => `(address=${quoted(holder())},unit=${quoted(tokenUnit())})`, to: 'owner', expected: () => [holder()] },
  { from: 'AddressUTxOs', key: () => `(txHash=${quoted(tokenUtxo().txHash)},outputIndex=${tokenUtxo().index})`, to: 'owner', expected: () => [holder()] },
  {
    from: 'AddressUTxOs', key: () => `(txHash=${quoted(tokenUtxo().txHash)},outputIndex=${tokenUtxo().index})`, to: 'assets',
    pick: byAsset, expected: () => assetsOf(tokenUtxo().value.assets),
  },
  {
    from: 'UTxOAssets', key: () => `(txHash=${quoted(tokenUtxo().txHash)},outputIndex=${tokenUtxo().index},unit=${quoted(tokenUnit())})`,
    to: 'utxo', pick: row => `${row.txHash}#${row.outputIndex}`, expected: () => [tokenUtxo().ref],
  },
  { from: 'AddressTransactions', key: () => `(address=${quoted(holder())},txHash=${quoted(tokenUtxo().txHash)})`, to: 'owner', expected: () => [holder()] },
  { from: 'AddressTransactions', key: () => `(address=${quoted(holder())},txHash=${quoted(tokenUtxo().txHash)})`, to: 'transaction', expected: () => [tokenUtxo().txHash] },
  { from: 'Accounts', key: () => `(${quoted(wallet().stakeAddress)})`, to: 'pool', expected: () => [pool().id] },
  { from: 'Accounts', key: () => `(${quoted(wallet().stakeAddress)})`, to: 'drep', expected: () => [drep().id] },
  { from: 'Accounts', key: () => `(${quoted(wallet().stakeAddress)})`, to: 'addresses', expected: () => [...account().addresses] },
  {
    from: 'Pools', key: () => `(${quoted(pool().id)})`, to: 'delegators',
    expected: () => [...ledger().liveStake().accounts].filter(([, delegation]) => delegation.pool === pool().hex).map(([stakeAddress]) => stakeAddress),
  },
  {
    from: 'Dreps', key: () => `(${quoted(drep().id)})`, to: 'delegators',
    expected: () => [...ledger().accounts.values()].filter(entry => entry.registered && entry.drep === drep().hex).map(entry => entry.stakeAddress),
  },
  { from: 'LedgerProtocolParameters', key: () => `(${epoch()})`, to: 'epochInfo', expected: () => [String(epoch())] },
  { from: 'AssetHistory', key: () => `(unit=${quoted(mintedUnit())},txHash=${quoted(mintTx())})`, to: 'transaction', expected: () => [mintTx()] },
]

/** Every association of every entity set the service serves. */
function servedNavigations(): string[] {
  const sets = Object.values(cds.model!.definitions).filter((d: any) => d.kind === 'entity' && /^ChainAReadService\.[^.]+$/.test(d.name)) as any[]
  return sets.flatMap(set => Object.values(set.elements).filter((e: any) => e.isAssociation).map((e: any) => `${set.name.split('.')[1]}.${e.name}`))
}

function keyOf(entity: string, to: string) {
  const target = (cds.model!.definitions as any)[`ChainAReadService.${entity}`].elements[to]._target
  const keys = Object.keys(target.keys)
  return (row: any) => keys.map(key => String(row[key])).join('|')
}

const sorted = (values: string[]) => [...values].sort()

beforeAll(() => {
  devnet = runningDevnet()
  events = growChain(devnet, ['transfer', 'payTestWallet', 'mint', 'burn', 'message', 'metadata'])
  // Unbounded lists answer their first upstream page on an $expand without $top: stay below it.
  expect(ledger().epochs.get(epoch())!.blocks.length).toBeLessThanOrEqual(100)
  expect(ledger().addresses.get(holder())!.txs.length).toBeLessThanOrEqual(100)
})

/** Each navigation starts from an empty cache, so it must index what it reads itself. */
beforeEach(async () => {
  await cds.tx(() => chainAIndex().purge())
})

test('the table holds every navigation the service serves', () => {
  expect(sorted(NAVIGATIONS.map(n => `${n.from}.${n.to}`))).toEqual(sorted(servedNavigations()))
})

describe.each(['$expand', 'navigation path'])('as %s, a navigation indexes what it navigates to', how => {
  test.each(NAVIGATIONS.map(n => [`${n.from}${'(…)'}/${n.to}`, n] as const))('%s', async (_, navigation) => {
    const source = `${SERVICE}/${navigation.from}${navigation.key()}`
    const response = await GET(how === '$expand' ? `${source}?$expand=${navigation.to}` : `${source}/${navigation.to}`)
    expect(response.data.error).toBeUndefined()
    expect(response.status).toBe(200)
    const answer = how === '$expand' ? response.data[navigation.to] : response.data
    const rows = answer === null ? [] : Array.isArray(answer.value) ? answer.value : Array.isArray(answer) ? answer : [answer]
    const pick = navigation.pick ?? keyOf(navigation.from, navigation.to)
    const expected = navigation.expected()
    expect(expected.length).toBeGreaterThan(0)
    expect(sorted(rows.map(pick))).toEqual(sorted(expected.map(String)))
  })
})
