import cds from '@sap/cds'
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { refusal, type Answer } from './answers.ts'
import type { Product } from './keys.ts'

/** The HTTP between the gateway and its remote products (remote-products.ts, remote-plugin.ts). */

/** A call's body is read whole before it is forwarded (a grant the remote no longer knows is issued again and the call sent once more). */
export const MAX_FORWARDED_BODY = 1024 * 1024
/** What of a body that is too large is read and dropped before the connection is cut. */
const DROPPED_AT_MOST = 16 * 1024 * 1024
/** Request headers that reach the remote; the key (Authorization, x-agent-token) and hop-by-hop headers never do. */
const FORWARDED_REQUEST_HEADERS = ['accept', 'accept-language', 'content-type', 'prefer', 'if-match', 'if-none-match', 'odata-version', 'odata-maxversion', 'idempotency-key', 'x-request-id']
/** Answer headers passed back; the units headers are the gateway's own. */
const PASSED_ANSWER_HEADERS = ['content-type', 'etag', 'location', 'odata-version', 'preference-applied', 'retry-after', 'cache-control', 'content-disposition', 'x-idempotent-replay']

/** The answer to a call whose body is larger than a forwarded call takes. */
export const bodyTooLarge = (product: Product): Answer => refusal(413, 'BODY_TOO_LARGE', `A call forwarded to the remote ${product} product takes at most ${MAX_FORWARDED_BODY} bytes`)

/**
 * The request body, whole, or undefined when it is larger than a forwarded call takes (declared so,
 * or found so while reading). Then the rest is read and dropped, so that the client, still sending,
 * gets to read the answer (a connection closed under it would lose it), up to a bound past which
 * the connection is cut.
 */
export function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  if (req.method === 'GET' || req.method === 'HEAD') return Promise.resolve(Buffer.alloc(0))
  const tooLarge = () => {
    let dropped = 0
    req.on('data', (chunk: Buffer) => {
      dropped += chunk.length
      if (dropped > DROPPED_AT_MOST) req.socket.destroy()
    })
    req.resume()
    return undefined
  }
  if (Number(req.headers['content-length']) > MAX_FORWARDED_BODY) return Promise.resolve(tooLarge())
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= MAX_FORWARDED_BODY) return void chunks.push(chunk)
      req.off('data', onData).off('end', onEnd)
      resolve(tooLarge())
    }
    const onEnd = () => resolve(Buffer.concat(chunks))
    req.on('data', onData).on('end', onEnd).once('error', reject)
  })
}

export function forwardedHeaders(req: IncomingMessage, token: string | undefined, body: Buffer): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = token ? { 'x-agent-token': token } : {}
  for (const name of FORWARDED_REQUEST_HEADERS) if (req.headers[name] !== undefined) headers[name] = req.headers[name]
  if (body.length) headers['content-length'] = body.length
  return headers
}

export interface CallOptions {
  method: string
  headers: OutgoingHttpHeaders
  body: Buffer
  timeoutMs: number
}

export class RemoteTimeout extends Error {}

/** One HTTP call; resolves with the answer's head (its body still to read), rejects on a connection that fails or a time-out. */
export function call(url: string, options: CallOptions): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const send = url.startsWith('https:') ? httpsRequest : httpRequest
    const request = send(url, { method: options.method, headers: options.headers }, resolve)
    const timer = setTimeout(() => request.destroy(new RemoteTimeout(`no answer within ${Math.max(0, options.timeoutMs)} ms`)), Math.max(0, options.timeoutMs))
    request.on('error', reject)
    request.on('close', () => clearTimeout(timer))
    request.end(options.body.length ? options.body : undefined)
  })
}

export async function readAll(answer: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of answer) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** The remote's answer as it came, with the headers a client needs. */
export function passBack(answer: IncomingMessage, res: ServerResponse): Promise<void> {
  res.statusCode = answer.statusCode ?? 502
  for (const name of PASSED_ANSWER_HEADERS) if (answer.headers[name] !== undefined) res.setHeader(name, answer.headers[name]!)
  return new Promise(resolve => {
    answer.pipe(res)
    answer.on('end', resolve)
    answer.on('error', () => {
      res.destroy()
      resolve()
    })
  })
}

/** Why a forwarded call failed, as the caller is answered (and refunded). */
export function remoteFailure(product: Product, error: unknown, doing: string): Answer {
  if (error instanceof RemoteTimeout) return refusal(504, 'REMOTE_PRODUCT_TIMEOUT', `The remote ${product} product did not answer in time (${doing}); the call's units are refunded`)
  const code = (error as { code?: string }).code
  if (code && /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|EPIPE)$/.test(code)) {
    return refusal(503, 'REMOTE_PRODUCT_UNAVAILABLE', `The remote ${product} product cannot be reached (${doing}); the call's units are refunded. Try again shortly`, {}, { 'Retry-After': 5 })
  }
  cds.log('gateway').warn(`the remote ${product} product failed ${doing}:`, (error as Error).message)
  return refusal(502, 'REMOTE_PRODUCT_ERROR', `The remote ${product} product failed (${doing}); the call's units are refunded`)
}
