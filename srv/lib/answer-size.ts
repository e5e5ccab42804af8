import type { IncomingMessage, ServerResponse } from 'node:http'
import { queryBudget } from './query-budget.ts'

/**
 * No service answer larger than QUERY_MAX_ANSWER_BYTES leaves the server: such an answer is
 * replaced by 400 RESPONSE_TOO_LARGE (the hosted gateway refunds it), so that one read cannot
 * tie up the connection and the client's memory with more than a bounded page. Reads are bounded
 * before they run by their row budget (query-options.ts); this bounds what wide rows add to it.
 */

const maxAnswerBytes = () => queryBudget().maxAnswerBytes

type End = ServerResponse['end']

export function boundAnswerSize(_req: IncomingMessage, res: ServerResponse, next: () => void) {
  const max = maxAnswerBytes()
  const end = res.end as (...args: unknown[]) => ServerResponse
  res.end = function (this: ServerResponse, ...args: unknown[]) {
    const [chunk] = args
    const size = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk instanceof Uint8Array ? chunk.byteLength : 0
    if (size <= max || res.headersSent || res.statusCode >= 300) return end.apply(this, args)
    const body = JSON.stringify({ error: { code: 'RESPONSE_TOO_LARGE', message: `The answer would be ${size} bytes; at most ${max} are sent: select fewer properties, lower $top or expand less` } })
    res.statusCode = 400
    res.removeHeader('etag')
    res.setHeader('content-type', 'application/json')
    res.setHeader('content-length', Buffer.byteLength(body))
    return end.call(this, body)
  } as End
  next()
}
