import cds from '@sap/cds'
import { VoucherRedemptions, Vouchers } from '#cds-models/gateway'
import { insertKey, type KeyRecord } from '../gateway/accounts.ts'
import type { MaybeKeyedCall } from '../gateway/calls.ts'
import { ok, refusal, UNITS_LEFT, type Answer } from '../gateway/answers.ts'
import { laneConfig } from './config.ts'
import { deliverKey } from '../gateway/key-delivery.ts'
import { creditInTransaction } from '../gateway/ledger.ts'
import { FailureWindow } from '../gateway/rate-limits.ts'
import { publishWebhookEvent } from '../lib/webhooks.ts'
import { hashVoucherCode, hintOfCode, newVoucherCode, normaliseCode, parseVoucherCode } from './voucher-codes.ts'
import { badInput, notFound } from '../lib/errors.ts'
import { isUniqueViolation, runWrite, tableOf } from '../lib/plain-sql.ts'

/**
 * The code lane. The operator creates voucher codes (each shown once); whoever holds one redeems
 * it at POST /vouchers/redeem: without a key for a new key, with a key for a top-up of that key.
 * Redemption is one transaction around one guarded UPDATE of the voucher's counter, so a code is
 * never redeemed beyond its limit, whatever the concurrency and however many instances; why a
 * code did not redeem is asked only after the UPDATE found nothing.
 */

const { SELECT, INSERT, UPDATE } = cds.ql

/** The plan of a key a voucher creates. */
const VOUCHER_PLAN = 'standard'
/** Codes the operator may create at once. */
const MAX_COUNT = 10_000

interface VoucherRequest {
  units: number
  count: number
  /** Redemptions allowed (by different keys); 1 when absent. */
  uses?: number
  /** ISO timestamp after which the code no longer redeems. */
  expiresAt?: string
  label?: string
}

export interface CreatedVoucher {
  id: string
  /** The code, grouped; shown this once and never stored. */
  code: string
  units: number
  uses: number
  expiresAt: string | null
  label: string | null
}

/** Creates `count` codes worth `units` each, in one transaction. Answers the codes: the only time they are seen. */
export const createVouchers = async (request: VoucherRequest) => (await cds.tx(() => createVouchersInTransaction(request))) as CreatedVoucher[]

/** createVouchers in the caller's transaction (the operator service's request). */
export async function createVouchersInTransaction(request: VoucherRequest): Promise<CreatedVoucher[]> {
  const { units, count } = request
  const uses = request.uses ?? 1
  wholeNumber(units, 'units', 1)
  wholeNumber(count, 'count', 1, MAX_COUNT)
  wholeNumber(uses, 'uses', 1)
  const expiresAt = request.expiresAt === undefined ? null : futureTimestamp(request.expiresAt)
  const label = request.label ?? null
  const createdAt = new Date().toISOString()
  const created = Array.from({ length: count }, () => ({ id: cds.utils.uuid(), code: newVoucherCode(), units, uses, expiresAt, label }))
  await INSERT.into(Vouchers).entries(created.map(voucher => {
    const normalised = normaliseCode(voucher.code)
    return {
      ID: voucher.id, codeHash: hashVoucherCode(normalised), hint: hintOfCode(normalised), units, maxRedemptions: uses, redeemedCount: 0,
      expiresAt, label, createdAt,
    }
  }))
  return created
}

function wholeNumber(value: number, name: string, least: number, most = Number.MAX_SAFE_INTEGER) {
  if (!Number.isInteger(value) || value < least || value > most) throw badInput('INVALID_VOUCHER', `${name} must be a whole number from ${least} to ${most}, got ${value}`)
}

function futureTimestamp(text: string): string {
  const time = Date.parse(text)
  if (Number.isNaN(time)) throw badInput('INVALID_VOUCHER', `the expiry must be a date, got '${text}'`)
  if (time <= Date.now()) throw badInput('INVALID_VOUCHER', `the expiry must lie in the future, got '${text}'`)
  return new Date(time).toISOString()
}

export async function listVouchers() {
  return cds.tx(() =>
    SELECT.from(Vouchers).columns('ID', 'hint', 'units', 'maxRedemptions', 'redeemedCount', 'expiresAt', 'revokedAt', 'label', 'createdAt').orderBy('createdAt', 'ID'),
  )
}

/** A voucher as an operator sees it (never its code's hash), or a 404 VOUCHER_NOT_FOUND. */
export async function voucherView(id: string) {
  const row = await SELECT.one.from(Vouchers).columns('ID', 'hint', 'units', 'maxRedemptions', 'redeemedCount', 'expiresAt', 'revokedAt', 'label', 'createdAt').where({ ID: id })
  if (!row) throw notFound('VOUCHER_NOT_FOUND', `There is no voucher ${id}`, 'ID')
  return row
}

/** Revokes a voucher: its code no longer redeems. Answers false when there is no such voucher or it was already revoked. */
export const revokeVoucher = async (id: string) => (await cds.tx(() => revokeVoucherInTransaction(id))) as boolean

/** revokeVoucher in the caller's transaction. */
export async function revokeVoucherInTransaction(id: string): Promise<boolean> {
  return (await UPDATE.entity(Vouchers).set({ revokedAt: new Date().toISOString() }).where({ ID: id, revokedAt: null })) === 1
}

const notRedeemable = () => refusal(404, 'VOUCHER_NOT_REDEEMABLE', 'This code is unknown, used up or expired')

let failureWindow: FailureWindow | undefined
/** Failed attempts per key, or per client address when no key is presented; counted across instances. */
const failures = () => (failureWindow ??= new FailureWindow('voucher', laneConfig().voucherFailures, laneConfig().voucherFailureWindowS))

/** A code used up this recently was valid moments ago: whoever finds it used up lost a race for its last use. */
const LOST_RACE_WINDOW_MS = 60_000

/**
 * POST /vouchers/redeem `{ code }`. The code is tried first, so a redeemable code is always
 * redeemed, whatever others failed before from the same address. Unknown, used-up, revoked and
 * expired codes answer alike, and only they count as failed attempts of the caller: its key when
 * it presents one (so a key is limited only by its own failures), else its address. A mistyped
 * code is told at once and counts nothing (its check character reveals nothing about which codes
 * exist); nor does losing a race for a code's last use, nor a key redeeming a code twice. Once the
 * caller has failed the configured number of times, its further failing attempts answer 429.
 */
export async function redeemVoucher(call: MaybeKeyedCall): Promise<Answer> {
  const code = (call.body as { code?: unknown } | null | undefined)?.code
  if (typeof code !== 'string') return refusal(400, 'INVALID_CODE', 'The body must be a JSON object with the voucher code as a string: { "code": "…" }')
  const parsed = parseVoucherCode(code)
  if (!parsed.ok) return refusal(400, parsed.code, parsed.message)
  const redemption = await redeem(hashVoucherCode(parsed.normalised), call.key)
  return 'answer' in redemption ? redemption.answer : failedAttempt(call.key ? `key:${call.key.ID}` : `address:${call.client}`)
}

/** A real failure: counted, and answered 429 instead once the caller has failed too often. */
async function failedAttempt(subject: string): Promise<Answer> {
  const blockedForS = await failures().fail(subject)
  if (blockedForS !== undefined) {
    return refusal(429, 'TOO_MANY_FAILED_ATTEMPTS', `Too many failed voucher attempts; retry after ${blockedForS} s`, {}, { 'Retry-After': blockedForS })
  }
  return notRedeemable()
}

interface RedeemedVoucher {
  ID: string
  units: number
  hint: string
}

/** The answer to a redemption, or a failed attempt (an unknown, used-up, revoked or expired code). */
type Redemption = { answer: Answer } | { failed: true }

/** The transaction found the code not redeemable: nothing of it stays. */
class NotRedeemable extends Error {}

async function redeem(codeHash: string, key?: KeyRecord): Promise<Redemption> {
  try {
    const answer = await cds.tx(async tx => {
      const voucher = await takeRedemption(codeHash)
      if (!voucher) throw new NotRedeemable()
      const redemptionId = cds.utils.uuid()
      if (!key) {
        const issued = await insertKey({
          plan: VOUCHER_PLAN, units: voucher.units, label: 'voucher', note: `voucher ${voucher.hint}`, reference: `voucher:${voucher.ID}:${redemptionId}`,
        })
        await recordRedemption(redemptionId, voucher.ID, issued.id)
        await publishWebhookEvent('voucher.redeemed', { voucher: voucher.ID, hint: voucher.hint, units: voucher.units, key: issued.id, newKey: true })
        return ok(deliverKey(issued, { voucher: { id: voucher.ID, units: voucher.units } }))
      }
      await recordRedemption(redemptionId, voucher.ID, key.ID)
      const unitsLeft = await creditInTransaction(tx, key.ID, voucher.units, `voucher ${voucher.hint}`, `voucher:${voucher.ID}:${key.ID}`)
      await publishWebhookEvent('voucher.redeemed', { voucher: voucher.ID, hint: voucher.hint, units: voucher.units, key: key.ID, newKey: false, unitsLeft })
      return ok({ id: key.ID, credited: voucher.units, unitsLeft }, { [UNITS_LEFT]: unitsLeft })
    })
    return { answer }
  } catch (error) {
    if (error instanceof NotRedeemable) return whyNotRedeemed(codeHash, key)
    if (key && isUniqueViolation(error)) return { answer: alreadyRedeemed() }
    throw error
  }
}

/** Why the guarded UPDATE found nothing to redeem: the key's second try, a lost race, or a real failure. */
async function whyNotRedeemed(codeHash: string, key?: KeyRecord): Promise<Redemption> {
  if (key && await alreadyRedeemedBy(codeHash, key.ID)) return { answer: alreadyRedeemed() }
  if (await lostRace(codeHash)) return { answer: notRedeemable() }
  return { failed: true }
}

const alreadyRedeemed = () => refusal(409, 'VOUCHER_ALREADY_REDEEMED', 'This key has already redeemed this code')

/**
 * Counts one redemption of the code, if it has one left and is neither revoked nor expired: one
 * guarded UPDATE, so concurrent redeemers (in this process or another) can never exceed the limit.
 * Answers the voucher, read after the update inside the same transaction, or undefined.
 */
async function takeRedemption(codeHash: string): Promise<RedeemedVoucher | undefined> {
  const taken = await runWrite(
    `UPDATE ${tableOf(Vouchers)} SET redeemedCount = redeemedCount + 1 `
    + 'WHERE codeHash = ? AND redeemedCount < maxRedemptions AND revokedAt IS NULL AND (expiresAt IS NULL OR expiresAt > ?)',
    [codeHash, new Date().toISOString()],
  )
  if (taken !== 1) return undefined
  const voucher = await SELECT.one.from(Vouchers).columns('ID', 'units', 'hint').where({ codeHash })
  return { ID: voucher!.ID!, units: Number(voucher!.units), hint: voucher!.hint ?? '' }
}

/** The redemption row; a second one of the same key and voucher fails on their unique pair. */
async function recordRedemption(id: string, voucherId: string, keyId: string) {
  await INSERT.into(VoucherRedemptions).entries({ ID: id, voucher_ID: voucherId, apiKey_ID: keyId, redeemedAt: new Date().toISOString() })
}

/**
 * Whether the code is a valid one (known, neither revoked nor expired) whose last use went to a
 * redemption within LOST_RACE_WINDOW_MS: the caller lost a race for it, it did not try a wrong code.
 */
async function lostRace(codeHash: string): Promise<boolean> {
  const now = Date.now()
  return cds.tx(async () => {
    const voucher = await SELECT.one.from(Vouchers).columns('ID', 'revokedAt', 'expiresAt').where({ codeHash })
    if (!voucher || voucher.revokedAt || (voucher.expiresAt && Date.parse(voucher.expiresAt) <= now)) return false
    const recent = await SELECT.one.from(VoucherRedemptions).columns('ID')
      .where({ voucher_ID: voucher.ID, redeemedAt: { '>=': new Date(now - LOST_RACE_WINDOW_MS).toISOString() } })
    return !!recent
  })
}

/** Whether the key has redeemed the code with this hash before (why a code with no redemption left refuses it). */
async function alreadyRedeemedBy(codeHash: string, keyId: string): Promise<boolean> {
  return !!(await cds.tx(() => SELECT.one.from(VoucherRedemptions).columns('ID').where({ 'voucher.codeHash': codeHash, apiKey_ID: keyId })))
}
