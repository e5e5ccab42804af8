import type { ServerResponse } from 'node:http'

/**
 * How the gateway answers by itself: JSON bodies, OData-shaped error bodies with a stable code, and
 * the units headers. Every answer says what it charged (`x-access-units-charged`, 0 unless a
 * metered call succeeded); an answer to a known key also says what the key has left.
 */

export const UNITS_CHARGED = 'x-access-units-charged'
export const UNITS_LEFT = 'x-access-units-left'

type Headers = Record<string, string | number>

/** An answer the gateway gives itself, before or instead of CAP. */
export interface Answer {
  status: number
  body: unknown
  headers?: Headers
}

/** An error answer: `{ error: { code, message, ...details } }`. */
export function refusal(status: number, code: string, message: string, details: object = {}, headers: Headers = {}): Answer {
  return { status, body: { error: { code, message, ...details } }, headers }
}

/** The same refusal, saying what the key has left. */
export const withUnitsLeft = (answer: Answer, unitsLeft: number): Answer => ({ ...answer, headers: { ...answer.headers, [UNITS_LEFT]: unitsLeft } })

export const ok = (body: unknown, headers: Headers = {}): Answer => ({ status: 200, body, headers })

export function send(res: ServerResponse, answer: Answer) {
  res.statusCode = answer.status
  res.setHeader('content-type', 'application/json')
  if (!res.hasHeader(UNITS_CHARGED)) res.setHeader(UNITS_CHARGED, 0)
  for (const [name, value] of Object.entries(answer.headers ?? {})) res.setHeader(name, value)
  res.end(JSON.stringify(answer.body))
}

export function setUnits(res: ServerResponse, charged: number, left: number) {
  res.setHeader(UNITS_CHARGED, charged)
  res.setHeader(UNITS_LEFT, left)
}
