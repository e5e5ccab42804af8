import cds from '@sap/cds'
import { ApiKeys, LedgerEntries } from '#cds-models/gateway'

/**
 * Units move only here, each time by one guarded UPDATE of the balance and the ledger entry that
 * explains it, in one transaction: for every key, unitsLeft = the sum of its ledger units.
 *
 * A call reserves its price before it is handled (a `charge` entry, pending), and resolves exactly
 * once: committed when it succeeded, refunded (a `refund` entry) when it was rejected or timed out,
 * voided by the sweeper when a crashed process left it pending. Resolution is a guarded UPDATE of
 * the pending entry, so two resolvers can never both win.
 */

const { SELECT, INSERT, UPDATE } = cds.ql

export interface Call {
  keyId: string
  secretHash: string
  units: number
  routeClass: string
  route: string
  requestId: string
}

export type Reservation =
  | { ok: true; unitsLeft: number }
  | { ok: false; reason: 'insufficient'; unitsLeft: number }
  | { ok: false; reason: 'invalid' | 'expired' }

export async function reserve(call: Call): Promise<Reservation> {
  return cds.tx(async () => {
    const now = new Date().toISOString()
    const affected = await UPDATE.entity(ApiKeys)
      .set({ unitsLeft: { '-=': call.units }, lastUsedAt: now })
      .where`ID = ${call.keyId} and secretHash = ${call.secretHash} and status = 'active' and validUntil > ${now} and unitsLeft >= ${call.units}`
    if (affected !== 1) return diagnose(call, now)
    await INSERT.into(LedgerEntries).entries({
      ID: cds.utils.uuid(), apiKey_ID: call.keyId, kind: 'charge', units: -call.units, state: 'pending',
      routeClass: call.routeClass, route: call.route, requestId: call.requestId, createdAt: now,
    })
    return { ok: true as const, unitsLeft: await unitsLeftOf(call.keyId) }
  })
}

/** Why a reservation was refused: the key is gone, rotated, revoked or expired, or units are short. */
async function diagnose(call: Call, now: string): Promise<Reservation> {
  const key = await SELECT.one.from(ApiKeys).columns('secretHash', 'status', 'validUntil', 'unitsLeft').where({ ID: call.keyId })
  if (!key || key.secretHash !== call.secretHash || key.status !== 'active') return { ok: false, reason: 'invalid' }
  if (key.validUntil! <= now) return { ok: false, reason: 'expired' }
  return { ok: false, reason: 'insufficient', unitsLeft: Number(key.unitsLeft) }
}

/** The call succeeded: its charge stands. Answers false when it was already resolved. */
export async function commit(requestId: string, outcome: string): Promise<boolean> {
  return cds.tx(async () => {
    const affected = await UPDATE.entity(LedgerEntries)
      .set({ state: 'committed', outcome, resolvedAt: new Date().toISOString() })
      .where({ requestId, kind: 'charge', state: 'pending' })
    return affected === 1
  })
}

/**
 * The call was rejected, timed out, or was left behind: its units go back. Answers the key's
 * units left after the refund, or undefined when the charge was already resolved.
 */
export async function refund(requestId: string, outcome: string): Promise<number | undefined> {
  return cds.tx(async () => {
    const now = new Date().toISOString()
    const charge = await SELECT.one.from(LedgerEntries).columns('apiKey_ID', 'units', 'routeClass', 'route').where({ requestId, kind: 'charge', state: 'pending' })
    if (!charge) return undefined
    const resolved = await UPDATE.entity(LedgerEntries).set({ state: 'refunded', outcome, resolvedAt: now }).where({ requestId, kind: 'charge', state: 'pending' })
    if (resolved !== 1) return undefined
    const units = -Number(charge.units)
    await UPDATE.entity(ApiKeys).set({ unitsLeft: { '+=': units } }).where({ ID: charge.apiKey_ID })
    await INSERT.into(LedgerEntries).entries({
      ID: cds.utils.uuid(), apiKey_ID: charge.apiKey_ID, kind: 'refund', units, state: 'posted',
      routeClass: charge.routeClass, route: charge.route, requestId, outcome, createdAt: now, resolvedAt: now,
    })
    return unitsLeftOf(charge.apiKey_ID!)
  })
}

/** Adds units to a key (issue, top-up, operator credit). Answers the units left after. */
export async function credit(keyId: string, units: number, note: string): Promise<number> {
  if (!Number.isInteger(units) || units <= 0) throw new Error(`a credit must be a positive whole number of units, got ${units}`)
  return cds.tx(async () => {
    const now = new Date().toISOString()
    const affected = await UPDATE.entity(ApiKeys).set({ unitsLeft: { '+=': units } }).where({ ID: keyId })
    if (affected !== 1) throw new Error(`no key ${keyId}`)
    await INSERT.into(LedgerEntries).entries({
      ID: cds.utils.uuid(), apiKey_ID: keyId, kind: 'credit', units, state: 'posted', note, createdAt: now, resolvedAt: now,
    })
    return unitsLeftOf(keyId)
  })
}

/** Voids charges a crashed process left pending longer than `olderThanSeconds`. Answers how many. */
export async function sweep(olderThanSeconds: number): Promise<number> {
  const cutoff = new Date(Date.now() - olderThanSeconds * 1000).toISOString()
  const stale = await cds.tx(() => SELECT.from(LedgerEntries).columns('requestId').where`kind = 'charge' and state = 'pending' and createdAt < ${cutoff}`.limit(500))
  let voided = 0
  for (const { requestId } of stale) if ((await refund(requestId!, 'voided')) !== undefined) voided++
  return voided
}

async function unitsLeftOf(keyId: string): Promise<number> {
  const key = await SELECT.one.from(ApiKeys).columns('unitsLeft').where({ ID: keyId })
  return Number(key?.unitsLeft ?? 0)
}
