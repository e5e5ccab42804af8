import type { KeyedCall, MaybeKeyedCall, OwnCall } from './calls.ts'
import { ok, type Answer } from './answers.ts'
import { account, ledgerPage, revoke, rotate, usage } from './me.ts'
import { priceList } from './prices.ts'
import { buyKey, topUp } from './purchases.ts'
import { redeemVoucher } from './vouchers.ts'
import { walletChallenge, walletKeys, walletRevokeKey, walletRotateKey, walletSignOut, walletVerify } from './wallet-sign-in.ts'

/**
 * The gateway's own routes, all free of charge. Each entry is the whole route: the classifier
 * answers other methods 405; a `key` route reads the caller's key fresh from the database (what a
 * key may do about itself never rests on a cached copy) and takes from its rate bucket; a
 * `key-optional` route does the same when a key is presented (a presented key must be valid); every
 * answer carries the units headers. A POST's JSON body is read and parsed by the gateway (at most
 * OWN_BODY_LIMIT bytes). Adding a route is adding an entry here.
 */

/** The largest JSON body an own route reads. */
export const OWN_BODY_LIMIT = 64 * 1024

interface PublicRoute {
  path: string
  method: 'GET' | 'POST'
  access: 'public'
  /** Absent when CAP answers the route itself (the gateway only lets it through). */
  answer?: (call: OwnCall) => Promise<Answer>
  /** The route is `path` and everything under it (`path/...`); only for routes the app answers itself. */
  prefix?: boolean
}

interface KeyedRoute {
  path: string
  method: 'GET' | 'POST'
  access: 'key'
  answer: (call: KeyedCall) => Promise<Answer>
  /** The answer changed the key (secret, status): no cached copy of it may be used again. */
  changesKey?: boolean
}

interface MaybeKeyedRoute {
  path: string
  method: 'GET' | 'POST'
  access: 'key-optional'
  answer: (call: MaybeKeyedCall) => Promise<Answer>
}

export type OwnRoute = PublicRoute | KeyedRoute | MaybeKeyedRoute

export const OWN_ROUTES: readonly OwnRoute[] = [
  { path: '/me', method: 'GET', access: 'key', answer: ({ key }) => account(key) },
  { path: '/me/ledger', method: 'GET', access: 'key', answer: ({ key, query }) => ledgerPage(key, query) },
  { path: '/me/usage', method: 'GET', access: 'key', answer: ({ key, query }) => usage(key, query) },
  { path: '/me/rotate', method: 'POST', access: 'key', answer: ({ key }) => rotate(key), changesKey: true },
  { path: '/me/revoke', method: 'POST', access: 'key', answer: ({ key }) => revoke(key), changesKey: true },
  { path: '/prices', method: 'GET', access: 'public', answer: async () => ok(await priceList()) },
  { path: '/health', method: 'GET', access: 'public' },
  { path: '/zk-config', method: 'GET', access: 'public', prefix: true },
  // The web front ends and the UI5 runtime (static files)
  { path: '/', method: 'GET', access: 'public' },
  { path: '/index.html', method: 'GET', access: 'public' },
  { path: '/portal', method: 'GET', access: 'public', prefix: true },
  { path: '/resources', method: 'GET', access: 'public', prefix: true },
  // The development wallet, served only where the chain-A devnet is embedded (404 elsewhere)
  { path: '/dev-wallet', method: 'GET', access: 'public' },
  { path: '/dev-wallet/utxos', method: 'GET', access: 'public' },
  { path: '/dev-wallet/sign-tx', method: 'POST', access: 'public' },
  { path: '/dev-wallet/sign-data', method: 'POST', access: 'public' },
  { path: '/dev-wallet/submit-tx', method: 'POST', access: 'public' },
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
