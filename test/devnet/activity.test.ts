import type { ChainADevnet } from '../../devnet/chain-a/index.ts'
import { getJson, startDevnet } from '../support/devnet.ts'

/** The activity generator makes the devnet look alive, from its own wallets only. */

let devnet: ChainADevnet
let genesisRefsOfTestWallets: string[]

beforeAll(async () => {
  devnet = await startDevnet({ seed: 'activity-test', activity: true })
  const testAddresses = new Set(devnet.wallets().map(w => w.address))
  genesisRefsOfTestWallets = [...devnet.ledger.outputs.values()].filter(o => testAddresses.has(o.address)).map(o => o.ref)
  for (let i = 0; i < 60; i++) {
    devnet.activity.round()
    devnet.produceBlock()
  }
})
afterAll(() => devnet.stop())

const landed = (kind: string) => devnet.activity.events.filter(e => e.kind === kind && e.txHash && devnet.ledger.txs.has(e.txHash))

it('lands every transaction it submits through the validator', () => {
  const submitted = devnet.activity.events.filter(e => e.txHash)
  expect(submitted.length).toBeGreaterThan(40)
  const pending = new Set(devnet.ledger.mempoolTransactions().map(tx => tx.hash))
  expect(submitted.filter(e => !devnet.ledger.txs.has(e.txHash!) && !pending.has(e.txHash!))).toEqual([])
})

it('transfers ADA to the test wallets', async () => {
  expect(landed('payTestWallet').length).toBeGreaterThan(0)
  const testAddresses = new Set(devnet.wallets().map(w => w.address))
  const received = [...devnet.ledger.outputs.values()].filter(o => testAddresses.has(o.address) && !genesisRefsOfTestWallets.includes(o.ref))
  expect(received.length).toBeGreaterThan(0)
  const wallet = received[0].address
  const txs = (await getJson(devnet, `/addresses/${wallet}/transactions`)).body
  expect(txs.map((t: any) => t.tx_hash)).toContain(received[0].txHash)
})

it('mints tokens with CIP-25 metadata under its own policy', async () => {
  const mints = landed('mint')
  expect(mints.length).toBeGreaterThan(0)
  const assets = (await getJson(devnet, `/assets/policy/${devnet.activity.policyId}`)).body
  const asset = (await getJson(devnet, `/assets/${assets[0].asset}`)).body
  expect(asset).toMatchObject({ policy_id: devnet.activity.policyId, onchain_metadata: { name: expect.stringMatching(/^Devnet Token #\d+$/) }, onchain_metadata_standard: 'CIP25v1' })
})

it('writes CIP-20 messages and other metadata labels', async () => {
  expect(landed('message').length).toBeGreaterThan(0)
  expect(landed('metadata').length).toBeGreaterThan(0)
  const labels = (await getJson(devnet, '/metadata/txs/labels')).body.map((l: any) => l.label)
  expect(labels).toEqual(expect.arrayContaining(['674', '721']))
  expect(labels.length).toBeGreaterThan(2)
  const message = (await getJson(devnet, '/metadata/txs/labels/674?count=1')).body[0]
  expect(message.json_metadata.msg).toEqual([expect.any(String)])
})

it('never spends the test wallets', () => {
  const spent = genesisRefsOfTestWallets.filter(ref => devnet.ledger.outputs.get(ref)!.spentBy)
  expect(spent).toEqual([])
})

it('runs a round every few blocks on its own when activity is on', () => {
  const before = devnet.activity.events.length
  for (let i = 0; i < 6; i++) devnet.produceBlock()
  expect(devnet.activity.events.length).toBeGreaterThan(before)
})

it('keeps the ledger balanced', () => {
  expect(devnet.ledger.accountedSupply()).toBe(45_000_000_000_000_000n)
})
