import cds from '@sap/cds'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { requestIdOf } from './http-safety.ts'
import { canonicalPath } from './route-aliases.ts'

/**
 * One line per request, whatever answered it (the gateway's refusals, the guards, the services, the
 * own routes, the front ends, a 404), written when its answer has left or its client went away:
 * a JSON object on one line in every profile (docs/operations.md#logs), through `cds.log('access')` so
 * a log level turns it off. It names the key that was checked by its ID, never the secret, and
 * the path without its query (which may carry addresses); request headers never reach it.
 */

export interface AccessLine {
  type: 'access'
  /** When the request arrived, ISO 8601. */
  time: string
  method: string
  route_family: string
  path: string
  /** The answer's status; 499 when the client went away before any was sent. */
  status: number
  latency_ms: number
  /** The ID of the API key (or, self-hosted, the product grant) the call was checked with. */
  key_id: string | null
  units_charged: number | null
  correlation_id: string
  /** Body bytes sent. */
  bytes: number
  /** Whether the client went away before the whole answer was sent. */
  aborted: boolean
}

const MAX_PATH = 200
/** The status logged when the client left before any answer (nginx's "client closed request"). */
const CLIENT_WENT_AWAY = 499
const UNITS_CHARGED = 'x-access-units-charged'

const checkedKeys = new WeakMap<IncomingMessage, string>()

/** The ID of the key (or grant) this request was checked with, for its access line. */
export function recordKeyId(req: IncomingMessage, keyId: string) {
  checkedKeys.set(req, keyId)
}

/** Bootstrap middleware: the request's access line is written once its answer has finished or its client left. */
export function logAccess(req: IncomingMessage, res: ServerResponse, next: () => void) {
  const arrived = new Date()
  const started = performance.now()
  const method = req.method ?? ''
  const path = pathOf(req.url ?? '')
  const bytesSent = countBodyBytes(res)
  res.once('close', () => {
    const aborted = !res.writableFinished
    writeAccessLine({
      type: 'access',
      time: arrived.toISOString(),
      method: method.slice(0, 16),
      route_family: routeFamilyOf(path),
      path: path.slice(0, MAX_PATH),
      status: res.headersSent ? res.statusCode : CLIENT_WENT_AWAY,
      latency_ms: Math.round((performance.now() - started) * 10) / 10,
      key_id: checkedKeys.get(req) ?? null,
      units_charged: unitsCharged(res),
      correlation_id: requestIdOf(req),
      bytes: bytesSent(),
      aborted,
    })
  })
  next()
}

function writeAccessLine(line: AccessLine) {
  const log = cds.log('access')
  if (!log._info) return
  // The line is the JSON as it is, in every profile; a level change gives the logger CAP's format again.
  log.setFormat(asWritten)
  log.info(JSON.stringify(line))
}

const asWritten = (_label: string, _level: number, ...args: unknown[]) => args

const pathOf = (target: string) => target.split('?')[0]

function unitsCharged(res: ServerResponse): number | null {
  const header = res.getHeader(UNITS_CHARGED)
  const units = Number(Array.isArray(header) ? header[0] : header)
  return header === undefined || !Number.isFinite(units) ? null : units
}

/** Counts what is written as the answer's body (after compression, which writes through it). */
function countBodyBytes(res: ServerResponse): () => number {
  let bytes = 0
  const count = (chunk: unknown, encoding: unknown) => {
    if (typeof chunk === 'string') bytes += Buffer.byteLength(chunk, typeof encoding === 'string' ? encoding as BufferEncoding : 'utf8')
    else if (chunk instanceof Uint8Array) bytes += chunk.byteLength
  }
  const { write, end } = res
  res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    count(chunk, rest[0])
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest)
  } as ServerResponse['write']
  res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
    if (typeof chunk !== 'function') count(chunk, rest[0])
    return (end as (...args: unknown[]) => ServerResponse).call(this, chunk, ...rest)
  } as ServerResponse['end']
  return () => bytes
}

/** The routes the server answers by itself, named by their first path segment. */
const OWN_FAMILIES = new Set(['me', 'prices', 'health', 'ready', 'metrics', 'keys', 'topup', 'auth', 'vouchers', 'zk-config', 'mcp', 'dev-wallet'])
const FRONT_END_ROOTS = new Set(['', 'index.html', 'portal', 'resources'])
const SERVICE_NAME = /^[a-z][a-z0-9-]{0,39}$/

/**
 * A request's route family, from its path's first segments: a service's route segment
 * (`chaina-odata`, `chainb`: `/api/v1/chainb` is `chainb` too), an own route's (`me`, `keys`,
 * `auth`, `health`), `front-ends`, or `other`. A bounded set: an unknown service segment is `odata`.
 */
export function routeFamilyOf(path: string): string {
  const segments = canonicalPath(path).split('/').filter(Boolean)
  if (segments[0] === 'odata') return servedSegments().has(segments[2] ?? '') ? segments[2] : 'odata'
  const first = segments[0] ?? ''
  if (OWN_FAMILIES.has(first)) return first
  if (FRONT_END_ROOTS.has(first)) return 'front-ends'
  return 'other'
}

/** The route segments of the services served under /odata/v4. */
function servedSegments(): Set<string> {
  const segments = Object.values(cds.services).map(service => /^\/odata\/v4\/([^/]+)$/.exec((service as { path?: string }).path ?? '')?.[1])
  return new Set(segments.filter((segment): segment is string => !!segment && SERVICE_NAME.test(segment)))
}
