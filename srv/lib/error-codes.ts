/**
 * Gives every error response a stable upper-case `error.code`. Errors raised by our handlers
 * already carry one; errors raised by the framework (URL parsing, unknown properties, read-only
 * entities, ...) carry only the HTTP status as code and are named here from status and message.
 * Runs as the first of `cds.middlewares.after`, before CAP's final error handler renders the body.
 */
export function stableErrorCodes(error: any, req: any, _res: unknown, next: (error: unknown) => void) {
  if (error && typeof error === 'object') {
    const status = Number(error.status ?? error.statusCode ?? 500)
    if (status >= 500 && isDatabaseConstraint(error)) Object.assign(error, { status: 409, code: 'CONFLICT' })
    else if (!isStableCode(error.code)) error.code = codeFor(status, String(error.message ?? ''), req)
  }
  next(error)
}

const isStableCode = (code: unknown) => typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code) && !/^SQLITE_/.test(code)
const isDatabaseConstraint = (error: any) => /CONSTRAINT/.test(String(error.code)) || error.sqlState?.startsWith?.('23')

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
  501: 'NOT_IMPLEMENTED',
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
