import cds from '@sap/cds'
import { CHAIN_CHANGED, chainA, type ChainAService, type ChainChange } from '../../srv/chains/chain-a/index.ts'
import { runningDevnet } from '../support/chain-a.ts'

// The chain-a service holds the chain's facts once for every service, and tells, with one event,
// when the upstream serves another chain than the one recorded. Parameters stay fresh for 1 s here.
process.env.CHAIN_A_TTL_PARAMETERS = '1'
cds.test(__dirname + '/../..')
afterAll(() => {
  delete process.env.CHAIN_A_TTL_PARAMETERS
})

let chain: ChainAService
let devnet: ReturnType<typeof runningDevnet>
const heard: ChainChange[] = []
let failReaction = false

const recorded = () => cds.tx(() => SELECT.from(cds.entities('chainatx').NetworkParametersCache).columns('network', 'networkMagic', 'systemStart'))
const recordAnotherChain = () => cds.tx(() => UPDATE(cds.entities('chainatx').NetworkParametersCache).set({ networkMagic: 7 }))
const pause = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

beforeAll(async () => {
  chain = await chainA()
  devnet = runningDevnet()
  chain.on(CHAIN_CHANGED, (msg: { data: ChainChange }) => {
    if (failReaction) throw new Error('a reaction failed')
    heard.push(msg.data)
  })
  // The check at start records the upstream's chain.
  for (let i = 0; i < 100 && !(await recorded()).length; i++) await pause(50)
})
beforeEach(() => {
  heard.splice(0)
  devnet.resetRequestCounts()
})

const upstreamChain = () => ({ network: 'devnet', networkMagic: 42, systemStart: new Date(devnet.ledger.systemStartMs).toISOString() })

test('at start the upstream\'s chain is recorded, and is the chain records are made on', async () => {
  expect(await recorded()).toEqual([upstreamChain()])
  expect(await chain.identity()).toEqual(upstreamChain())
})

test('the upstream serving the recorded chain raises nothing', async () => {
  expect(await chain.verifyUpstream()).toBeUndefined()
  expect(heard).toEqual([])
})

test('another recorded chain: one chain-changed with the former and the current chain, then the current one is recorded', async () => {
  await recordAnotherChain()
  expect(await chain.identity()).toMatchObject({ networkMagic: 7 })
  const change = await chain.verifyUpstream()
  expect(change).toEqual({ previous: { ...upstreamChain(), networkMagic: 7 }, current: upstreamChain() })
  expect(heard).toEqual([change])
  expect(await recorded()).toEqual([upstreamChain()])
  expect(await chain.verifyUpstream()).toBeUndefined()
})

test('a reaction that fails keeps the former chain recorded, so the next check raises the change again', async () => {
  await recordAnotherChain()
  failReaction = true
  await expect(chain.verifyUpstream()).rejects.toThrow('a reaction failed')
  failReaction = false
  expect(await recorded()).toEqual([{ ...upstreamChain(), networkMagic: 7 }])
  expect(await chain.verifyUpstream()).toMatchObject({ previous: { networkMagic: 7 }, current: upstreamChain() })
  expect(await recorded()).toEqual([upstreamChain()])
})

test('the genesis is fetched once for every service', async () => {
  const [first, second] = await Promise.all([chain.genesis(), chain.genesis()])
  expect(second).toBe(first)
  expect(devnet.requestCount('/genesis')).toBe(0)
})

test('protocol parameters: one fetch for concurrent callers, recorded, fetched again once their TTL has passed', async () => {
  await pause(1100)
  const [first, second] = await cds.tx(() => Promise.all([chain.protocolParameters(), chain.protocolParameters()]))
  expect(second).toBe(first)
  expect(devnet.requestCount('/epochs/latest/parameters')).toBe(1)
  const rows = await cds.tx(() => SELECT.from(cds.entities('chainatx').ProtocolParametersCache).columns('epoch', 'minFeeA'))
  expect(rows).toContainEqual({ epoch: first.epoch, minFeeA: first.minFeeA })
  expect(await chain.protocolParameters()).toBe(first)
  await pause(1100)
  await cds.tx(() => chain.protocolParameters())
  expect(devnet.requestCount('/epochs/latest/parameters')).toBe(2)
})
