import cds from '@sap/cds'
import { ownRoutes } from '../gateway/own-routes.ts'
import { canonicalPath } from '../lib/route-aliases.ts'

/**
 * The route family of a request target, the label the request metrics carry: a served service's
 * path (`/odata/v4/chaina-odata`, both chain-B spellings as one), or the first segment of a route
 * the application answers itself (`/me`, `/zk-config`, `/metrics`, `/`); anything else is `other`.
 * The set is fixed by what is served, so whatever a client sends, the label takes few values.
 */

const OTHER = 'other'
/** Routes answered outside the gateway's own table (self-hosted, or added by other parts). */
const ALWAYS_KNOWN = ['/health', '/ready', '/metrics']

interface KnownRoutes {
  services: Set<string>
  firstSegments: Set<string>
}

let known: KnownRoutes | undefined
cds.on('served', () => {
  known = undefined
})

function knownRoutes(): KnownRoutes {
  if (known) return known
  const services = new Set(Object.values(cds.services).map(service => (service as { path?: string }).path).filter((path): path is string => typeof path === 'string' && path.startsWith('/')))
  const firstSegments = new Set([...ownRoutes().map(route => route.path), ...ALWAYS_KNOWN].map(path => `/${path.split('/')[1] ?? ''}`))
  return (known = { services, firstSegments })
}

export function routeFamily(target: string): string {
  const path = canonicalPath(target.split('?')[0])
  const segments = path.split('/')
  const { services, firstSegments } = knownRoutes()
  if (segments[1] === 'odata') {
    const service = segments.slice(0, 4).join('/')
    return services.has(service) ? service : OTHER
  }
  const first = `/${segments[1] ?? ''}`
  return firstSegments.has(first) ? first : OTHER
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/** The method as a label: one of the usual ones, else OTHER. */
export const methodLabel = (method: string | undefined) => (method && METHODS.has(method) ? method : OTHER)

/** 2xx, 4xx...: the class of a status code. */
export const statusClass = (status: number) => (status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : OTHER)
