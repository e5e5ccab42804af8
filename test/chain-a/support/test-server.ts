import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { BlockfrostConfig } from '../../../srv/chains/chain-a/blockfrost.ts'
import type { ChainAConfig } from '../../../srv/chains/chain-a/config.ts'

export interface RecordedRequest {
  method: string
  path: string
  query: URLSearchParams
  headers: IncomingHttpHeaders
  body: Buffer
}

/** Answers one request; may leave it unanswered (to provoke timeouts). */
export type Handler = (request: RecordedRequest, response: ServerResponse) => void

export interface TestServer {
  url: string
  requests: RecordedRequest[]
  close(): Promise<void>
}

/** A node:http server on 127.0.0.1 with an ephemeral port that records every request. */
export async function startTestServer(handler: Handler): Promise<TestServer> {
  const requests: RecordedRequest[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', chunk => chunks.push(chunk))
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1')
      const request = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body: Buffer.concat(chunks) }
      requests.push(request)
      handler(request, res)
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>(resolve => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(JSON.stringify(body))
}

/** An error in the shape Blockfrost answers errors. */
export function sendUpstreamError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { status_code: status, error: `Error ${status}`, message }, headers)
}

/** A URL on which nothing listens: the port was just released. */
export async function refusedUrl(): Promise<string> {
  const server = await startTestServer(() => undefined)
  await server.close()
  return server.url
}

/** An adapter configuration for a Blockfrost-compatible server at `url`. */
export function upstreamConfig(overrides: Partial<ChainAConfig> = {}): BlockfrostConfig {
  return { network: 'devnet', timeoutMs: 5000, retries: 0, clientRateLimit: false, ...overrides }
}
