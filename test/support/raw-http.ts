import { request } from 'node:http'

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

/**
 * POSTs `megabytes` MiB streamed without a length (chunked), as fast as the server reads them, and
 * resolves with the answer as soon as it comes, whether or not the server read the whole body.
 */
export function streamedUpload(url: string, headers: Record<string, string>, megabytes: number): Promise<{ status?: number; code?: string; charged?: string; failed?: string }> {
  return new Promise(resolve => {
    const upload = request(url.replace('//localhost:', '//127.0.0.1:'), { method: 'POST', headers }, response => {
      let text = ''
      response.on('data', chunk => (text += chunk)).on('end', () => {
        resolve({ status: response.statusCode, code: text.startsWith('{') ? JSON.parse(text).error?.code : undefined, charged: String(response.headers['x-access-units-charged']) })
      })
    })
    upload.on('error', error => resolve({ failed: `the upload failed before an answer: ${error.message}` }))
    const chunk = Buffer.alloc(64 * 1024, 'a')
    const chunks = megabytes * 16
    let sent = 0
    const more = () => {
      while (sent < chunks && upload.write(chunk)) sent++
      if (sent < chunks) upload.once('drain', () => { sent++; more() })
    }
    more()
  })
}
