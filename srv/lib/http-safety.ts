import cds from '@sap/cds'
import { databaseOutageAnswer } from './database-outage.ts'
import type { Server, IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

/**
 * What keeps one request from harming the server or the others, whatever it sends:
 * - every request gets a server-chosen id (`x-request-id`), which CAP takes as its correlation id;
 * - a NUL character anywhere in the target, and braces the OData parser would choke on, are
 *   refused before anything reads the target;
 * - requests the HTTP parser refuses (oversized headers, a malformed request line) are answered
 *   with a JSON error, not an empty body;
 * - whatever no route answers, and any error that reaches Express itself, is answered as JSON
 *   with a code (never Express's HTML page with a stack);
 * - an uncaught exception or unhandled rejection is logged with its stack and the server goes on
 *   serving (CAP's shutdown on uncaught errors is off, `cds.server.shutdown_on_uncaught_errors`).
 */

type Request = IncomingMessage & { originalUrl?: string }

const REQUEST_ID = 'x-request-id'
const CORRELATION_ID = 'x-correlation-id'

export function assignRequestId(req: Request, res: ServerResponse, next: () => void) {
  const id = cds.utils.uuid()
  req.headers[CORRELATION_ID] = id
  res.setHeader(REQUEST_ID, id)
  next()
}

/** The id assignRequestId gave the request (falls back to CAP's correlation id). */
export function requestIdOf(req: any): string {
  return String(req?.res?.getHeader?.(REQUEST_ID) ?? req?.headers?.[CORRELATION_ID] ?? cds.context?.id ?? 'unknown')
}

/**
 * Refuses, before anything parses it, a request target with a NUL character, or with curly braces
 * (JSON literals in OData expressions) nested more than MAX_BRACE_DEPTH deep or left open: the
 * OData URL parser backtracks over unclosed braces, taking twice as long for each one more, so a
 * URL of a few dozen bytes could hold the whole process for hours. Every brace counts, also inside
 * quotes: the parser's JSON rule does not know quotes, and a quote it does not read as a string
 * delimiter (in `$search`, inside a JSON string) would otherwise hide the braces after it.
 * `headers` go with the refusal.
 */
export function refuseHostileTargets(headers: Record<string, string | number> = {}) {
  return function refuseHostileTarget(req: Request, res: ServerResponse, next: () => void) {
    const target = req.url ?? ''
    if (/%00/i.test(target) || target.includes('\u0000')) return sendError(res, 400, 'INVALID_CHARACTER', 'The request target contains a NUL character', headers)
    if (!bracesWithinBounds(decoded(target))) {
      return sendError(res, 400, 'INVALID_URL', `The request target nests curly braces more than ${MAX_BRACE_DEPTH} deep, or leaves one open (braces inside string literals count too)`, headers)
    }
    next()
  }
}

export const MAX_BRACE_DEPTH = 8

function decoded(target: string): string {
  try {
    return decodeURIComponent(target.replace(/\+/g, ' '))
  } catch {
    return target
  }
}

/** Whether the curly braces in the text, wherever they stand, are balanced and shallow. */
export function bracesWithinBounds(text: string): boolean {
  let depth = 0
  for (const character of text) {
    if (character === '{' && ++depth > MAX_BRACE_DEPTH) return false
    if (character === '}' && --depth < 0) return false
  }
  return depth === 0
}

/**
 * Idle keep-alive connections stay open longer than clients and routers keep theirs for reuse
 * (Node's default closes them after 5 s, just past the 4 s of Node's own fetch and under the idle
 * times of Cloud Foundry's router and common load balancers): a client that sends on a connection
 * the server is closing at that moment gets a reset, not an answer. A stop still closes idle
 * connections at once (graceful-stop.ts).
 */
export const KEEP_ALIVE_MS = 65_000

export function keepConnectionsLongerThanClients(server: Server) {
  server.keepAliveTimeout = KEEP_ALIVE_MS
  // Node requires the headers' time-out to exceed the keep-alive time.
  server.headersTimeout = Math.max(server.headersTimeout, KEEP_ALIVE_MS + 1000)
}

/**
 * The answer to requests Node's HTTP parser refuses before any middleware sees them, with the
 * given headers besides (the hosted gateway's `x-access-units-charged: 0`).
 */
export function answerClientErrors(server: Server, headers: Record<string, string | number> = {}) {
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('')
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable) return socket.destroy()
    const [status, code, message] = CLIENT_ERRORS[error.code ?? ''] ?? [400, 'MALFORMED_REQUEST', 'The request could not be parsed as HTTP/1.1']
    const body = JSON.stringify({ error: { code, message } })
    socket.end(`HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}connection: close\r\n\r\n${body}`)
  })
}

const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'HEADERS_TOO_LARGE', 'The request headers are larger than the server accepts'],
  HPE_URI_OVERFLOW: [414, 'URI_TOO_LONG', 'The request target is longer than the server accepts'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'REQUEST_TIMEOUT', 'The request was not received in time'],
}
const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 414: 'URI Too Long', 431: 'Request Header Fields Too Large' }

/** Appended after every route: what nothing answered is 404, and errors are JSON with a code. */
export function answerTheRest(app: any) {
  app.use((req: Request, res: ServerResponse) => sendError(res, 404, 'UNKNOWN_RESOURCE', `Nothing is served at ${String(req.url ?? '').split('?')[0].slice(0, 200)}`))
  app.use((error: any, req: Request, res: ServerResponse, _next: unknown) => {
    const status = Number(error?.status ?? error?.statusCode)
    if (status >= 400 && status < 500) return sendError(res, status, error.type === 'entity.too.large' ? 'PAYLOAD_TOO_LARGE' : 'BAD_REQUEST', String(error.message ?? 'Bad request').slice(0, 300))
    const outage = databaseOutageAnswer(error)
    if (outage) return sendError(res, outage.status, outage.code, outage.message, { 'Retry-After': outage.retryAfter! })
    const requestId = requestIdOf(req)
    cds.log('server').error(`unexpected error in ${req.method} ${String(req.url ?? '').slice(0, 200)} (request id ${requestId})`, error?.stack ?? error)
    sendError(res, 500, 'INTERNAL_ERROR', `An unexpected error occurred; quote request id ${requestId} when you report it`)
  })
}

export function sendError(res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string | number> = {}) {
  if (res.headersSent) return void res.end()
  res.statusCode = status
  res.setHeader('content-type', 'application/json')
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value)
  res.end(JSON.stringify({ error: { code, message } }))
}

let keepingUp = false

/** Logs what escaped every handler, with its stack, and keeps serving everyone else. */
export function keepServingOnUncaughtErrors() {
  if (keepingUp) return
  keepingUp = true
  const log = (kind: string) => (error: unknown) => cds.log('server').error(`${kind} (the server goes on serving)`, (error as Error)?.stack ?? error)
  process.on('uncaughtException', log('uncaught exception'))
  process.on('unhandledRejection', log('unhandled rejection'))
}
