import cds from '@sap/cds'
import { gatewayConfig } from '../gateway/config.ts'
import { addOwnRoutes, type OwnRoute } from '../gateway/own-routes.ts'
import { scheduleJob } from '../lib/scheduled-job.ts'
import { laneConfig } from './config.ts'
import { forgetExpiredLaneRecords, LANE_CLEANUP_INTERVAL_MS } from './lane-records.ts'
import { sweepPurchases } from './purchase-sweeper.ts'
import { buyKey, topUp } from './purchases.ts'
import { redeemVoucher } from './vouchers.ts'
import { walletChallenge, walletKeys, walletRevokeKey, walletRotateKey, walletSignOut, walletVerify } from './wallet-sign-in.ts'

/**
 * The key lanes (x402 purchase, vouchers, wallet sign-in): their routes among the hosted gateway's
 * own routes, and their background work (forgetting expired records, settling purchases their
 * buyers left) once the services are served, where the gateway is on. Their settings are read at
 * once, in every profile, so that a missing production secret refuses the start.
 */

const KEY_LANE_ROUTES: readonly OwnRoute[] = [
  // The purchase lane (x402 over ADA on chain A)
  { path: '/keys', method: 'POST', access: 'public', answer: buyKey },
  { path: '/topup', method: 'POST', access: 'key', answer: topUp },
  // The code lane
  { path: '/vouchers/redeem', method: 'POST', access: 'key-optional', answer: redeemVoucher },
  // The wallet lane (CIP-30 signData); the key routes take a sign-in session, not a key
  { path: '/auth/challenge', method: 'POST', access: 'public', answer: walletChallenge },
  { path: '/auth/verify', method: 'POST', access: 'public', answer: walletVerify },
  { path: '/auth/keys', method: 'GET', access: 'public', answer: walletKeys },
  { path: '/auth/keys/rotate', method: 'POST', access: 'public', answer: walletRotateKey },
  { path: '/auth/keys/revoke', method: 'POST', access: 'public', answer: walletRevokeKey },
  { path: '/auth/sign-out', method: 'POST', access: 'public', answer: walletSignOut },
]

export function installKeyLanes(): void {
  const { purchase } = laneConfig()
  if (!gatewayConfig().enabled) return
  addOwnRoutes(KEY_LANE_ROUTES)
  cds.on('served', () => {
    scheduleJob('forgetting expired key-lane records', LANE_CLEANUP_INTERVAL_MS, () => forgetExpiredLaneRecords())
    scheduleJob('settling purchases their buyers left', purchase.sweepIntervalMs, () => sweepPurchases())
  })
}
