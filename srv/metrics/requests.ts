import type { IncomingMessage, ServerResponse } from 'node:http'
import { httpDuration, httpRequests } from './instruments.ts'
import { methodLabel, routeFamily, statusClass } from './route-family.ts'

/**
 * The first middleware of every request: counts its answer by route family, method and status
 * class, and times it. The family is taken from the target as it arrived, before aliases and the
 * gateway rewrite it; a request whose connection closed before its answer was complete counts as
 * `aborted`.
 */
export function measureRequests(req: IncomingMessage, res: ServerResponse, next: () => void) {
  const family = routeFamily(req.url ?? '/')
  const method = methodLabel(req.method)
  const stop = httpDuration.startTimer({ family })
  let counted = false
  const count = (status: string) => {
    if (counted) return
    counted = true
    stop()
    httpRequests.inc({ family, method, status })
  }
  res.once('finish', () => count(statusClass(res.statusCode)))
  res.once('close', () => count('aborted'))
  next()
}
