import cds from '@sap/cds'
import { Purchase, Purchases, SignInChallenges, WalletSessions } from '#cds-models/gateway'

/**
 * What the key lanes leave behind once it answers nothing any more: quotes never paid (or whose
 * payment the chain refused) a day after they expired, sign-in challenges once expired, sessions a
 * day after they ended. Paid purchases stay: they are the receipts of the credits.
 */

const { DELETE } = cds.ql
const DAY_MS = 86_400_000
export const LANE_CLEANUP_INTERVAL_MS = 3_600_000

export async function forgetExpiredLaneRecords(now = Date.now()): Promise<void> {
  const dayAgo = new Date(now - DAY_MS).toISOString()
  await DELETE.from(Purchases).where({ status: { in: [Purchase.status.quoted, Purchase.status.rejected] }, expiresAt: { '<': dayAgo } })
  await DELETE.from(SignInChallenges).where({ expiresAt: { '<': new Date(now).toISOString() } })
  await DELETE.from(WalletSessions).where({ expiresAt: { '<': dayAgo } })
}
