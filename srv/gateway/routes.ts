import type { Product } from './keys.ts'

/**
 * What the gateway does with a normalised path: forward it metered (with its price class), forward
 * it free, answer it itself, or refuse it (closed or unknown: 403). The table is built from the
 * served model: a service is forwarded only when annotated `@gateway.product`; its entity sets
 * are read with `@gateway.reads`; its operations cost `@gateway.operations` unless an operation
 * says `@gateway.price` or is `@gateway.closed`; a service with `@gateway.free` needs no key.
 */

export type Classification =
  | { kind: 'metered'; product: Product; routeClass: string; service: string; operation: string }
  | { kind: 'free'; product?: Product }
  | { kind: 'gateway'; handler: GatewayHandler }
  | { kind: 'refused'; status: 403 | 405; code: string; message: string }

export type GatewayHandler = 'me' | 'ledger' | 'rotate' | 'revoke' | 'prices'

interface OperationRoute {
  method: 'POST' | 'GET'
  routeClass?: string
  closed: boolean
}

interface ServiceRoute {
  base: string
  service: string
  product?: Product
  free: boolean
  readsClass: string
  entitySets: Set<string>
  operations: Map<string, OperationRoute>
}

/** The gateway's own routes, and CAP's liveness route which is free. */
const GATEWAY_ROUTES: Record<string, { method: string; handler?: GatewayHandler }> = {
  '/me': { method: 'GET', handler: 'me' },
  '/me/ledger': { method: 'GET', handler: 'ledger' },
  '/me/rotate': { method: 'POST', handler: 'rotate' },
  '/me/revoke': { method: 'POST', handler: 'revoke' },
  '/prices': { method: 'GET', handler: 'prices' },
  '/health': { method: 'GET' },
}

const refused = (status: 403 | 405, code: string, message: string): Classification => ({ kind: 'refused', status, code, message })
const notForwarded = (path: string) => refused(403, 'ROUTE_NOT_FORWARDED', `The gateway does not forward ${path}`)

export class RouteTable {
  private readonly routes: ServiceRoute[]

  constructor(routes: ServiceRoute[]) {
    // Longest base first, so /odata/v4/chainb-indexer is not taken for /odata/v4/chainb.
    this.routes = [...routes].sort((a, b) => b.base.length - a.base.length)
  }

  /** Builds the table from the served services (CAP service instances with their endpoints). */
  static fromServices(services: Iterable<any>, definitions: Record<string, any>): RouteTable {
    const routes: ServiceRoute[] = []
    for (const srv of services) {
      const definition = definitions[srv.name]
      if (!definition || definition.kind !== 'service') continue
      for (const endpoint of srv.endpoints ?? []) {
        if (endpoint.kind !== 'odata' && endpoint.kind !== 'odata-v4') continue
        routes.push(serviceRoute(endpoint.path, srv.name, definition, definitions))
      }
    }
    return new RouteTable(routes)
  }

  classify(method: string, path: string): Classification {
    const own = GATEWAY_ROUTES[path]
    if (own) {
      if (method !== own.method && !(method === 'HEAD' && own.method === 'GET')) return refused(405, 'METHOD_NOT_ALLOWED', `${path} answers ${own.method} only`)
      return own.handler ? { kind: 'gateway', handler: own.handler } : { kind: 'free' }
    }
    const route = this.routes.find(r => path === r.base || path.startsWith(r.base + '/'))
    if (!route) return notForwarded(path)
    if (!route.product && !route.free) return refused(403, 'ROUTE_CLOSED', `${route.base} is not open on the hosted API`)
    return classifyInService(route, method, path.slice(route.base.length))
  }
}

function classifyInService(route: ServiceRoute, method: string, rest: string): Classification {
  const readMethod = method === 'GET' || method === 'HEAD'
  if (rest === '' || rest === '/' || rest === '/$metadata') {
    return readMethod ? { kind: 'free', product: route.product } : refused(405, 'METHOD_NOT_ALLOWED', 'Service and metadata documents answer GET only')
  }
  const segments = rest.slice(1).split('/')
  if (segments[0] === '$batch') return refused(403, 'BATCH_NOT_FORWARDED', '$batch is not forwarded: send each request on its own')
  const first = segments[0].split('(')[0]

  const boundName = segments.length > 1 ? boundOperationName(segments[segments.length - 1]) : undefined
  const operation = route.operations.get(boundName ?? first)
  if (operation) {
    if (operation.closed) return refused(403, 'OPERATION_CLOSED', `${boundName ?? first} is an operator function, closed on the hosted API`)
    if (method !== operation.method) return refused(405, 'METHOD_NOT_ALLOWED', `${boundName ?? first} is called with ${operation.method}`)
    return metered(route, operation.routeClass ?? route.readsClass, boundName ?? first)
  }
  if (route.entitySets.has(first) && !boundName) {
    if (!readMethod) return refused(403, 'METHOD_NOT_FORWARDED', `${first} is read with GET; writes are not forwarded`)
    return metered(route, route.readsClass, first)
  }
  return refused(403, 'ROUTE_NOT_FORWARDED', `${route.base}/${segments[0]} is not an entity set or operation the gateway forwards`)
}

function metered(route: ServiceRoute, routeClass: string, operation: string): Classification {
  if (route.free) return { kind: 'free', product: route.product }
  return { kind: 'metered', product: route.product!, routeClass, service: route.service, operation }
}

/** `Service.Action` or `Action(…)` as the last segment of a bound call: the operation's name. */
function boundOperationName(segment: string): string | undefined {
  const name = segment.split('(')[0]
  if (!name.includes('.')) return undefined
  return name.slice(name.lastIndexOf('.') + 1)
}

function serviceRoute(base: string, service: string, definition: any, definitions: Record<string, any>): ServiceRoute {
  const entitySets = new Set<string>()
  const operations = new Map<string, OperationRoute>()
  const defaultClass = definition['@gateway.operations'] ?? 'read-action'
  const describe = (op: any): OperationRoute => ({
    method: op.kind === 'function' ? 'GET' : 'POST',
    routeClass: op['@gateway.price'] ?? defaultClass,
    closed: !!op['@gateway.closed'],
  })
  for (const [name, def] of Object.entries(definitions)) {
    if (!name.startsWith(service + '.') || name.slice(service.length + 1).includes('.')) continue
    const local = name.slice(service.length + 1)
    if (def.kind === 'entity') {
      entitySets.add(local)
      for (const [boundName, bound] of Object.entries<any>(def.actions ?? {})) operations.set(boundName, describe(bound))
    } else if (def.kind === 'action' || def.kind === 'function') {
      operations.set(local, describe(def))
    }
  }
  return {
    base,
    service,
    product: definition['@gateway.product'],
    free: !!definition['@gateway.free'],
    readsClass: definition['@gateway.reads'] ?? 'entity-read',
    entitySets,
    operations,
  }
}
