import cds from '@sap/cds'
import { chainBSource } from '../../srv/analytics/chain-b-source.ts'
import { setFollowerPaused } from '../../srv/analytics/internals.ts'
import { at, chainBHistory } from './history.ts'

/**
 * Analytics reads the chain-B index and pauses its follower through the indexer's internal service
 * (ChainBIndex). Inside a transaction those calls join it: they see its uncommitted rows, and on
 * SQLite (one writer) they never wait for it. Within an HTTP request its reads are whole, not paged.
 */

process.env.CHAIN_B_CRAWLER_ENABLED = 'false'
process.env.CHAIN_A_FOLLOWER_ENABLED = 'false'
cds.test(__dirname + '/../..')
afterAll(() => {
  delete process.env.CHAIN_B_CRAWLER_ENABLED
  delete process.env.CHAIN_A_FOLLOWER_ENABLED
})

beforeAll(async () => {
  await chainBHistory([{ height: 1, when: '01-01 00:00', author: 'P1' }], [], { indexedHeight: 1, finalizedHeight: 1 })
})

const pausedNow = async () => {
  const index = await cds.connect.to('ChainBIndex')
  return (await index.run(SELECT.one.from('ChainBIndex.SyncState').columns('paused')))?.paused
}

test('reads and the pause through the owner\'s internal service join the caller\'s transaction', async () => {
  const rolledBack = cds.tx(async () => {
    await UPDATE('chainb.SyncState').set({ indexedHeight: 7 }).where({ ID: 'chain-b' })
    expect(await chainBSource.position()).toMatchObject({ indexedHeight: 7 })
    expect(await setFollowerPaused('chain-b', true)).toMatchObject({ paused: true })
    expect(await pausedNow()).toBe(true)
    throw new Error('roll back')
  })
  await expect(rolledBack).rejects.toThrow('roll back')
  expect(await chainBSource.position()).toMatchObject({ indexedHeight: 1 })
  expect(await pausedNow()).toBe(false)
})

test('a read through the owner\'s internal service within an HTTP request is whole, not cut to a page', async () => {
  const many = Array.from({ length: 1001 }, (_, i) => ({ height: 100 + i, when: '02-01 00:00', author: 'P1' }))
  await chainBHistory(many, [], { indexedHeight: 1, finalizedHeight: 1 })
  const from = Date.parse(at('02-01 00:00'))
  const http = { req: { headers: {}, query: {} }, res: {} }
  const activity = await cds.tx({ http } as object, () => chainBSource.activity(from, from + 60_000))
  expect(activity.blocks).toHaveLength(1001)
})
