/**
 * Normalises a request target once; the gateway classifies, charges and routes the same string.
 * Rather than resolving ambiguity (dot segments, encoded separators, overlong or fullwidth
 * characters, matrix parameters, rewrite headers), it refuses it: no legitimate call needs any.
 */

type Target =
  | { ok: true; path: string; query: string }
  | { ok: false; status: 400; code: string; message: string }

/** Headers some servers and proxies honour to change the method or the path after routing. */
const REWRITE_HEADERS = [
  'x-http-method-override', 'x-http-method', 'x-method-override', 'x-original-url', 'x-rewrite-url',
  'x-original-uri', 'x-forwarded-uri', 'x-forwarded-path', 'x-envoy-original-path',
]

/** Percent-escapes of separators, dots, the escape character, query and fragment marks, NUL. */
const ENCODED_SEPARATOR = /%(2f|5c|2e|25|3f|23|3b|00)/i
/** Backslashes, matrix parameters, spaces and control characters in the raw path. */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const RAW_AMBIGUITY = /[\\;\x00-\x20\x7f]/
const PRINTABLE_ASCII = /^[\x21-\x7e]*$/

const refuse = (code: string, message: string): Target => ({ ok: false, status: 400, code, message })

export function normaliseTarget(rawUrl: string, headers: Record<string, string | string[] | undefined>): Target {
  const rewrite = REWRITE_HEADERS.find(name => headers[name] !== undefined)
  if (rewrite) return refuse('REWRITE_HEADER_REFUSED', `The header '${rewrite}' is not accepted: methods and paths cannot be rewritten`)
  if (!rawUrl.startsWith('/')) return refuse('ABSOLUTE_TARGET_REFUSED', 'Only origin-form request targets (starting with /) are accepted')
  if (rawUrl.includes('#')) return refuse('AMBIGUOUS_PATH', 'A request target must not contain a fragment')

  const queryStart = rawUrl.indexOf('?')
  const rawPath = queryStart < 0 ? rawUrl : rawUrl.slice(0, queryStart)
  const query = queryStart < 0 ? '' : rawUrl.slice(queryStart + 1)
  if (RAW_AMBIGUITY.test(rawPath)) return refuse('AMBIGUOUS_PATH', 'The path contains a backslash, a semicolon, a space or a control character')
  if (ENCODED_SEPARATOR.test(rawPath)) return refuse('AMBIGUOUS_PATH', 'The path contains an encoded separator, dot, percent sign, query or fragment mark')

  let path: string
  try {
    path = decodeURIComponent(rawPath)
  } catch {
    return refuse('MALFORMED_PATH', 'The path is not valid percent-encoded UTF-8')
  }
  if (!PRINTABLE_ASCII.test(path)) return refuse('AMBIGUOUS_PATH', 'The path contains characters outside printable ASCII')

  const segments = path.split('/').slice(1)
  for (const [index, segment] of segments.entries()) {
    const last = index === segments.length - 1
    if (segment === '' && !last) return refuse('AMBIGUOUS_PATH', 'The path contains an empty segment (a duplicate slash)')
    if (segment === '.' || segment === '..') return refuse('AMBIGUOUS_PATH', 'The path contains a dot segment')
    if (segment.endsWith('.')) return refuse('AMBIGUOUS_PATH', 'A path segment ends with a dot')
  }
  return { ok: true, path, query }
}
