import type { KeyedCall, MaybeKeyedCall, OwnCall } from './calls.ts'
import { ok, type Answer } from './answers.ts'
import { account, ledgerPage, revoke, rotate, usage } from './me.ts'
import { priceList } from './prices.ts'

/**
 * The gateway's own routes, all free of charge. Each entry is the whole route: the classifier
 * answers other methods 405; a `key` route reads the caller's key fresh from the database (what a
 * key may do about itself never rests on a cached copy) and takes from its rate bucket; a
 * `key-optional` route does the same when a key is presented (a presented key must be valid); every
 * answer carries the units headers. A POST's JSON body is read and parsed by the gateway (at most
 * OWN_BODY_LIMIT bytes). The gateway's own entries are here; other parts of the application (the
 * key lanes) add theirs with addOwnRoutes before the gateway starts.
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
  // The probes (srv/health): liveness and readiness
  { path: '/health', method: 'GET', access: 'public' },
  { path: '/ready', method: 'GET', access: 'public' },
  { path: '/zk-config', method: 'GET', access: 'public', prefix: true },
  // Prometheus metrics: the route asks for the metrics token itself (srv/metrics/), never an API key
  { path: '/metrics', method: 'GET', access: 'public' },
  // The MCP tool servers' npm package, which the configuration printed with a key installs
  { path: '/mcp', method: 'GET', access: 'public', prefix: true },
  // The web front ends and the UI5 runtime (static files)
  { path: '/', method: 'GET', access: 'public' },
  { path: '/index.html', method: 'GET', access: 'public' },
  { path: '/portal', method: 'GET', access: 'public', prefix: true },
  // The operator console's page and files: free; its data calls need the operator's login (/odata/v4/operator)
  { path: '/console', method: 'GET', access: 'public', prefix: true },
  { path: '/resources', method: 'GET', access: 'public', prefix: true },
  // The development wallet, served only where the bootstrap embeds it (404 elsewhere)
  { path: '/dev-wallet', method: 'GET', access: 'public' },
  { path: '/dev-wallet/utxos', method: 'GET', access: 'public' },
  { path: '/dev-wallet/sign-tx', method: 'POST', access: 'public' },
  { path: '/dev-wallet/sign-data', method: 'POST', access: 'public' },
  { path: '/dev-wallet/submit-tx', method: 'POST', access: 'public' },
]

const added: OwnRoute[] = []

/** Adds routes to the gateway's own (a route added before stays as it is); another route on a path taken already is refused. */
export function addOwnRoutes(routes: readonly OwnRoute[]) {
  const fresh = routes.filter(route => !added.includes(route))
  const taken = new Set(ownRoutes().map(route => route.path))
  const twice = fresh.find(route => taken.has(route.path) || fresh.filter(other => other.path === route.path).length > 1)
  if (twice) throw new Error(`The gateway has an own route ${twice.path} already`)
  added.push(...fresh)
}

/** The gateway's own routes and those added to them. */
export const ownRoutes = (): readonly OwnRoute[] => [...OWN_ROUTES, ...added]
