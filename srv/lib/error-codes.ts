import cds from '@sap/cds'
import { ApiError } from './errors.ts'
import { requestIdOf } from './http-safety.ts'
import { databaseOutageAnswer } from './database-outage.ts'
import { bodyNotAnObjectMessage } from './input-guard.ts'

/**
 * Gives every error response a stable upper-case `error.code`. Errors raised by our handlers
 * already carry one; errors raised by the framework (URL parsing, unknown properties, read-only
 * entities, ...) carry only the HTTP status as code and are named here from status and message.
 * Database errors never show through: a constraint race is 409 CONFLICT, a value the database
 * cannot take is 400 INVALID_VALUE, a statement stopped at the request's deadline 503 QUERY_TIMEOUT. Anything else unexpected is logged with its stack and answered
 * 500 INTERNAL_ERROR with the request id, never with its message or stack; it is passed on as a
 * plain error, so CAP's final handler never takes it for a crash. Runs as the first of
 * `cds.middlewares.after`, before CAP's final error handler renders the body.
 */
export function stableErrorCodes(error: any, req: any, res: any, next: (error: unknown) => void) {
  if (error == 401 || error?.status == 401 || error?.code == 401) return unauthenticated(req, res)
  if (!error || typeof error !== 'object') return next(error)
  classify(error, req, named => next(keptInProduction(named, req, res)))
}

function classify(error: any, req: any, next: (error: any) => void) {
  const outage = databaseOutageAnswer(error)
  if (outage) return next(outage)
  const status = Number(error.status ?? error.statusCode ?? 500)
  const database = databaseErrorKind(error, req)
  if (database === 'query') return next(new ApiError(400, 'INVALID_QUERY', 'The query applies a function or operator to a value of a type it does not take'))
  if (database === 'constraint') return next(new ApiError(409, 'CONFLICT', 'The change conflicts with another one made at the same time; try again'))
  if (database === 'value') return next(new ApiError(400, 'INVALID_VALUE', 'A value is out of range or of a kind the database cannot store'))
  if (database === 'timeout') return next(new ApiError(503, 'QUERY_TIMEOUT', 'The database stopped this request\'s query at the request\'s deadline; narrow the read (fewer rows, a selective $filter) or try again', { retryAfter: 1 }))
  if (status === 501) return next(unsupported(String(error.message ?? '')))
  if (failedParsingTheUrl(error)) return next(misunderstoodUrl(error, req))
  if (refusedByTheQueryCompiler(error, req)) return next(new ApiError(400, 'INVALID_QUERY', `The query cannot be run: ${String(error.message).slice(0, 200)}`))
  if (isBodyNotAnObject(error, req)) return next(new ApiError(400, 'INVALID_BODY', bodyNotAnObjectMessage(req.body)))
  if (status >= 500 && !(error instanceof ApiError) && !isStableCode(error.code)) return next(unexpected(error, req))
  if (error.code === 'ASSERT_MANDATORY') {
    error.code = 'MISSING_PARAMETER'
    if (typeof error.target === 'string' && error.target) error.message = `${error.target} is required`
  } else if (!isStableCode(error.code)) error.code = codeFor(status, String(error.message ?? ''), req)
  next(error)
}

/**
 * CAP answers every 5xx in production as `{"code":"500"}` (its sanitising); ours leave with their
 * stable code and a message written for callers (the unexpected ones were replaced by
 * INTERNAL_ERROR with the request id above, so no internal message or stack is left to hide).
 * `$sanitize = false` is CAP's documented opt-out. A retry time becomes the Retry-After header.
 */
function keptInProduction(error: any, req: any, res: any) {
  if (statusOf(error) >= 500) {
    // A stable code raised by other code than ours: its message may be internal, its code is kept.
    if (!(error instanceof ApiError)) error = new ApiError(statusOf(error), String(error.code), `The service could not answer (${error.code}); quote request id ${requestIdOf(req)} when you report it`, { retryAfter: error.retryAfter })
    error.$sanitize = false
  }
  if (error?.retryAfter !== undefined && res && !res.headersSent) res.setHeader('Retry-After', String(error.retryAfter))
  return error
}

/** The status CAP answers an error with (srv/protocols/http.js, normalized). */
function statusOf(error: any): number {
  const status = Number(error?.status ?? error?.statusCode)
  if (status) return status
  const code = Number(error?.code)
  return code >= 400 && code < 600 ? code : 500
}

/**
 * A write whose JSON body is no object (null, a number, a string, an array): CAP's adapter fails on
 * it in its own way (a type error on null, its checks on the rest) before any handler runs. What
 * the caller is told is what was wrong with the body; refusals of access keep their own status.
 */
function isBodyNotAnObject(error: any, req: any): boolean {
  if (error instanceof ApiError || !WRITE_METHODS.has(req?.method)) return false
  // A body that is no JSON at all is MALFORMED_JSON (CAP's parser leaves the text in req.body).
  if (error.name === 'Invalid JSON body' || error instanceof SyntaxError) return false
  if ([401, 403, 405, 413, 415].includes(statusOf(error))) return false
  const body = req?.body
  return body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))
}

const WRITE_METHODS = new Set(['POST', 'PATCH', 'PUT'])

/**
 * CAP's own 401 (no user where one is required, or a token the identity provider's keys refuse) as
 * JSON with a code; mocked users are asked to log in, everyone else for a bearer token.
 */
function unauthenticated(req: any, res: any) {
  res.setHeader('WWW-Authenticate', req._login ? 'Basic realm="Users"' : 'Bearer realm="chain-access"')
  res.status(401).json({ error: { code: 'UNAUTHORIZED', message: 'This route needs an authenticated caller' } })
}

/** A query feature the OData adapter does not implement is the caller's request, not our failure. */
function unsupported(message: string): ApiError {
  if (message.includes('$format')) return new ApiError(406, 'UNSUPPORTED_FORMAT', 'Only $format=json is served')
  return new ApiError(400, 'NOT_SUPPORTED', message.slice(0, 300))
}

/**
 * The OData adapter's URL parser itself fails on some malformed expressions (a lambda over a
 * property that is no collection, or a date compared with a number beyond JavaScript's dates, say)
 * instead of naming them: whatever fails while it parses a URL is a URL it cannot understand.
 * Logged, so such cases can be named one day.
 */
const failedParsingTheUrl = (error: any) => (error instanceof TypeError || error instanceof RangeError) && /[\\/]libx[\\/]odata[\\/]parse[\\/]/.test(String(error.stack))

/**
 * A read's query that the database layer's query compiler refuses (a path through an association
 * beyond its keys, say) is the caller's expression at fault; its message names the problem.
 */
function refusedByTheQueryCompiler(error: any, req: any): boolean {
  const read = req?.method === 'GET' || req?.method === 'HEAD'
  return read && !(error instanceof ApiError) && /[\\/]@cap-js[\\/]db-service[\\/]lib[\\/](cqn4sql|infer)/.test(String(error.stack))
}

function misunderstoodUrl(error: any, req: any): ApiError {
  if (error instanceof RangeError && /Invalid time value/.test(error.message)) {
    return new ApiError(400, 'INVALID_VALUE', 'A date or time in the request URL is out of range: a number stands for milliseconds since 1970, at most 8640000000000000 either way')
  }
  cds.log('server').warn(`the OData parser failed on ${String(req?.originalUrl ?? '').slice(0, 200)} (request id ${requestIdOf(req)}): ${error.message}`)
  return new ApiError(400, 'INVALID_URL', 'The request URL could not be understood; check its $filter, $orderby and $expand expressions')
}

function unexpected(error: any, req: any): ApiError {
  const requestId = requestIdOf(req)
  cds.log('server').error(`unexpected error in ${req?.method} ${String(req?.originalUrl ?? req?.url ?? '').slice(0, 200)} (request id ${requestId})`, error?.stack ?? error)
  return new ApiError(500, 'INTERNAL_ERROR', `An unexpected error occurred; quote request id ${requestId} when you report it`)
}

const isStableCode = (code: unknown) => typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code) && !/^(SQLITE|ERR)_/.test(code)

type DatabaseErrorKind = 'constraint' | 'value' | 'query' | 'timeout'

/** SQLite's primary result code of every constraint violation (extended codes keep it in their low byte). */
const SQLITE_CONSTRAINT = 19

/** What a database error means for the caller, the error's own or that of the error it wraps (`cause`). */
function databaseErrorKind(error: any, req: any): DatabaseErrorKind | undefined {
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 5; e = e.cause, depth++) {
    const kind = kindOf(e, req)
    if (kind) return kind
  }
  return undefined
}

/**
 * SQLite (node:sqlite result codes) and PostgreSQL (SQLSTATE classes 23, 22 and 42) errors by what
 * they mean for the caller. A read's query is the caller's own expression: when the database finds
 * a function or operator applied to the wrong type in it, the query is at fault (400). Every
 * constraint violation (unique, primary or foreign key, not null, check) is a conflict (409).
 */
function kindOf(error: any, req: any): DatabaseErrorKind | undefined {
  const sqlState = typeof error.sqlState === 'string' ? error.sqlState : typeof error.code === 'string' && /^[0-9A-Z]{5}$/.test(error.code) && error.severity ? error.code : undefined
  const read = req?.method === 'GET' || req?.method === 'HEAD'
  if (sqlState?.startsWith('23')) return 'constraint'
  // query_canceled: the statement ran past the request's deadline (statement-deadline.ts).
  if (sqlState === '57014') return 'timeout'
  if (sqlState?.startsWith('22')) return 'value'
  if (read && sqlState?.startsWith('42') && sqlState !== '42P01') return 'query'
  if (read && error.code === 'ERR_SQLITE_ERROR' && /no such function|no such column|wrong number of arguments|misuse of/i.test(String(error.message))) return 'query'
  // SQLite's date functions are JavaScript, and refuse a value that is no date.
  if (read && /^Value does not contain a valid (date|time)/.test(String(error.message))) return 'query'
  // The drivers' names (SQLITE_CONSTRAINT_*) and CAP's (UNIQUE_CONSTRAINT_VIOLATION, ENTITY_ALREADY_EXISTS).
  if (/CONSTRAINT/.test(String(error.code)) || error.code === 'ENTITY_ALREADY_EXISTS') return 'constraint'
  if (error.code === 'ERR_SQLITE_ERROR' && (/constraint failed/i.test(String(error.message)) || (Number(error.errcode) & 0xff) === SQLITE_CONSTRAINT)) return 'constraint'
  if (error.code === 'ERR_SQLITE_ERROR' && /datatype mismatch|too big|out of range/i.test(String(error.message))) return 'value'
  return undefined
}

const BAD_REQUEST_PATTERNS: [RegExp, string][] = [
  [/^Property ".*" does not exist/, 'UNKNOWN_PROPERTY'],
  [/^Navigation property/, 'UNKNOWN_NAVIGATION_PROPERTY'],
  [/does not contain a valid|is not a valid/, 'INVALID_VALUE'],
  [/^Key ".*" (is not a key|is missing)/, 'INVALID_KEY'],
  [/JSON|Unexpected token|Unexpected end/, 'MALFORMED_JSON'],
  [/^Parsing URL failed/, 'INVALID_URL'],
]

const STATUS_CODES: Record<number, string> = {
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  409: 'CONFLICT',
  412: 'PRECONDITION_FAILED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
  504: 'GATEWAY_TIMEOUT',
}

function codeFor(status: number, message: string, req: any): string {
  if (status === 400) {
    const parseFailure = /^Parsing URL failed at position (\d+)/.exec(message)
    if (parseFailure) return queryOptionAt(Number(parseFailure[1]), req) ?? 'INVALID_URL'
    return BAD_REQUEST_PATTERNS.find(([pattern]) => pattern.test(message))?.[1] ?? 'BAD_REQUEST'
  }
  if (status === 404 && /^Invalid resource path/.test(message)) return 'UNKNOWN_RESOURCE'
  if (status === 405 && /read-only|readonly/i.test(message)) return 'READ_ONLY_ENTITY'
  return STATUS_CODES[status] ?? (status >= 500 ? 'INTERNAL_ERROR' : 'BAD_REQUEST')
}

/**
 * The OData parser reports positions in the decoded request URL; the system query option that
 * holds the position names the code (`$filter` → INVALID_FILTER), an unknown `$option` is named too.
 */
function queryOptionAt(position: number, req: any): string | undefined {
  let url: string
  try {
    url = decodeURIComponent(String(req?.originalUrl ?? ''))
  } catch {
    return undefined
  }
  const queryStart = url.indexOf('?')
  if (queryStart < 0 || position <= queryStart) return 'INVALID_RESOURCE_PATH'
  let offset = queryStart + 1
  for (const part of url.slice(queryStart + 1).split('&')) {
    const end = offset + part.length
    if (position >= offset && position <= end) {
      const name = /^\$([a-z]+)=/i.exec(part)?.[1]
      if (!name) return part.startsWith('$') ? 'UNKNOWN_QUERY_OPTION' : 'INVALID_URL'
      return KNOWN_OPTIONS.has(name.toLowerCase()) ? `INVALID_${name.toUpperCase()}` : 'UNKNOWN_QUERY_OPTION'
    }
    offset = end + 1
  }
  return undefined
}

const KNOWN_OPTIONS = new Set(['filter', 'select', 'expand', 'orderby', 'top', 'skip', 'count', 'search', 'apply', 'compute', 'format', 'skiptoken'])
