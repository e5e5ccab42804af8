import cds from '@sap/cds'
import { Purchase, Purchases, SignInChallenges, WalletSessions } from '#cds-models/gateway'

/**
 * What the key lanes leave behind once it answers nothing any more: purchases whose payment the
 * chain refused (and rows of quotes stored before quotes were kept by their buyers) a day after
 * the quote expired, sign-in challenges once expired, sessions a day after they ended. Purchases
 * with a payment in flight or credited stay: the latter are the receipts of the credits. Quotes
 * themselves are never stored.
 */

const { DELETE } = cds.ql
const DAY_MS = 86_400_000
export const LANE_CLEANUP_INTERVAL_MS = 3_600_000
const { claimed, submitted, credited } = Purchase.status

export async function forgetExpiredLaneRecords(now = Date.now()): Promise<void> {
  const dayAgo = new Date(now - DAY_MS).toISOString()
  await DELETE.from(Purchases).where({ status: { 'not in': [claimed, submitted, credited] }, expiresAt: { '<': dayAgo } })
  await DELETE.from(SignInChallenges).where({ expiresAt: { '<': new Date(now).toISOString() } })
  await DELETE.from(WalletSessions).where({ expiresAt: { '<': dayAgo } })
}
