import type { IncomingMessage } from 'node:http'
import { shadowingMessage, shadowingProperty } from './shadowing-properties.ts'

/**
 * Reads a request's body as JSON, for routes answered before any body parser runs. Whatever the
 * content type says: clients often send JSON as curl's default form type. At most `limit` bytes;
 * an empty body is `undefined`. A property named like a member of every object is refused (shadowing-properties.ts).
 */
type JsonBody = { ok: true; value: unknown } | { ok: false; status: 400 | 413; code: string; message: string }

export async function readJsonBody(req: IncomingMessage, limit: number): Promise<JsonBody> {
  const declared = Number(req.headers['content-length'])
  if (declared > limit) return tooLarge(limit)
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > limit) return tooLarge(limit)
    chunks.push(chunk)
  }
  const text = Buffer.concat(chunks).toString('utf8').trim()
  if (!text) return { ok: true, value: undefined }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { ok: false, status: 400, code: 'INVALID_JSON', message: 'The request body is not valid JSON' }
  }
  const shadowing = shadowingProperty(value)
  if (shadowing) return { ok: false, status: 400, code: 'INVALID_PROPERTY_NAME', message: shadowingMessage(shadowing) }
  return { ok: true, value }
}

const tooLarge = (limit: number): JsonBody => ({ ok: false, status: 413, code: 'BODY_TOO_LARGE', message: `The request body exceeds ${limit} bytes` })
