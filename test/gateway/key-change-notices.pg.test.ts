import cds from '@sap/cds'
import { bearer, gatewaySettings, issueTestKey, ledgerOf, untilLeased } from '../support/gateway.ts'
import { revokeKey, rotateKey } from '../../srv/gateway/accounts.ts'

/**
 * On PostgreSQL a key's change is announced as it commits (srv/gateway/key-changes.ts): an instance
 * holding a lease of the key hands it back and reads the key again at once, without waiting for
 * its lease check (set to 10 minutes here, so only the notification can do it).
 */

gatewaySettings({ GATEWAY_LEASE_SECONDS: '1', GATEWAY_LEASE_MIN_BALANCE: '100', GATEWAY_LEASE_IDLE_MS: '600000', GATEWAY_LEASE_CHECK_MS: '600000' })
const { GET, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true

const READ = '/odata/v4/chaina-odata/Blocks?$top=1&$select=hash'

/** Reads with the key, 8 at a time, until it holds a lease with undrawn units; answers that lease. */
const leased = (keyId: string, key: string) => untilLeased(keyId, () => Promise.all(Array.from({ length: 8 }, async () => {
  for (let n = 0; n < 4; n++) await GET(READ, bearer(key))
})))

/**
 * Waits until no lease of the key is open; answers the newest one, the lease the instance held
 * when the key changed. (A lease taken in the background as the burst ended may have replaced the
 * one the burst saw, which then went back as 'replaced'; earlier ones as 'replaced' or 'spent'.)
 */
async function heldLeaseClosed(keyId: string) {
  for (const giveUpAt = Date.now() + 10_000; Date.now() < giveUpAt;) {
    const leases = (await ledgerOf(keyId)).filter(entry => entry.kind === 'lease')
    if (!leases.some(lease => lease.state === 'pending')) {
      expect(leases.slice(0, -1).filter(lease => !['replaced', 'spent'].includes(lease.outcome))).toEqual([])
      return leases.at(-1)
    }
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  throw new Error(`a lease of ${keyId} stayed open`)
}

describe('key changes announced on PostgreSQL', () => {
  test('a key revoked in the database alone: its lease goes back as the change commits, and its next call is refused', async () => {
    const { id, key } = await issueTestKey({ units: 4000 })
    await leased(id, key)
    await cds.tx(() => revokeKey(id))
    expect(await heldLeaseClosed(id)).toMatchObject({ state: 'closed', outcome: 'key changed', units: 0 })
    const after = await GET(READ, bearer(key))
    expect(after.status).toBe(401)
    expect(after.data.error.code).toBe('KEY_INVALID')
  })

  test('a key rotated in the database alone: the old secret is refused at once, the new one served', async () => {
    const { id, key } = await issueTestKey({ units: 4000 })
    await leased(id, key)
    const rotated = await cds.tx(() => rotateKey(id))
    expect(await heldLeaseClosed(id)).toMatchObject({ outcome: 'key changed' })
    expect((await GET(READ, bearer(key))).status).toBe(401)
    expect((await GET(READ, bearer(rotated!.key))).status).toBe(200)
  })
})
