import type { IncomingMessage, ServerResponse } from 'node:http'
import { sendError } from '../lib/http-safety.ts'
import { readiness } from './readiness.ts'
import { healthSettings } from './settings.ts'

/**
 * The probes, free and without a key, hosted or self-hosted (they are no service, so CAP's
 * authentication never applies): `/health` (liveness: the process serves; it reads nothing) and
 * `/ready` (readiness: readiness.ts), mounted at bootstrap as `app.use('/health', ...)` and
 * `app.use('/ready', ...)`. They answer GET and HEAD; query strings are ignored.
 */

type Next = (error?: unknown) => void

const READ_METHODS = ['GET', 'HEAD']
const STARTED = Date.now()

/** Reads the settings once at start, so that a malformed one ends the start rather than a probe. */
export function checkHealthSettings() {
  healthSettings()
}

export function serveLiveness(req: IncomingMessage, res: ServerResponse, next: Next) {
  if (!probed(req, res, next, '/health')) return
  send(req, res, 200, { status: 'UP', startedAt: new Date(STARTED).toISOString(), uptimeSeconds: Math.floor((Date.now() - STARTED) / 1000) })
}

export function serveReadiness(req: IncomingMessage, res: ServerResponse, next: Next) {
  if (!probed(req, res, next, '/ready')) return
  readiness().then(({ ready, checks, failing }) => {
    if (ready) return send(req, res, 200, { status: 'READY', checks })
    const error = { code: 'NOT_READY', message: `This instance should take no traffic now: ${failing.join('; ')}` }
    send(req, res, 503, { status: 'NOT_READY', checks, error })
  }).catch(next)
}

/** Whether the request is the probe's own: its exact path (anything under it is left to the 404), read with GET or HEAD. */
function probed(req: IncomingMessage, res: ServerResponse, next: Next, route: string): boolean {
  const path = (req.url ?? '/').split('?')[0]
  if (path !== '/' && path !== '') {
    next()
    return false
  }
  if (READ_METHODS.includes(req.method ?? '')) return true
  sendError(res, 405, 'METHOD_NOT_ALLOWED', `${route} answers GET and HEAD only`, { allow: READ_METHODS.join(', ') })
  return false
}

function send(req: IncomingMessage, res: ServerResponse, status: number, body: object) {
  const text = JSON.stringify(body)
  res.statusCode = status
  res.setHeader('content-type', 'application/json')
  res.setHeader('content-length', Buffer.byteLength(text))
  res.setHeader('cache-control', 'no-store')
  res.end(req.method === 'HEAD' ? undefined : text)
}
