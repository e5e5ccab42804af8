/** A response read off a socket byte for byte: status, lower-case headers, body as UTF-8. */
export interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
}

/** Parses an HTTP/1.1 response as a server wrote it (chunked or with a content length). */
export function parseRawResponse(text: string): RawResponse {
  const headEnd = text.indexOf('\r\n\r\n')
  const head = headEnd < 0 ? text : text.slice(0, headEnd)
  const [statusLine, ...lines] = head.split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
  }
  let body = headEnd < 0 ? '' : text.slice(headEnd + 4)
  if (headers['transfer-encoding'] === 'chunked') body = dechunk(body)
  else if (headers['content-length'] !== undefined) body = body.slice(0, Number(headers['content-length']) || 0)
  return { status: Number(statusLine.split(' ')[1]) || 0, headers, body: Buffer.from(body, 'latin1').toString('utf8') }
}

function dechunk(text: string): string {
  let out = ''
  let rest = text
  while (rest) {
    const lineEnd = rest.indexOf('\r\n')
    const size = parseInt(rest.slice(0, lineEnd), 16)
    if (!size) break
    out += rest.slice(lineEnd + 2, lineEnd + 2 + size)
    rest = rest.slice(lineEnd + 2 + size + 2)
  }
  return out
}
