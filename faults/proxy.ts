import http from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A fault proxy in front of one upstream (chain A's Blockfrost-compatible API, chain B's indexer):
 * it passes requests through, or fails them the way a real upstream does, in a mode switched at
 * run time. Plain node:http, so it adds no dependency and fails exactly as told.
 */

export const FAULT_MODES = ['pass', 'slow', '5xx', 'reset', 'truncate', '429'] as const
export type FaultMode = (typeof FAULT_MODES)[number]

export interface FaultProxyOptions {
  /** How long `slow` holds a request before passing it on: longer than the servers' upstream time-out. */
  slowMs: number
  /** Seconds a `429` answer asks the caller to wait. */
  retryAfterS?: number
}

export class FaultProxy {
  mode: FaultMode = 'pass'
  /** Requests seen, by the mode they met. */
  readonly seen = new Map<FaultMode, number>()
  readonly url: string
  private readonly server: http.Server
  private readonly upstream: URL
  private readonly options: FaultProxyOptions

  private constructor(server: http.Server, url: string, upstream: URL, options: FaultProxyOptions) {
    this.server = server
    this.url = url
    this.upstream = upstream
    this.options = options
  }

  static async start(upstream: string, options: FaultProxyOptions): Promise<FaultProxy> {
    const server = http.createServer()
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    const target = new URL(upstream)
    const proxy = new FaultProxy(server, `http://127.0.0.1:${port}${target.pathname.replace(/\/$/, '')}`, target, options)
    server.on('request', (req, res) => proxy.handle(req, res))
    return proxy
  }

  /** The same path on the proxy as `upstreamUrl` has on the upstream (for URLs below the upstream's root). */
  proxied(upstreamUrl: string): string {
    const url = new URL(upstreamUrl)
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${url.pathname}${url.search}`
  }

  set(mode: FaultMode) {
    this.mode = mode
  }

  async stop() {
    this.server.closeAllConnections()
    await new Promise(resolve => this.server.close(resolve))
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const mode = this.mode
    this.seen.set(mode, (this.seen.get(mode) ?? 0) + 1)
    switch (mode) {
      case 'pass': return this.forward(req, res)
      case 'slow': return void setTimeout(() => this.forward(req, res), this.options.slowMs).unref()
      case '5xx': return this.answer(req, res, 500, {}, { error: 'fault proxy: internal error' })
      case '429': return this.answer(req, res, 429, { 'retry-after': String(this.options.retryAfterS ?? 1) }, { error: 'fault proxy: rate limited' })
      case 'reset': return void req.resume().on('end', () => res.socket?.resetAndDestroy())
      case 'truncate': return this.forward(req, res, true)
    }
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse, status: number, headers: Record<string, string>, body: unknown) {
    req.resume().on('end', () => res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body)))
  }

  /** Passes the request on; `truncate` sends the upstream's headers (its length included) and half its body, then closes. */
  private forward(req: http.IncomingMessage, res: http.ServerResponse, truncate = false) {
    const upstream = http.request({
      host: this.upstream.hostname, port: this.upstream.port, method: req.method, path: req.url,
      headers: { ...req.headers, host: this.upstream.host, 'accept-encoding': 'identity' },
    }, answer => {
      if (!truncate) {
        res.writeHead(answer.statusCode!, answer.headers)
        answer.pipe(res)
        return
      }
      const chunks: Buffer[] = []
      answer.on('data', chunk => chunks.push(chunk))
      answer.on('end', () => {
        const body = Buffer.concat(chunks)
        const headers = { ...answer.headers, 'content-length': String(body.length) }
        delete headers['transfer-encoding']
        res.writeHead(answer.statusCode!, headers)
        res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.socket?.destroy())
      })
    })
    upstream.on('error', () => res.socket?.destroy())
    req.pipe(upstream)
  }
}
