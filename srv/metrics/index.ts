import cds from '@sap/cds'
import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { collectDefaultMetrics } from 'prom-client'
import { sendError } from '../lib/http-safety.ts'
import { collectAtScrape } from './collectors.ts'
import { metricsConfig } from './config.ts'
import { PREFIX, registry } from './instruments.ts'

/**
 * `/metrics`: this instance's metrics in Prometheus's text format (docs/operations.md#metrics), mounted at
 * bootstrap. Only for a scraper that sends `Authorization: Bearer <METRICS_TOKEN>`; without a
 * token configured the route is off (404 METRICS_NOT_CONFIGURED) in every profile. A refusal
 * (401) reads nothing and charges nothing; on the hosted gateway the route is a free own route, so
 * no API key is asked for and none is counted against.
 */

type Next = (error?: unknown) => void

const READ_METHODS = ['GET', 'HEAD']
/** Longer Authorization values are no token of ours: refused without hashing them. */
const MAX_AUTHORIZATION_LENGTH = 1024
const CHALLENGE = { 'www-authenticate': 'Bearer realm="metrics"' }

/** The express middleware, mounted as `app.use('/metrics', serveMetrics)`: req.url is the rest of the path. */
export function serveMetrics(req: IncomingMessage, res: ServerResponse, next: Next) {
  answer(req, res).catch(next)
}

async function answer(req: IncomingMessage, res: ServerResponse) {
  const path = (req.url ?? '/').split('?')[0]
  if (path !== '/' && path !== '') return sendError(res, 404, 'UNKNOWN_RESOURCE', `Nothing is served at /metrics${path.slice(0, 200)}`)
  if (!READ_METHODS.includes(req.method ?? '')) return sendError(res, 405, 'METHOD_NOT_ALLOWED', '/metrics answers GET and HEAD only', { allow: READ_METHODS.join(', ') })
  const { token, collectTimeoutMs } = metricsConfig()
  if (!token) return sendError(res, 404, 'METRICS_NOT_CONFIGURED', '/metrics is off: set METRICS_TOKEN to a secret for scrapers to send as a bearer token')
  const presented = bearerToken(req.headers.authorization)
  if (presented === undefined) return sendError(res, 401, 'METRICS_TOKEN_REQUIRED', '/metrics needs the metrics token: Authorization: Bearer <METRICS_TOKEN>', CHALLENGE)
  if (!sameSecret(presented, token)) return sendError(res, 401, 'INVALID_METRICS_TOKEN', 'The bearer token is not the metrics token', CHALLENGE)
  const body = await scrape(collectTimeoutMs)
  res.setHeader('content-type', registry.contentType)
  res.setHeader('cache-control', 'no-store')
  res.setHeader('content-length', Buffer.byteLength(body))
  res.end(req.method === 'HEAD' ? undefined : body)
}

/** The token of `Authorization: Bearer <token>` (the scheme in any case), if the header has that form. */
function bearerToken(header: string | undefined): string | undefined {
  if (typeof header !== 'string' || header.length > MAX_AUTHORIZATION_LENGTH) return undefined
  const match = /^bearer +([^\s]+) *$/i.exec(header)
  return match?.[1]
}

/** Compared as hashes of equal length, in constant time: the answer's timing tells nothing of the token. */
function sameSecret(presented: string, token: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest()
  return timingSafeEqual(digest(presented), digest(token))
}

let defaultMetricsOn = false

/** The text of every metric, after the values read at scrape are read; the process's own metrics start with the first scrape. */
async function scrape(collectTimeoutMs: number): Promise<string> {
  if (!defaultMetricsOn) {
    defaultMetricsOn = true
    collectDefaultMetrics({ register: registry, prefix: PREFIX })
    cds.log('metrics').info('the first scrape of /metrics: process metrics are measured from now on')
  }
  await collectAtScrape(collectTimeoutMs)
  return registry.metrics()
}
