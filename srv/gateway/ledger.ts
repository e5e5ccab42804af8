import cds, { type Transaction } from '@sap/cds'
import { ApiKey, ApiKeys, LedgerEntries, LedgerEntry } from '#cds-models/gateway'
import { LedgerEntryKind } from './ledger-kinds.ts'
import { forDatabase, isPostgres, rowsChanged, tableOf } from '../lib/plain-sql.ts'
import { outsideRequest } from '../lib/request-work.ts'
import { databaseOutageOf } from '../lib/database-outage.ts'
import { recordRefund } from '../metrics/instruments.ts'
import { publishWebhookEventSoon, tellWebhooks } from '../lib/webhooks.ts'

/**
 * Units move only here, each time by one guarded UPDATE of the balance and the ledger entry that
 * explains it, in one transaction: for every key, unitsLeft = the sum of its ledger units.
 *
 * A call reserves its price before it is handled (a `charge` entry, pending), and resolves exactly
 * once: committed when it succeeded, refunded (a `refund` entry) when it was rejected or timed out,
 * voided by the sweeper when a crashed process left it pending. Resolution is a guarded UPDATE of
 * the pending entry, so two resolvers can never both win.
 *
 * These statements run on every metered call, so they are plain SQL (a CQL statement costs several
 * times more to prepare than to run); they work unchanged on SQLite and PostgreSQL.
 */

/**
 * The statements, built once from the model's table names and the generated enums. Every guard of
 * the reservation (secret, version, status, validity, balance) is in its WHERE clause, so a refused
 * reservation changes nothing.
 */
function buildStatements() {
  const keys = tableOf(ApiKeys)
  const entries = tableOf(LedgerEntries)
  const { active } = ApiKey.status
  const { charge, lease } = LedgerEntryKind
  const { pending, closed } = LedgerEntry.state
  return {
    reserve:
      `UPDATE ${keys} SET unitsLeft = unitsLeft - ?, lastUsedAt = ? WHERE ID = ? AND secretHash = ? AND version = ? AND status = '${active}' AND validUntil > ? AND unitsLeft >= ?`,
    key: `SELECT secretHash AS "secretHash", status AS "status", validUntil AS "validUntil", unitsLeft AS "unitsLeft", version AS "version" FROM ${keys} WHERE ID = ?`,
    unitsLeft: `SELECT unitsLeft AS "unitsLeft" FROM ${keys} WHERE ID = ?`,
    addUnits: `UPDATE ${keys} SET unitsLeft = unitsLeft + ? WHERE ID = ?`,
    entry:
      `INSERT INTO ${entries} (ID, apiKey_ID, kind, units, state, routeClass, route, requestId, outcome, note, createdAt, resolvedAt, reference, routeFamily) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    pendingCharge:
      `SELECT apiKey_ID AS "apiKey_ID", units AS "units", routeClass AS "routeClass", route AS "route", routeFamily AS "routeFamily" FROM ${entries} WHERE requestId = ? AND kind = '${charge}' AND state = '${pending}'`,
    resolve: `UPDATE ${entries} SET state = ?, outcome = ?, resolvedAt = ? WHERE requestId = ? AND kind = '${charge}' AND state = '${pending}'`,
    settledCharge:
      `SELECT apiKey_ID AS "apiKey_ID", units AS "units", routeClass AS "routeClass", route AS "route", routeFamily AS "routeFamily", state AS "state" FROM ${entries} WHERE requestId = ? AND kind = '${charge}' AND state IN ('${pending}', '${LedgerEntry.state.committed}')`,
    resolveFrom: `UPDATE ${entries} SET state = ?, outcome = ?, resolvedAt = ? WHERE requestId = ? AND kind = '${charge}' AND state = ?`,
    stale: `SELECT requestId AS "requestId" FROM ${entries} WHERE kind = '${charge}' AND state = '${pending}' AND createdAt < ? LIMIT 500`,
    /**
     * On PostgreSQL the reservation is one statement (one round trip): the guarded UPDATE, the ledger
     * entry and the balance after it, in a data-modifying WITH. No row means nothing was reserved.
     * $10 is the entry's kind (a charge, or a lease: then the entry also says what it set aside and
     * when it was renewed); $11 the call's route family.
     */
    reserveInOne: `WITH reserved AS (
    UPDATE ${keys} SET unitsLeft = unitsLeft - $1::bigint, lastUsedAt = $2
    WHERE ID = $3 AND secretHash = $4 AND version = $9 AND status = '${active}' AND validUntil > $2 AND unitsLeft >= $1::bigint
    RETURNING unitsLeft
  ), entry AS (
    INSERT INTO ${entries} (ID, apiKey_ID, kind, units, state, routeClass, route, routeFamily, requestId, createdAt, leased, renewedAt)
    SELECT $5, $3, $10::varchar, -$1::bigint, '${pending}', $6, $7, $11, $8, $2,
      CASE WHEN $10::varchar = '${lease}' THEN $1::bigint END, CASE WHEN $10::varchar = '${lease}' THEN $2 END FROM reserved
  )
  SELECT unitsLeft AS "unitsLeft" FROM reserved`,
    leaseEntry:
      `INSERT INTO ${entries} (ID, apiKey_ID, kind, units, state, requestId, createdAt, leased, renewedAt) VALUES (?, ?, '${lease}', ?, '${pending}', ?, ?, ?, ?)`,
    /** Draws the units of charges on an open lease that still holds them. */
    drawOnLease:
      `UPDATE ${entries} SET units = units + ?, renewedAt = ? WHERE ID = ? AND kind = '${lease}' AND state = '${pending}' AND units <= ?`,
    openLease: `SELECT apiKey_ID AS "apiKey_ID", units AS "units" FROM ${entries} WHERE ID = ? AND kind = '${lease}' AND state = '${pending}'`,
    /** Closes a lease as it was read: a concurrent draw or close changes its units or state, and this changes nothing. */
    closeLease:
      `UPDATE ${entries} SET state = '${closed}', units = 0, outcome = ?, resolvedAt = ? WHERE ID = ? AND kind = '${lease}' AND state = '${pending}' AND units = ?`,
    staleLeases: `SELECT ID AS "ID" FROM ${entries} WHERE kind = '${lease}' AND state = '${pending}' AND renewedAt < ? LIMIT 500`,
    recallLeases: `UPDATE ${entries} SET outcome = '${RECALLED}' WHERE apiKey_ID = ? AND kind = '${lease}' AND state = '${pending}' AND outcome IS NULL`,
    openLeasesOf: `SELECT COUNT(1) AS "count" FROM ${entries} WHERE apiKey_ID = ? AND kind = '${lease}' AND state = '${pending}'`,
  }
}

/** Commits of several calls with one outcome: one guarded UPDATE for `count` request ids. */
function commitMany(count: number): string {
  const placeholders = Array.from({ length: count }, () => '?').join(', ')
  return forDatabase(`UPDATE ${tableOf(LedgerEntries)} SET state = '${LedgerEntry.state.committed}', outcome = ?, resolvedAt = ? `
    + `WHERE kind = '${LedgerEntryKind.charge}' AND state = '${LedgerEntry.state.pending}' AND requestId IN (${placeholders})`)
}

type Statements = ReturnType<typeof buildStatements>
type Statement = Exclude<keyof Statements, 'reserveInOne'>
let prepared: Statements | undefined

/** The statements as the database in use expects them, prepared once (the one-statement reservation is PostgreSQL's own). */
function statement(name: keyof Statements): string {
  prepared ??= Object.fromEntries(Object.entries(buildStatements()).map(([key, text]) => [key, key === 'reserveInOne' ? text : forDatabase(text)])) as Statements
  return prepared[name]
}

const run = (tx: Transaction, name: Statement, values: unknown[]) => tx.run(statement(name), values)
const changed = (result: unknown) => rowsChanged(result) === 1

interface Call {
  keyId: string
  secretHash: string
  /** The key's version the caller was authenticated against: a key changed since then is not reserved on. */
  version: number
  units: number
  routeClass: string
  route: string
  /** The route family (a service's path) of the call: usage is counted by it. */
  routeFamily: string
  requestId: string
}

type Reservation =
  | { ok: true; unitsLeft: number }
  | { ok: false; reason: 'insufficient'; unitsLeft: number }
  | { ok: false; reason: 'invalid' | 'expired' | 'stale' }

export async function reserve(call: Call): Promise<Reservation> {
  return reserveAs(LedgerEntryKind.charge, call)
}

/**
 * Takes a lease of `units` on the key, guarded as a reservation is. The lease's entry ID is
 * `requestId`; its units are the key's until they are drawn (drawOnLease) or given back (closeLease).
 */
export async function takeLease(lease: { keyId: string; secretHash: string; version: number; units: number; requestId: string }): Promise<Reservation> {
  return reserveAs(LedgerEntryKind.lease, { ...lease, routeClass: '', route: '', routeFamily: '' })
}

async function reserveAs(kind: string, call: Call): Promise<Reservation> {
  const isLease = kind === LedgerEntryKind.lease
  return cds.tx(async tx => {
    const now = new Date().toISOString()
    const id = isLease ? call.requestId : cds.utils.uuid()
    let unitsLeft: number
    if (isPostgres()) {
      const [reserved] = await tx.run(statement('reserveInOne'), [call.units, now, call.keyId, call.secretHash, id, call.routeClass || null, call.route || null, call.requestId, call.version, kind, call.routeFamily || null])
      if (!reserved) return diagnose(tx, call, now)
      unitsLeft = Number(reserved.unitsLeft)
    } else {
      const reserved = await run(tx, 'reserve', [call.units, now, call.keyId, call.secretHash, call.version, now, call.units])
      if (!changed(reserved)) return diagnose(tx, call, now)
      if (isLease) await run(tx, 'leaseEntry', [id, call.keyId, -call.units, call.requestId, now, call.units, now])
      else await run(tx, 'entry', [id, call.keyId, LedgerEntryKind.charge, -call.units, LedgerEntry.state.pending, call.routeClass, call.route, call.requestId, null, null, now, null, null, call.routeFamily])
      unitsLeft = await unitsLeftOf(tx, call.keyId)
    }
    // In this transaction: a threshold crossed is delivered only if the charge commits.
    if (call.units > 0) await tellWebhooks('unitsTaken', { key: call.keyId, before: unitsLeft + call.units, after: unitsLeft })
    return { ok: true as const, unitsLeft }
  })
}

/** Why a reservation was refused: the key is gone, rotated, revoked or expired, changed since it was read, or units are short. */
async function diagnose(tx: Transaction, call: Call, now: string): Promise<Reservation> {
  const [key] = await run(tx, 'key', [call.keyId])
  if (!key || key.secretHash !== call.secretHash) return { ok: false, reason: 'invalid' }
  // A key changed since it was read (suspended or moved to another plan, say) is read again, and the key check says why.
  if (Number(key.version) !== call.version) return { ok: false, reason: 'stale' }
  if (key.status !== ApiKey.status.active) return { ok: false, reason: 'invalid' }
  if (new Date(key.validUntil).toISOString() <= now) return { ok: false, reason: 'expired' }
  return { ok: false, reason: 'insufficient', unitsLeft: Number(key.unitsLeft) }
}

/** The call succeeded: its charge stands. Answers false when it was already resolved. */
export async function commit(requestId: string, outcome: string): Promise<boolean> {
  return cds.tx(async tx => changed(await run(tx, 'resolve', [LedgerEntry.state.committed, outcome, new Date().toISOString(), requestId])))
}

const COMMIT_BATCH_MS = 5
const COMMIT_BATCH_SIZE = 200
/** Waits before each further attempt at commits the database did not take (away, or its pool exhausted). */
const COMMIT_RETRY_DELAYS_MS = [500, 1000, 2000, 4000, 8000, 16000, 32000]
let batch: { requestId: string; outcome: string; attempts: number }[] = []
let flushing: NodeJS.Timeout | undefined

/**
 * Commits a succeeded call with others of the next few milliseconds, in one guarded UPDATE per
 * outcome. Should the process die before the batch is written, those charges are still pending and
 * the sweeper voids them: a crash can only give units back, never take them twice.
 */
export function commitSoon(requestId: string, outcome: string) {
  batch.push({ requestId, outcome, attempts: 0 })
  if (batch.length >= COMMIT_BATCH_SIZE) flushCommits()
  else flushing ??= outsideRequest(() => setTimeout(flushCommits, COMMIT_BATCH_MS))
}

/** Writes the waiting commits now (also when the server shuts down). */
export async function flushCommits(): Promise<void> {
  if (flushing) clearTimeout(flushing)
  flushing = undefined
  const due = batch
  batch = []
  if (!due.length) return
  const byOutcome = new Map<string, string[]>()
  for (const { requestId, outcome } of due) byOutcome.set(outcome, [...(byOutcome.get(outcome) ?? []), requestId])
  try {
    await cds.tx(async tx => {
      const now = new Date().toISOString()
      for (const [outcome, ids] of byOutcome) await tx.run(commitMany(ids.length), [outcome, now, ...ids])
    })
  } catch (error) {
    commitLater(due, error)
  }
}

/**
 * Commits the database did not take go back into the batch and are tried again a little later,
 * so a served call stays charged through a short outage or a burst on the pool; after the last
 * attempt they stay pending and the sweeper voids them (the caller keeps the units, never pays twice).
 */
function commitLater(due: typeof batch, error: unknown) {
  // Only the database's absence passes; any other failure would fail again.
  const passing = databaseOutageOf(error) !== undefined
  const again = passing ? due.filter(entry => entry.attempts < COMMIT_RETRY_DELAYS_MS.length) : []
  const first = again.length === due.length && due.every(entry => entry.attempts === 0)
  if (again.length < due.length) cds.log('gateway').error(`could not commit ${due.length - again.length} charges${passing ? ` after ${COMMIT_RETRY_DELAYS_MS.length + 1} attempts` : ''}; they stay pending and the sweeper voids them`, error)
  else if (first) cds.log('gateway').warn(`could not commit ${due.length} charges at once (${(error as Error)?.message}); trying again`)
  if (!again.length) return
  const delay = COMMIT_RETRY_DELAYS_MS[Math.min(...again.map(entry => entry.attempts))]
  for (const entry of again) entry.attempts++
  outsideRequest(() => setTimeout(() => {
    batch.push(...again)
    flushing ??= setTimeout(flushCommits, COMMIT_BATCH_MS)
  }, delay)).unref?.()
}

/**
 * The call was rejected, timed out, or was left behind: its units go back. Answers the key's
 * units left after the refund, or undefined when the charge was already resolved.
 */
export async function refund(requestId: string, outcome: string): Promise<number | undefined> {
  return cds.tx(async tx => {
    const now = new Date().toISOString()
    const [charge] = await run(tx, 'pendingCharge', [requestId])
    if (!charge) return undefined
    if (!changed(await run(tx, 'resolve', [LedgerEntry.state.refunded, outcome, now, requestId]))) return undefined
    const units = -Number(charge.units)
    await run(tx, 'addUnits', [units, charge.apiKey_ID])
    await run(tx, 'entry', [cds.utils.uuid(), charge.apiKey_ID, LedgerEntryKind.refund, units, LedgerEntry.state.posted, charge.routeClass, charge.route, requestId, outcome, null, now, now, null, charge.routeFamily])
    return unitsLeftOf(tx, charge.apiKey_ID)
  })
}

/**
 * Work a call started failed later, for a reason that was not the caller's (an asynchronous job):
 * its charge is refunded, whether it is still pending or already committed. Exactly once: the
 * charge moves to refunded by a guarded UPDATE from the state it was read in. Answers the key's
 * units left after the refund, or undefined when there was no charge to refund.
 */
export async function refundLater(requestId: string, outcome: string): Promise<number | undefined> {
  let refunded: { routeClass: string; units: number } | undefined
  const unitsLeft = await cds.tx(async tx => {
    const now = new Date().toISOString()
    const [charge] = await run(tx, 'settledCharge', [requestId])
    if (!charge) return undefined
    if (!changed(await run(tx, 'resolveFrom', [LedgerEntry.state.refunded, outcome, now, requestId, charge.state]))) return undefined
    const units = -Number(charge.units)
    await run(tx, 'addUnits', [units, charge.apiKey_ID])
    await run(tx, 'entry', [cds.utils.uuid(), charge.apiKey_ID, LedgerEntryKind.refund, units, LedgerEntry.state.posted, charge.routeClass, charge.route, requestId, outcome, null, now, now, null, charge.routeFamily])
    refunded = { routeClass: charge.routeClass, units }
    return unitsLeftOf(tx, charge.apiKey_ID)
  })
  // Counted once committed.
  if (refunded) recordRefund(refunded.routeClass, 'job', refunded.units)
  return unitsLeft
}

/** Adds units to a key (top-up, operator credit). Answers the units left after. */
export async function credit(keyId: string, units: number, note: string, reference?: string): Promise<number> {
  return cds.tx(tx => creditInTransaction(tx, keyId, units, note, reference))
}

/**
 * The same credit inside the caller's transaction, so it commits (or not) with what it pays for.
 * A second credit with the same reference fails on the ledger's unique (kind, reference).
 */
export async function creditInTransaction(tx: Transaction, keyId: string, units: number, note: string, reference?: string): Promise<number> {
  if (!Number.isInteger(units) || units <= 0) throw new Error(`a credit must be a positive whole number of units, got ${units}`)
  const now = new Date().toISOString()
  if (!changed(await run(tx, 'addUnits', [units, keyId]))) throw new Error(`no key ${keyId}`)
  await run(tx, 'entry', [cds.utils.uuid(), keyId, LedgerEntryKind.credit, units, LedgerEntry.state.posted, null, null, null, null, note, now, now, reference ?? null, null])
  return unitsLeftOf(tx, keyId)
}

/** Voids charges a crashed process left pending longer than `olderThanSeconds` (webhooks hear how many). Answers how many. */
export async function sweep(olderThanSeconds: number): Promise<number> {
  const cutoff = new Date(Date.now() - olderThanSeconds * 1000).toISOString()
  const stale: { requestId: string }[] = await cds.tx(tx => run(tx, 'stale', [cutoff]))
  let voided = 0
  for (const { requestId } of stale) if ((await refund(requestId, 'voided')) !== undefined) voided++
  if (voided) publishWebhookEventSoon('reservations.swept', { kind: 'reservations', voided, olderThanSeconds })
  return voided
}

/** A call served on a lease: its charge, written when the lease is drawn on. */
export interface DrawnCharge {
  units: number
  routeClass: string
  route: string
  routeFamily: string
  requestId: string
  outcome: string
  /** When the call was answered. */
  at: string
}

/** Rows per INSERT of drawn charges (each row takes 14 parameters). */
const DRAWN_ROWS_PER_INSERT = 100

/** The charges served on one lease since its last write. */
export interface LeaseDraw {
  leaseId: string
  keyId: string
  charges: DrawnCharge[]
}

/**
 * Writes the charges served on leases, all in one transaction: per lease, their units move from the
 * open lease to committed charge entries. A lease no longer open (voided, or closed by a change of
 * its key) takes nothing: its unspent units went back to the key with it, so those calls cost
 * nothing, and nothing is charged twice. Answers the leases that were no longer open.
 */
export async function drawOnLeases(draws: LeaseDraw[]): Promise<Set<string>> {
  return cds.tx(async tx => {
    const now = new Date().toISOString()
    const closed = new Set<string>()
    const rows: unknown[][] = []
    for (const { leaseId, keyId, charges } of draws) {
      const units = charges.reduce((sum, charge) => sum + charge.units, 0)
      if (!changed(await run(tx, 'drawOnLease', [units, now, leaseId, -units]))) {
        closed.add(leaseId)
        continue
      }
      for (const charge of charges) {
        rows.push([cds.utils.uuid(), keyId, LedgerEntryKind.charge, -charge.units, LedgerEntry.state.committed, charge.routeClass, charge.route, charge.requestId, charge.outcome, `lease ${leaseId}`, charge.at, now, null, charge.routeFamily])
      }
    }
    for (let start = 0; start < rows.length; start += DRAWN_ROWS_PER_INSERT) {
      const chunk = rows.slice(start, start + DRAWN_ROWS_PER_INSERT)
      await tx.run(insertEntries(chunk.length), chunk.flat())
    }
    return closed
  })
}

/** The same for one lease: answers false, writing nothing, when it is no longer open. */
export async function drawOnLease(leaseId: string, keyId: string, charges: DrawnCharge[]): Promise<boolean> {
  return (await drawOnLeases([{ leaseId, keyId, charges }])).size === 0
}

function insertEntries(rows: number): string {
  const row = `(${Array.from({ length: 14 }, () => '?').join(', ')})`
  return forDatabase(`INSERT INTO ${tableOf(LedgerEntries)} (ID, apiKey_ID, kind, units, state, routeClass, route, requestId, outcome, note, createdAt, resolvedAt, reference, routeFamily) VALUES `
    + Array.from({ length: rows }, () => row).join(', '))
}

/**
 * Closes an open lease and gives its unspent units back to the key, exactly once: the close is
 * guarded on the units as read, so a draw or another close in between makes it change nothing
 * (it is read and tried again). Answers the units given back, or undefined when the lease was not open.
 */
export async function closeLease(leaseId: string, outcome: string): Promise<number | undefined> {
  for (;;) {
    const closed = await cds.tx(async tx => {
      const [lease] = await run(tx, 'openLease', [leaseId])
      if (!lease) return { done: true, units: undefined }
      const unspent = -Number(lease.units)
      if (!changed(await run(tx, 'closeLease', [outcome, new Date().toISOString(), leaseId, lease.units]))) return { done: false, units: undefined }
      if (unspent) await run(tx, 'addUnits', [unspent, lease.apiKey_ID])
      return { done: true, units: unspent }
    })
    if (closed.done) return closed.units
  }
}

/** Keeps leases this instance holds from being voided. */
export async function renewLeases(leaseIds: string[]): Promise<void> {
  if (!leaseIds.length) return
  await cds.tx(tx => tx.run(forDatabase(`UPDATE ${tableOf(LedgerEntries)} SET renewedAt = ? WHERE kind = '${LedgerEntryKind.lease}' AND state = '${LedgerEntry.state.pending}' AND ID IN (${placeholders(leaseIds.length)})`), [new Date().toISOString(), ...leaseIds]))
}

/** What changed about leased keys and their leases: each key's version, status and validity; each lease's state and whether it was recalled. */
export async function leaseChecks(keyIds: string[], leaseIds: string[]) {
  return cds.tx(async tx => {
    const keys: { ID: string; version: number | string; status: string; validUntil: string }[] = await tx.run(
      forDatabase(`SELECT ID AS "ID", version AS "version", status AS "status", validUntil AS "validUntil" FROM ${tableOf(ApiKeys)} WHERE ID IN (${placeholders(keyIds.length)})`), keyIds)
    const leases: { ID: string; state: string; outcome: string | null }[] = await tx.run(
      forDatabase(`SELECT ID AS "ID", state AS "state", outcome AS "outcome" FROM ${tableOf(LedgerEntries)} WHERE ID IN (${placeholders(leaseIds.length)})`), leaseIds)
    return { keys, leases }
  })
}

/** A lease its holder is asked to hand back (another instance needs the key's units). */
export const RECALLED = 'recalled'

/** Asks the holders of the key's open leases to hand them back. Answers how many leases are open. */
export async function recallLeases(keyId: string): Promise<number> {
  return cds.tx(async tx => {
    await run(tx, 'recallLeases', [keyId])
    const [open] = await run(tx, 'openLeasesOf', [keyId])
    return Number(open?.count ?? 0)
  })
}

/** Voids leases whose holder stopped renewing them (it crashed): their unspent units go back to their keys (webhooks hear how many). Answers how many. */
export async function sweepLeases(olderThanSeconds: number): Promise<number> {
  const cutoff = new Date(Date.now() - olderThanSeconds * 1000).toISOString()
  const stale: { ID: string }[] = await cds.tx(tx => run(tx, 'staleLeases', [cutoff]))
  let voided = 0
  for (const { ID } of stale) if ((await closeLease(ID, 'voided')) !== undefined) voided++
  if (voided) publishWebhookEventSoon('reservations.swept', { kind: 'leases', voided, olderThanSeconds })
  return voided
}

/**
 * The units each key's open leases hold undrawn: still the key's, so shown with its balance. For
 * these keys, or (none named) for every key with an open lease.
 */
export async function undrawnLeased(keyIds?: string[]): Promise<Map<string, number>> {
  if (keyIds && !keyIds.length) return new Map()
  const ofKeys = keyIds ? ` AND apiKey_ID IN (${placeholders(keyIds.length)})` : ''
  // In the caller's transaction when there is one (a second one inside it would wait for it on SQLite).
  const rows: { apiKey_ID: string; units: number | string }[] = await cds.run(forDatabase(
    `SELECT apiKey_ID AS "apiKey_ID", SUM(units) AS "units" FROM ${tableOf(LedgerEntries)} WHERE kind = '${LedgerEntryKind.lease}' AND state = '${LedgerEntry.state.pending}'${ofKeys} GROUP BY apiKey_ID`), keyIds ?? [])
  return new Map(rows.map(row => [row.apiKey_ID, -Number(row.units)]))
}

const placeholders = (count: number) => Array.from({ length: count }, () => '?').join(', ')

async function unitsLeftOf(tx: Transaction, keyId: string): Promise<number> {
  const [key] = await run(tx, 'unitsLeft', [keyId])
  return Number(key?.unitsLeft ?? 0)
}
