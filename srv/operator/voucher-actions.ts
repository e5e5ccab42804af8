import { ApiError } from '../lib/errors.ts'
import * as vouchers from '../key-lanes/vouchers.ts'
import { csvCell } from './exports.ts'
import { currentActor as actor, recordAction } from './audit.ts'

/**
 * What an operator does to vouchers, for the operator service and the command line alike: in the
 * caller's transaction, audited (the codes never: they are answered once and stored only as hashes).
 */

export type VoucherRequest = Parameters<typeof vouchers.createVouchersInTransaction>[0]

/** Creates a batch of codes (answered this once); the audit records the vouchers without their codes. */
export async function createVouchers(request: VoucherRequest, reason: string | null = null): Promise<vouchers.CreatedVoucher[]> {
  const created = await vouchers.createVouchersInTransaction(request)
  const after = { ids: created.map(voucher => voucher.id), units: request.units, uses: request.uses ?? 1, expiresAt: created[0].expiresAt, label: created[0].label }
  await recordAction({ actor: actor(), action: 'voucher.create', target: `vouchers:${created.length}`, before: null, after, reason })
  return created
}

/** Revokes a voucher (its code no longer redeems), audited with the voucher before and after. */
export async function revokeVoucher(id: string, reason: string | null) {
  const before = await vouchers.voucherView(id)
  if (!(await vouchers.revokeVoucherInTransaction(id))) throw new ApiError(409, 'VOUCHER_STATE_CONFLICT', `The voucher was revoked at ${before.revokedAt}: it no longer redeems`)
  const after = await vouchers.voucherView(id)
  await recordAction({ actor: actor(), action: 'voucher.revoke', target: `voucher:${id}`, before, after, reason })
  return after
}

/** The codes of a batch as CSV (id, code, units, uses, expiry, label), written as the exports write it: for the operator to hand out, given this once. */
export function vouchersCsv(created: vouchers.CreatedVoucher[]): string {
  const rows = created.map(voucher => [csvCell(voucher.id), csvCell(voucher.code), csvCell(voucher.units), csvCell(voucher.uses), csvCell(voucher.expiresAt), csvCell(voucher.label, true)].join(','))
  return ['id,code,units,uses,expiresAt,label', ...rows].join('\r\n') + '\r\n'
}
