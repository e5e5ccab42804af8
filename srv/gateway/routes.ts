import type { ServedProduct } from './keys.ts'

/**
 * What the gateway does with a normalised path: forward it metered (with its price class), forward
 * it free, take it as one of its own routes, or refuse it (closed or unknown: 403). The table is
 * built from the gateway's own routes and the served model: a service is forwarded only when
 * annotated `@gateway.product`; its entity sets are read with `@gateway.reads`; its operations
 * cost `@gateway.operations` unless an operation says `@gateway.price` or is `@gateway.closed`; a
 * service with `@gateway.free` needs no key; a service with `@gateway.operator` takes no key at all:
 * it is the operator's, who authenticates as CAP's auth says (a JWT in production).
 */

/** One of the gateway's own routes: the table needs only its path and method. */
export interface OwnPath {
  path: string
  method: 'GET' | 'POST'
  /** Also every path under it (`path/...`). */
  prefix?: boolean
}

type ServiceClassification =
  | { kind: 'metered'; product: ServedProduct; routeClass: string; service: string; operation: string }
  /** `document`: a service or metadata document (the model's, the same wherever the product is served). */
  | { kind: 'free'; product?: ServedProduct; document?: true }
  | { kind: 'operator' }
  | { kind: 'refused'; status: 403 | 405; code: string; message: string }

export type Classification<Own extends OwnPath = OwnPath> = ServiceClassification | { kind: 'own'; route: Own }

/** What the route table reads of the model: kinds, elements, bound operations and `@gateway…` annotations. */
interface Definition {
  kind?: string
  elements?: Record<string, { isAssociation?: boolean; is2many?: boolean; target?: string }>
  actions?: Record<string, Definition>
  '@gateway.product'?: ServedProduct
  '@gateway.free'?: boolean
  '@gateway.operator'?: boolean
  '@gateway.reads'?: string
  '@gateway.operations'?: string
  '@gateway.price'?: string
  '@gateway.closed'?: boolean
}

/** A served service: its name and where it is served. */
interface ServedService {
  name: string
  endpoints?: { kind: string; path: string }[]
}

interface OperationRoute {
  method: 'POST' | 'GET'
  routeClass?: string
  closed: boolean
}

/** What a path may go on with after an entity of this type: navigations, properties, bound operations. */
interface EntityShape {
  navigations: Map<string, { target: string; many: boolean }>
  properties: Set<string>
  operations: Map<string, OperationRoute>
}

interface ServiceRoute {
  base: string
  service: string
  product?: ServedProduct
  free: boolean
  operator: boolean
  readsClass: string
  /** Entity set name → its entity's name in the model. */
  entitySets: Map<string, string>
  /** Unbound actions and functions. */
  operations: Map<string, OperationRoute>
  shapes: Map<string, EntityShape>
}

const refused = (status: 403 | 405, code: string, message: string): ServiceClassification => ({ kind: 'refused', status, code, message })
const notForwarded = (path: string) => refused(403, 'ROUTE_NOT_FORWARDED', `The gateway does not forward ${path}`)

export class RouteTable<Own extends OwnPath = OwnPath> {
  private readonly routes: ServiceRoute[]
  private readonly own: Map<string, Own>
  private readonly ownPrefixes: Own[]

  constructor(routes: ServiceRoute[], own: readonly Own[] = []) {
    // Longest base first, so /odata/v4/chainb-indexer is not taken for /odata/v4/chainb.
    this.routes = [...routes].sort((a, b) => b.base.length - a.base.length)
    this.own = new Map(own.map(route => [route.path, route]))
    this.ownPrefixes = own.filter(route => route.prefix)
  }

  /** Builds the table from the gateway's own routes and the served services (CAP service instances with their endpoints). */
  static fromServices<Own extends OwnPath>(services: Iterable<ServedService>, definitions: Record<string, Definition>, own: readonly Own[] = []): RouteTable<Own> {
    const routes: ServiceRoute[] = []
    for (const srv of services) {
      const definition = definitions[srv.name]
      if (!definition || definition.kind !== 'service') continue
      for (const endpoint of srv.endpoints ?? []) {
        if (endpoint.kind !== 'odata' && endpoint.kind !== 'odata-v4') continue
        routes.push(serviceRoute(endpoint.path, srv.name, definition, definitions))
      }
    }
    return new RouteTable(routes, own)
  }

  classify(method: string, path: string): Classification<Own> {
    const own = this.own.get(path) ?? this.ownPrefixes.find(route => path.startsWith(route.path + '/'))
    if (own) {
      if (method !== own.method && !(method === 'HEAD' && own.method === 'GET')) return refused(405, 'METHOD_NOT_ALLOWED', `${path} answers ${own.method} only`)
      return { kind: 'own', route: own }
    }
    const route = this.routes.find(r => path === r.base || path.startsWith(r.base + '/'))
    if (!route) return notForwarded(path)
    if (route.operator) return { kind: 'operator' }
    if (!route.product && !route.free) return refused(403, 'ROUTE_CLOSED', `${route.base} is not open on the hosted API`)
    return classifyInService(route, method, path.slice(route.base.length))
  }
}

/**
 * Classifies by every segment: a path is forwarded only when it is exactly a shape the service
 * serves (an unbound operation; an entity set, optionally keyed, followed by navigations, a
 * property, `$count` or `$value`, or a bound operation at the end). A closed operation anywhere,
 * or any segment the model does not know, is refused here, uncharged.
 */
function classifyInService(route: ServiceRoute, method: string, rest: string): ServiceClassification {
  const readMethod = method === 'GET' || method === 'HEAD'
  if (rest === '' || rest === '/' || rest === '/$metadata') {
    return readMethod ? { kind: 'free', product: route.product, document: true } : refused(405, 'METHOD_NOT_ALLOWED', 'Service and metadata documents answer GET only')
  }
  const segments = rest.slice(1).split('/').map(parseSegment)
  if (segments[0]?.name === '$batch') return refused(403, 'BATCH_NOT_FORWARDED', '$batch is not forwarded: send each request on its own')
  const unknown = refused(403, 'ROUTE_NOT_FORWARDED', `${route.base}${rest.slice(0, 200)} is not an entity set, entity or operation the gateway forwards`)
  if (segments.some(segment => !segment)) return unknown
  const [first, ...more] = segments as Segment[]

  const operation = route.operations.get(first.name)
  if (operation) return more.length ? unknown : operationCall(route, first, operation, method)

  let entity: string | undefined = route.entitySets.get(first.name)
  if (!entity) return unknown
  let keyed = first.key !== undefined
  for (const [index, segment] of more.entries()) {
    const last = index === more.length - 1
    const shape: EntityShape = route.shapes.get(entity)!
    const bound = shape.operations.get(boundName(segment.name))
    if (bound) return last && keyed ? operationCall(route, segment, bound, method) : unknown
    const navigation = shape.navigations.get(segment.name)
    if (navigation && keyed && (navigation.many || segment.key === undefined)) {
      entity = navigation.target
      keyed = !navigation.many || segment.key !== undefined
      if (!route.shapes.has(navigation.target)) return unknown
      continue
    }
    if (segment.name === '$count' && last && !keyed && segment.key === undefined) break
    if (shape.properties.has(segment.name) && keyed && segment.key === undefined) {
      const valueAfter = more[index + 1]?.name === '$value' && index + 2 === more.length
      if (last || valueAfter) break
    }
    return unknown
  }
  if (!readMethod) return refused(403, 'METHOD_NOT_FORWARDED', `${first.name} is read with GET; writes are not forwarded`)
  return metered(route, route.readsClass, first.name)
}

interface Segment {
  name: string
  /** What stands in parentheses: a key predicate or function arguments. */
  key?: string
}

function parseSegment(text: string): Segment | undefined {
  const match = /^([A-Za-z_$][\w.$]*)(?:\((.*)\))?$/.exec(text)
  return match ? { name: match[1], key: match[2] } : undefined
}

function operationCall(route: ServiceRoute, segment: Segment, operation: OperationRoute, method: string): ServiceClassification {
  const name = boundName(segment.name)
  if (operation.closed) return refused(403, 'OPERATION_CLOSED', `${name} is an operator function, closed on the hosted API`)
  if (method !== operation.method) return refused(405, 'METHOD_NOT_ALLOWED', `${name} is called with ${operation.method}`)
  if (operation.method === 'POST' && segment.key !== undefined) return refused(403, 'ROUTE_NOT_FORWARDED', `${name} is an action: its parameters go in the body`)
  return metered(route, operation.routeClass ?? route.readsClass, name)
}

function metered(route: ServiceRoute, routeClass: string, operation: string): ServiceClassification {
  if (route.free) return { kind: 'free', product: route.product }
  return { kind: 'metered', product: route.product!, routeClass, service: route.service, operation }
}

/** `Service.Action` (a bound call's segment) or `Action`: the operation's own name. */
const boundName = (name: string) => name.slice(name.lastIndexOf('.') + 1)

function serviceRoute(base: string, service: string, definition: Definition, definitions: Record<string, Definition>): ServiceRoute {
  const entitySets = new Map<string, string>()
  const operations = new Map<string, OperationRoute>()
  const shapes = new Map<string, EntityShape>()
  const defaultClass = definition['@gateway.operations'] ?? 'read-action'
  const describe = (op: Definition): OperationRoute => ({
    method: op.kind === 'function' ? 'GET' : 'POST',
    routeClass: op['@gateway.price'] ?? defaultClass,
    closed: !!op['@gateway.closed'],
  })
  for (const [name, def] of Object.entries(definitions)) {
    if (!name.startsWith(service + '.') || name.slice(service.length + 1).includes('.')) continue
    const local = name.slice(service.length + 1)
    if (def.kind === 'entity') {
      entitySets.set(local, name)
      shapes.set(name, entityShape(def, describe))
    } else if (def.kind === 'action' || def.kind === 'function') {
      operations.set(local, describe(def))
    }
  }
  return {
    base,
    service,
    product: definition['@gateway.product'],
    free: !!definition['@gateway.free'],
    operator: !!definition['@gateway.operator'],
    readsClass: definition['@gateway.reads'] ?? 'entity-read',
    entitySets,
    operations,
    shapes,
  }
}

function entityShape(def: Definition, describe: (op: Definition) => OperationRoute): EntityShape {
  const navigations = new Map<string, { target: string; many: boolean }>()
  const properties = new Set<string>()
  for (const [name, element] of Object.entries(def.elements ?? {})) {
    if (element.isAssociation) navigations.set(name, { target: element.target!, many: !!element.is2many })
    else properties.add(name)
  }
  const operations = new Map(Object.entries(def.actions ?? {}).map(([name, op]) => [name, describe(op)]))
  return { navigations, properties, operations }
}
