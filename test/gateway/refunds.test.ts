import cds from '@sap/cds'
import { runningDevnet, growChain } from '../support/chain-a.ts'
import { balanceOf, bearer, issueTestKey, ledgerOf, ledgerSum } from '../support/gateway.ts'
import * as ledger from '../../srv/gateway/ledger.ts'

process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_TIMEOUT_MS = '300'
process.env.GATEWAY_RATE_PER_SECOND = '100000'
process.env.GATEWAY_BURST = '100000'
const { GET, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true

const S = '/odata/v4/chaina-odata'
let devnet: ReturnType<typeof runningDevnet>
let transfers: string[]

beforeAll(() => {
  devnet = runningDevnet()
  transfers = growChain(devnet, ['transfer'], 3).filter(e => e.kind === 'transfer').map(e => e.txHash!)
})
afterAll(() => {
  for (const name of ['GATEWAY_ENABLED', 'GATEWAY_TIMEOUT_MS', 'GATEWAY_RATE_PER_SECOND', 'GATEWAY_BURST']) delete process.env[name]
})

test('a call the upstream does not answer within the timeout answers 504 and is refunded', async () => {
  const { id, key } = await issueTestKey({ units: 10 })
  devnet.setLatency(1000)
  try {
    const response = await GET(`${S}/Transactions('${transfers[0]}')`, bearer(key))
    expect(response.data.error.code).toBe('UPSTREAM_TIMEOUT')
    expect(response.status).toBe(504)
    expect(response.headers['x-access-units-charged']).toBe('0')
    expect(response.headers['x-access-units-left']).toBe('10')
  } finally {
    devnet.setLatency(0)
  }
  // The refund follows the answer; it lands once the abandoned handler lets go of the database.
  for (let i = 0; i < 100 && (await balanceOf(id)) !== 10; i++) await new Promise(resolve => setTimeout(resolve, 50))
  expect(await balanceOf(id)).toBe(10)
  const entries = await ledgerOf(id)
  expect(entries.map(entry => [entry.kind, entry.state, entry.outcome])).toEqual([['credit', 'posted', null], ['charge', 'refunded', 'timeout'], ['refund', 'posted', 'timeout']])
  expect(ledgerSum(entries)).toBe(10)
})

test('a call the upstream rejects (unreachable: 503) is refunded', async () => {
  const { id, key } = await issueTestKey({ units: 10 })
  const port = new URL(devnet.url).port
  const { chainA } = await import('../../srv/chains/chain-a/index.ts')
  expect((await chainA()).settings.url).toContain(port)
  await devnet.stop()
  const response = await GET(`${S}/Transactions('${transfers[1]}')`, bearer(key))
  expect(response.data.error.code).toBe('UPSTREAM_UNAVAILABLE')
  expect(response.status).toBe(503)
  expect(response.headers['x-access-units-charged']).toBe('0')
  expect(await balanceOf(id)).toBe(10)
  expect((await ledgerOf(id)).map(entry => entry.kind)).toEqual(['credit', 'charge', 'refund'])
})

test('a reservation left pending by a crashed process is voided by the sweeper, once', async () => {
  const { id } = await issueTestKey({ units: 10 })
  const { ApiKeys } = cds.entities('gateway')
  const { secretHash } = await cds.tx(() => SELECT.one.from(ApiKeys).columns('secretHash').where({ ID: id }))
  const reserved = await ledger.reserve({ keyId: id, secretHash, version: 0, units: 3, routeClass: 'entity-read', route: 'GET /crashed', routeFamily: 'other', requestId: 'crashed-request' })
  expect(reserved).toEqual({ ok: true, unitsLeft: 7 })
  expect(await ledger.sweep(60)).toBe(0)
  const { LedgerEntries } = cds.entities('gateway')
  await cds.tx(() => UPDATE(LedgerEntries).set({ createdAt: new Date(Date.now() - 120_000).toISOString() }).where({ requestId: 'crashed-request' }))
  const sweeps = await Promise.all([ledger.sweep(60), ledger.sweep(60)])
  expect(sweeps.reduce((a, b) => a + b, 0)).toBe(1)
  expect(await balanceOf(id)).toBe(10)
  expect(await ledger.commit('crashed-request', '200')).toBe(false)
  expect((await ledgerOf(id)).find(entry => entry.kind === 'charge')).toMatchObject({ state: 'refunded', outcome: 'voided' })
})

test('commits of succeeded calls are written in batches, and only for charges still pending', async () => {
  const { id } = await issueTestKey({ units: 10 })
  const { ApiKeys } = cds.entities('gateway')
  const { secretHash } = await cds.tx(() => SELECT.one.from(ApiKeys).columns('secretHash').where({ ID: id }))
  for (const requestId of ['batched-1', 'batched-2', 'batched-3'])
    await ledger.reserve({ keyId: id, secretHash, version: 0, units: 1, routeClass: 'entity-read', route: 'GET /batched', routeFamily: 'other', requestId })
  await ledger.refund('batched-3', '500')
  for (const requestId of ['batched-1', 'batched-2', 'batched-3']) ledger.commitSoon(requestId, '200')
  await ledger.flushCommits()
  const charges = (await ledgerOf(id)).filter(entry => entry.kind === 'charge').map(entry => [entry.requestId, entry.state, entry.outcome])
  expect(charges.sort()).toEqual([['batched-1', 'committed', '200'], ['batched-2', 'committed', '200'], ['batched-3', 'refunded', '500']])
  expect(await balanceOf(id)).toBe(8)
})

test('work that fails later (a chain-B job) gets its charge back once, committed or still pending', async () => {
  const { id } = await issueTestKey({ units: 10 })
  const { ApiKeys } = cds.entities('gateway')
  const { secretHash } = await cds.tx(() => SELECT.one.from(ApiKeys).columns('secretHash').where({ ID: id }))
  for (const requestId of ['job-committed', 'job-pending'])
    await ledger.reserve({ keyId: id, secretHash, version: 0, units: 3, routeClass: 'chainb-write', route: 'POST /anchorDocument', routeFamily: 'other', requestId })
  expect(await ledger.commit('job-committed', '200')).toBe(true)
  expect(await balanceOf(id)).toBe(4)

  const refunds = await Promise.all([ledger.refundLater('job-committed', 'job SPONSOR'), ledger.refundLater('job-committed', 'job SPONSOR')])
  expect(refunds.filter(left => left !== undefined)).toEqual([7])
  expect(await ledger.refundLater('job-pending', 'job SPONSOR')).toBe(10)
  // The answer of the request that queued it then finds nothing left to commit.
  expect(await ledger.commit('job-pending', '200')).toBe(false)
  expect(await ledger.refundLater('job-pending', 'job SPONSOR')).toBeUndefined()
  expect(await ledger.refundLater('no-such-request', 'job SPONSOR')).toBeUndefined()

  const entries = await ledgerOf(id)
  expect(entries.filter(entry => entry.kind === 'refund').map(entry => [entry.requestId, entry.units])).toEqual(expect.arrayContaining([['job-committed', 3], ['job-pending', 3]]))
  expect(ledgerSum(entries)).toBe(10)
  expect(await balanceOf(id)).toBe(10)
})

test('a refund the database does not take at once is logged once and made in the background: the answer leaves uncharged, the units come back', async () => {
  const { id, key } = await issueTestKey({ units: 10 })
  const refund = jest.spyOn(ledger, 'refund').mockRejectedValueOnce(new Error('Pool resource could not be acquired within 1s'))
  const warn = jest.spyOn(console, 'warn')
  try {
    const response = await GET(`${S}/Transactions('zz')`, bearer(key))
    expect(response.data.error.code).toBe('INVALID_TX_HASH')
    expect(response.headers['x-access-units-charged']).toBe('0')
    for (let i = 0; i < 200 && (await balanceOf(id)) !== 10; i++) await new Promise(resolve => setTimeout(resolve, 50))
    expect(await balanceOf(id)).toBe(10)
    expect(refund).toHaveBeenCalledTimes(2)
    expect(warn.mock.calls.filter(call => call.join(' ').includes('could not refund call'))).toHaveLength(1)
    expect((await ledgerOf(id)).map(entry => [entry.kind, entry.state])).toEqual([['credit', 'posted'], ['charge', 'refunded'], ['refund', 'posted']])
  } finally {
    refund.mockRestore()
    warn.mockRestore()
  }
})

test('commits the database does not take at once are tried again: a served call stays charged, warned about once', async () => {
  const { id } = await issueTestKey({ units: 10 })
  const { ApiKeys } = cds.entities('gateway')
  const { secretHash } = await cds.tx(() => SELECT.one.from(ApiKeys).columns('secretHash').where({ ID: id }))
  await ledger.reserve({ keyId: id, secretHash, version: 0, units: 2, routeClass: 'entity-read', route: 'GET /retried', routeFamily: 'other', requestId: 'retried-commit' })
  const warn = jest.spyOn(console, 'warn')
  const tx = jest.spyOn(cds, 'tx').mockImplementationOnce((() => Promise.reject(new Error('Pool resource could not be acquired within 1s'))) as never)
  try {
    ledger.commitSoon('retried-commit', '200')
    await ledger.flushCommits()
    const state = async () => (await ledgerOf(id)).find(entry => entry.requestId === 'retried-commit' && entry.kind === 'charge')?.state
    expect(await state()).toBe('pending')
    for (let i = 0; i < 200 && (await state()) === 'pending'; i++) await new Promise(resolve => setTimeout(resolve, 50))
    expect(await state()).toBe('committed')
    expect(await balanceOf(id)).toBe(8)
    expect(warn.mock.calls.filter(call => call.join(' ').includes('could not commit'))).toHaveLength(1)
  } finally {
    tx.mockRestore()
    warn.mockRestore()
  }
})
