import cds from '@sap/cds'
import { balanceOf, bearer, gatewaySettings, issueTestKey, ledgerOf, ledgerSum, settled, untilLeased } from '../support/gateway.ts'
import { revokeKey } from '../../srv/gateway/accounts.ts'
import * as ledger from '../../srv/gateway/ledger.ts'

/**
 * Unit leases (srv/gateway/leases.ts): a busy key's calls draw on units this instance leased, and
 * the ledger stays exact through hand-backs, key changes, recalls and a crashed holder's void.
 */

gatewaySettings({ GATEWAY_LEASE_SECONDS: '1', GATEWAY_LEASE_MIN_BALANCE: '100', GATEWAY_LEASE_IDLE_MS: '3000', GATEWAY_LEASE_CHECK_MS: '50' })
const { GET, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true

const READ = '/odata/v4/chaina-odata/Blocks?$top=1&$select=hash'
const leasesOf = async (keyId: string) => (await ledgerOf(keyId)).filter(entry => entry.kind === 'lease')

/** `calls` reads of one key, `clients` at a time; answers the statuses and the units-left headers seen. */
async function burst(key: string, calls: number, clients = 8) {
  const statuses: number[] = []
  const unitsLeft: number[] = []
  let next = 0
  await Promise.all(Array.from({ length: clients }, async () => {
    while (next < calls) {
      next++
      const response = await GET(READ, bearer(key))
      statuses.push(response.status)
      unitsLeft.push(Number(response.headers['x-access-units-left']))
    }
  }))
  return { statuses, unitsLeft, served: statuses.filter(status => status === 200).length }
}

/** Calls until the key has an open lease holding undrawn units (its calls come fast enough to take one); answers it. */
const leased = (keyId: string, key: string) => untilLeased(keyId, () => burst(key, 20))

describe('unit leases', () => {
  test('a busy key draws on a lease: every served call is charged once, the idle lease goes back, the ledger sums to the balance', async () => {
    const { id, key } = await issueTestKey({ units: 5000 })
    const first = await burst(key, 300)
    expect(first.statuses.every(status => status === 200)).toBe(true)
    expect(Math.min(...first.unitsLeft)).toBeGreaterThanOrEqual(0)
    await settled(id)
    const entries = await ledgerOf(id)
    const leases = entries.filter(entry => entry.kind === 'lease')
    expect(leases.length).toBeGreaterThan(0)
    expect(leases.every(lease => lease.state === 'closed' && lease.units === 0 && Number(lease.leased) > 0)).toBe(true)
    const charges = entries.filter(entry => entry.kind === 'charge')
    expect(charges).toHaveLength(300)
    expect(charges.every(charge => charge.state === 'committed' && charge.units === -1)).toBe(true)
    expect(charges.some(charge => /^lease /.test(charge.note ?? ''))).toBe(true)
    // Served on a lease or not, each charge says which family it was for (the operator's usage counts by it).
    expect(new Set(charges.map(charge => charge.routeFamily))).toEqual(new Set(['/odata/v4/chaina-odata']))
    expect(await balanceOf(id)).toBe(5000 - 300)
    expect(ledgerSum(entries)).toBe(5000 - 300)
  })

  test('calls drawn on a lease reserve nothing in the database: the gateway writes only their charges, a few calls to a statement', async () => {
    const { id, key } = await issueTestKey({ units: 5000 })
    await leased(id, key)
    const statements: string[] = []
    const db = cds.db as unknown as { dispatch(req: { query?: unknown }): unknown }
    const dispatch = db.dispatch
    db.dispatch = function (this: unknown, req: { query?: unknown }) {
      if (typeof req.query === 'string' && /gateway_(ApiKeys|LedgerEntries)/i.test(req.query)) statements.push(req.query)
      return dispatch.call(this, req)
    }
    try {
      const { served } = await burst(key, 40, 4)
      expect(served).toBe(40)
      await new Promise(resolve => setTimeout(resolve, 50))
    } finally {
      db.dispatch = dispatch
    }
    const reservations = statements.filter(sql => /UPDATE gateway_ApiKeys SET unitsLeft = unitsLeft -/i.test(sql))
    const draws = statements.filter(sql => /UPDATE gateway_LedgerEntries SET units = units \+/i.test(sql))
    // A lease may run out and be followed by another; each call on the way reserves nothing.
    expect(reservations.length).toBeLessThanOrEqual(4)
    expect(draws.length).toBeGreaterThan(0)
    expect(draws.length).toBeLessThan(40)
    await settled(id)
    expect(await balanceOf(id)).toBe(5000 - (await ledgerOf(id)).filter(entry => entry.kind === 'charge' && entry.state === 'committed').length)
  })

  test('while a lease is open, the balance plus its undrawn units is what the key holds, and /me says so', async () => {
    const { id, key } = await issueTestKey({ units: 4000 })
    // No call is running; the lease goes back when idle for 3 s.
    const open = await leased(id, key)
    const charged = (await ledgerOf(id)).filter(entry => entry.kind === 'charge' && entry.state === 'committed').length
    const balance = await balanceOf(id)
    expect(balance - open.units).toBe(4000 - charged)
    const me = await GET('/me', bearer(key))
    expect(me.data.unitsLeft).toBe(4000 - charged)
    await settled(id)
    expect(await balanceOf(id)).toBe(4000 - (await ledgerOf(id)).filter(entry => entry.kind === 'charge' && entry.state === 'committed').length)
  })

  test('a key revoked by another instance (only the database changes) is refused within the lease check, and its lease is handed back', async () => {
    const { id, key } = await issueTestKey({ units: 4000 })
    const open = await leased(id, key)
    // As another instance would: the database only; this instance's cached key and lease know nothing.
    await cds.tx(() => revokeKey(id))
    // This instance's check of its leased keys (every 50 ms here) sees the change and hands the lease back; no call draws on it meanwhile.
    await settled(id)
    // The lease seen open may have been replaced by a fresh one taken by the burst's last calls just before the revocation: the one open then goes back as changed.
    const leases = await leasesOf(id)
    expect(leases.find(lease => lease.ID === open.ID)).toMatchObject({ state: 'closed', outcome: expect.stringMatching(/^(key changed|replaced)$/), units: 0 })
    expect(leases.every(lease => lease.state === 'closed' && lease.units === 0)).toBe(true)
    expect(leases.map(lease => lease.outcome)).toContain('key changed')
    const after = await GET(READ, bearer(key))
    expect(after.status).toBe(401)
    expect(after.data.error.code).toBe('KEY_INVALID')
    const entries = await ledgerOf(id)
    expect(ledgerSum(entries)).toBe(await balanceOf(id))
  })

  test('a lease whose holder stopped renewing it is voided by the sweeper once: its undrawn units come back, never twice', async () => {
    const { id } = await issueTestKey({ units: 1000 })
    const leaseId = cds.utils.uuid()
    const key = await cds.tx(() => SELECT.one.from('gateway.ApiKeys').columns('secretHash', 'version').where({ ID: id }))
    const taken = await ledger.takeLease({ keyId: id, secretHash: key.secretHash, version: Number(key.version), units: 300, requestId: leaseId })
    expect(taken).toEqual({ ok: true, unitsLeft: 700 })
    // The holder drew 40 units for 20 calls, then crashed: its lease is no longer renewed.
    const charges = Array.from({ length: 20 }, (_, n) => ({ units: 2, routeClass: 'read-action', route: 'POST /x', routeFamily: 'other', requestId: `crash-${leaseId}-${n}`, outcome: '200', at: new Date().toISOString() }))
    expect(await ledger.drawOnLease(leaseId, id, charges)).toBe(true)
    await cds.tx(() => UPDATE('gateway.LedgerEntries').set({ renewedAt: new Date(Date.now() - 3_600_000).toISOString() }).where({ ID: leaseId }))
    const [a, b] = await Promise.all([ledger.sweepLeases(60), ledger.sweepLeases(60)])
    expect(a + b).toBe(1)
    expect(await balanceOf(id)).toBe(1000 - 40)
    const entries = await ledgerOf(id)
    expect(entries.find(entry => entry.ID === leaseId)).toMatchObject({ state: 'closed', units: 0, outcome: 'voided', leased: '300' })
    expect(ledgerSum(entries)).toBe(1000 - 40)
    // Charges written after the void are refused: nothing is charged on a closed lease.
    expect(await ledger.drawOnLease(leaseId, id, [{ ...charges[0], requestId: `late-${leaseId}` }])).toBe(false)
    expect(await balanceOf(id)).toBe(1000 - 40)
  })

  test('a lease never draws more than it holds', async () => {
    const { id } = await issueTestKey({ units: 100 })
    const leaseId = cds.utils.uuid()
    const key = await cds.tx(() => SELECT.one.from('gateway.ApiKeys').columns('secretHash', 'version').where({ ID: id }))
    expect(await ledger.takeLease({ keyId: id, secretHash: key.secretHash, version: Number(key.version), units: 10, requestId: leaseId })).toEqual({ ok: true, unitsLeft: 90 })
    expect(await ledger.takeLease({ keyId: id, secretHash: key.secretHash, version: Number(key.version), units: 91, requestId: cds.utils.uuid() })).toEqual({ ok: false, reason: 'insufficient', unitsLeft: 90 })
    const charge = (n: number) => ({ units: 6, routeClass: 'x', route: 'GET /x', routeFamily: 'other', requestId: `over-${leaseId}-${n}`, outcome: '200', at: new Date().toISOString() })
    expect(await ledger.drawOnLease(leaseId, id, [charge(1), charge(2)])).toBe(false)
    expect(await ledger.drawOnLease(leaseId, id, [charge(3)])).toBe(true)
    expect(await ledger.closeLease(leaseId, 'idle')).toBe(4)
    expect(await ledger.closeLease(leaseId, 'idle')).toBeUndefined()
    expect(await balanceOf(id)).toBe(94)
    expect(ledgerSum(await ledgerOf(id))).toBe(94)
  })

  test('a call that finds too few units recalls the leases of other instances and waits for them', async () => {
    const { id, key } = await issueTestKey({ units: 101 })
    const row = await cds.tx(() => SELECT.one.from('gateway.ApiKeys').columns('secretHash', 'version').where({ ID: id }))
    // Another instance holds 100 of the 101 units.
    const leaseId = cds.utils.uuid()
    await ledger.takeLease({ keyId: id, secretHash: row.secretHash, version: Number(row.version), units: 100, requestId: leaseId })
    // That instance hands its lease back once it sees the recall.
    const holder = (async () => {
      for (;;) {
        const [lease] = await cds.tx(() => SELECT.from('gateway.LedgerEntries').columns('outcome').where({ ID: leaseId }))
        if (lease.outcome === ledger.RECALLED) return ledger.closeLease(leaseId, ledger.RECALLED)
        await new Promise(resolve => setTimeout(resolve, 20))
      }
    })()
    // The first call finds the 1 unit outside the lease; the second finds none and recalls the lease.
    const first = await GET(READ, bearer(key))
    const second = await GET(READ, bearer(key))
    expect([first.status, second.status]).toEqual([200, 200])
    expect(await holder).toBe(100)
    await settled(id)
    expect(await balanceOf(id)).toBe(99)
    expect(ledgerSum(await ledgerOf(id))).toBe(99)
  })
})
