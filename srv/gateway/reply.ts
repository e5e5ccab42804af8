import type { ServerResponse } from 'node:http'

/** The gateway's own answers: an OData-shaped error body, and nothing charged unless said otherwise. */
export function reply(res: ServerResponse, status: number, code: string, message: string, extra: object = {}, headers: Record<string, string | number> = {}) {
  res.statusCode = status
  res.setHeader('content-type', 'application/json')
  if (!res.hasHeader('x-access-units-charged')) res.setHeader('x-access-units-charged', 0)
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value)
  res.end(JSON.stringify({ error: { code, message, ...extra } }))
}
