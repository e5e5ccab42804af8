import type { KeyRecord } from './accounts.ts'
import { ok, type Answer } from './answers.ts'
import { account, ledgerPage, revoke, rotate } from './me.ts'
import { priceList } from './prices.ts'

/**
 * The gateway's own routes, all free of charge. Each entry is the whole route: the classifier
 * answers other methods 405, a `key` route reads the caller's key fresh from the database (what a
 * key may do about itself never rests on a cached copy) and takes from its rate bucket, and every
 * answer carries the units headers. Adding a route is adding an entry here.
 */

export interface OwnCall {
  query: URLSearchParams
}

export interface KeyedCall extends OwnCall {
  key: KeyRecord
}

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

export type OwnRoute = PublicRoute | KeyedRoute

export const OWN_ROUTES: readonly OwnRoute[] = [
  { path: '/me', method: 'GET', access: 'key', answer: ({ key }) => account(key) },
  { path: '/me/ledger', method: 'GET', access: 'key', answer: ({ key, query }) => ledgerPage(key, query) },
  { path: '/me/rotate', method: 'POST', access: 'key', answer: ({ key }) => rotate(key), changesKey: true },
  { path: '/me/revoke', method: 'POST', access: 'key', answer: ({ key }) => revoke(key), changesKey: true },
  { path: '/prices', method: 'GET', access: 'public', answer: async () => ok(await priceList()) },
  { path: '/health', method: 'GET', access: 'public' },
  { path: '/zk-config', method: 'GET', access: 'public', prefix: true },
]
