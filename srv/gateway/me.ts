import cds from '@sap/cds'
import { ApiKey, ApiKeys, LedgerEntries } from '#cds-models/gateway'
import { revokeKey, rotateKey, type KeyRecord } from './accounts.ts'
import { INVALID_KEY } from './key-check.ts'
import { ok, refusal, UNITS_LEFT, type Answer } from './answers.ts'
import { LedgerEntryKind } from './ledger-kinds.ts'
import { deliverKey } from './key-delivery.ts'
import { undrawnLeased } from './ledger.ts'

/**
 * What a key's holder sees and does about the key itself: /me (the account), /me/ledger (its
 * ledger, newest first, paged by cursor), /me/rotate (a new secret; units and ledger stay),
 * /me/revoke (the key and both grants), /me/usage (units used and credited per UTC day). The key
 * was read fresh from the database for each.
 */

const { SELECT } = cds.ql
const LAST_CALLS = 10
const PAGE_DEFAULT = 50
const PAGE_MAX = 200
const USAGE_DAYS_DEFAULT = 30
const USAGE_DAYS_MAX = 366
const DAY_MS = 86_400_000

export async function account(key: KeyRecord): Promise<Answer> {
  const body = await cds.tx(async () => {
    const row = await SELECT.one.from(ApiKeys)
      .columns('ID', 'hint', 'plan_name', 'unitsLeft', 'validUntil', 'status', 'boundAddress', 'label', 'createdAt', 'rotatedAt', 'lastUsedAt')
      .where({ ID: key.ID })
    const lastCalls = await SELECT.from(LedgerEntries)
      .columns('createdAt', 'route', 'routeClass', 'units', 'state', 'outcome')
      .where({ apiKey_ID: key.ID, kind: LedgerEntryKind.charge })
      .orderBy('createdAt desc')
      .limit(LAST_CALLS)
    if (!row) return undefined
    // Units leased by instances and not yet drawn are still the key's.
    const leased = (await undrawnLeased([key.ID])).get(key.ID) ?? 0
    return {
      id: row.ID, hint: row.hint, plan: row.plan_name, unitsLeft: Number(row.unitsLeft) + leased, validUntil: row.validUntil, status: row.status,
      boundAddress: row.boundAddress, label: row.label, createdAt: row.createdAt, rotatedAt: row.rotatedAt, lastUsedAt: row.lastUsedAt,
      lastCalls: lastCalls.map(call => ({ at: call.createdAt, route: call.route, routeClass: call.routeClass, units: -Number(call.units), state: call.state, outcome: call.outcome })),
    }
  })
  return body ? ok(body, { [UNITS_LEFT]: body.unitsLeft }) : INVALID_KEY
}

export async function ledgerPage(key: KeyRecord, query: URLSearchParams): Promise<Answer> {
  const limit = Number(query.get('limit') ?? PAGE_DEFAULT)
  if (!Number.isInteger(limit) || limit < 1 || limit > PAGE_MAX) return refusal(400, 'INVALID_LIMIT', `limit must be a whole number from 1 to ${PAGE_MAX}`)
  const cursor = query.get('before')
  const before = cursor ? decodeCursor(cursor) : undefined
  if (cursor && !before) return refusal(400, 'INVALID_CURSOR', 'before must be a cursor from a previous page (next)')
  const page = await cds.tx(() => {
    const select = SELECT.from(LedgerEntries)
      .columns('ID', 'kind', 'units', 'state', 'routeClass', 'route', 'requestId', 'outcome', 'note', 'reference', 'createdAt', 'resolvedAt')
      .where({ apiKey_ID: key.ID })
      .orderBy('createdAt desc', 'ID desc')
      .limit(limit + 1)
    return before ? select.where`(createdAt < ${before.at} or (createdAt = ${before.at} and ID < ${before.id}))` : select
  })
  const entries = page.slice(0, limit).map(entry => ({ ...entry, units: Number(entry.units) }))
  const last = entries[entries.length - 1]
  return ok({ value: entries, next: page.length > limit ? encodeCursor(last.createdAt!, last.ID!) : null })
}

export async function rotate(key: KeyRecord): Promise<Answer> {
  const rotated = await rotateKey(key.ID, key.secretHash)
  return rotated ? ok(deliverKey({ id: rotated.id, key: rotated.key, plan: key.plan_name ?? undefined, unitsLeft: key.unitsLeft, validUntil: key.validUntil })) : INVALID_KEY
}

export async function revoke(key: KeyRecord): Promise<Answer> {
  const revoked = await revokeKey(key.ID, key.secretHash)
  return revoked ? ok({ id: key.ID, status: ApiKey.status.revoked }) : INVALID_KEY
}

const encodeCursor = (at: string, id: string) => Buffer.from(`${at}|${id}`).toString('base64url')

const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z)\|([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i

/** A cursor is exactly what encodeCursor wrote: an ISO timestamp and a ledger entry id. */
function decodeCursor(cursor: string): { at: string; id: string } | undefined {
  const match = CURSOR.exec(Buffer.from(cursor, 'base64url').toString())
  return match && !Number.isNaN(Date.parse(match[1])) ? { at: match[1], id: match[2] } : undefined
}

/**
 * Units used (charges not refunded) and credited per UTC day over the last `days` days, today
 * included, oldest first, every day present: what a usage chart draws. Summed by the database.
 */
export async function usage(key: KeyRecord, query: URLSearchParams): Promise<Answer> {
  const days = Number(query.get('days') ?? USAGE_DAYS_DEFAULT)
  if (!Number.isInteger(days) || days < 1 || days > USAGE_DAYS_MAX) return refusal(400, 'INVALID_DAYS', `days must be a whole number from 1 to ${USAGE_DAYS_MAX}`)
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate())
  const since = new Date(today - (days - 1) * DAY_MS).toISOString()
  type DayRow = { y: number | string; m: number | string; d: number | string; kind: string; units: number | string; entries: number | string }
  const rows = await cds.tx(() =>
    SELECT.from(LedgerEntries)
      .columns('year(createdAt) as y', 'month(createdAt) as m', 'day(createdAt) as d', 'kind', 'sum(units) as units', 'count(1) as entries')
      // Charges standing or still pending (their units are off the balance already, as the units left say: a
      // call's charge is written committed a moment after its answer) and posted credits. A refunded charge
      // is no longer a charge; its refund entry is not a credit.
      .where({ apiKey_ID: key.ID, createdAt: { '>=': since }, kind: { in: [LedgerEntryKind.charge, LedgerEntryKind.credit] }, state: { in: ['pending', 'committed', 'posted'] } })
      .groupBy('year(createdAt)', 'month(createdAt)', 'day(createdAt)', 'kind')) as unknown as DayRow[]
  const byDay = new Map<string, { day: string; used: number; credited: number; calls: number }>()
  for (let at = today - (days - 1) * DAY_MS; at <= today; at += DAY_MS) {
    const day = new Date(at).toISOString().slice(0, 10)
    byDay.set(day, { day, used: 0, credited: 0, calls: 0 })
  }
  for (const row of rows) {
    const day = byDay.get(`${row.y}-${String(row.m).padStart(2, '0')}-${String(row.d).padStart(2, '0')}`)
    if (!day) continue
    if (row.kind === LedgerEntryKind.credit) {
      day.credited += Number(row.units)
    } else {
      day.used += -Number(row.units)
      day.calls += Number(row.entries)
    }
  }
  return ok({ days: [...byDay.values()] })
}
