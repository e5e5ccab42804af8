import cds from '@sap/cds'
import { request } from 'node:http'
import { connect } from 'node:net'
import { issueKey, type IssueRequest } from '../../srv/gateway/accounts.ts'
import { parseRawResponse, type RawResponse } from './raw-http.ts'

export type { RawResponse }

/** Helpers for tests of the hosted gateway (enable it with GATEWAY_ENABLED before cds.test). */

export async function issueTestKey(request: Partial<IssueRequest> = {}) {
  return issueKey({ units: 1000, plan: 'standard', ...request })
}

export const bearer = (key: string) => ({ headers: { authorization: `Bearer ${key}` } })

export async function balanceOf(keyId: string): Promise<number> {
  const { ApiKeys } = cds.entities('gateway')
  const row = await cds.tx(() => SELECT.one.from(ApiKeys).columns('unitsLeft').where({ ID: keyId }))
  return Number(row.unitsLeft)
}

export async function ledgerOf(keyId: string): Promise<any[]> {
  const { LedgerEntries } = cds.entities('gateway')
  const rows = await cds.tx(() => SELECT.from(LedgerEntries).where({ apiKey_ID: keyId }).orderBy('createdAt', 'ID'))
  return rows.map((row: any) => ({ ...row, units: Number(row.units) }))
}

export const ledgerSum = (entries: { units: number }[]) => entries.reduce((sum, entry) => sum + entry.units, 0)

const SETTLE_WITHIN_MS = 15_000

/**
 * Waits until no charge of the key is pending (commits are written right after the answer) and no
 * unit lease of it is open (an idle lease is handed back after GATEWAY_LEASE_IDLE_MS).
 */
export async function settled(keyId: string) {
  const giveUpAt = Date.now() + SETTLE_WITHIN_MS
  while (Date.now() < giveUpAt) {
    if (!(await ledgerOf(keyId)).some(entry => entry.state === 'pending')) return
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  throw new Error(`charges or leases of ${keyId} stayed pending`)
}

/** Sends exactly these bytes as the request line and headers (no client-side path normalisation). */
export function rawRequest(baseUrl: string, method: string, target: string, headers: Record<string, string> = {}, body = ''): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl)
  const lines = [`${method} ${target} HTTP/1.1`, `Host: ${hostname}:${port}`, 'Connection: close', ...Object.entries(headers).map(([n, v]) => `${n}: ${v}`)]
  if (body) lines.push(`Content-Length: ${Buffer.byteLength(body)}`)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname === 'localhost' ? '127.0.0.1' : hostname)
    const chunks: Buffer[] = []
    socket.on('data', chunk => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('end', () => resolve(parseRawResponse(Buffer.concat(chunks).toString('latin1'))))
    socket.write(lines.join('\r\n') + '\r\n\r\n' + body, 'latin1')
  })
}

export interface Reply {
  status: number
  body: any
  headers: Record<string, string | string[] | undefined>
}

export interface SendFrom {
  /** The local (loopback) address to send from: limits on failed attempts count per client address. */
  from: string
  /** JSON text as sent; `body` is stringified otherwise. */
  raw?: string
  body?: unknown
  /** Sent as Authorization: Bearer. */
  token?: string
  headers?: Record<string, string>
}

let nextClientAddress = 10
/** A loopback address (127.0.0.N) no other test of the file sends from. */
export const freshClientAddress = () => `127.0.0.${nextClientAddress++}`

/** A request from a chosen local address, the answer's JSON parsed. */
export function sendFrom(baseUrl: string, method: 'GET' | 'POST', path: string, options: SendFrom): Promise<Reply> {
  const { hostname, port } = new URL(baseUrl)
  const text = options.raw ?? (options.body === undefined ? '' : JSON.stringify(options.body))
  const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...options.headers }
  if (options.token) headers.authorization = `Bearer ${options.token}`
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname === 'localhost' ? '127.0.0.1' : hostname, port, path, method, headers, localAddress: options.from }, res => {
      const chunks: Buffer[] = []
      res.on('data', chunk => chunks.push(chunk))
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8')
        resolve({ status: res.statusCode!, body: body ? JSON.parse(body) : undefined, headers: res.headers })
      })
    })
    req.on('error', reject)
    req.end(text)
  })
}

/**
 * Gateway settings for a test file's in-process server: set now (call it before cds.test) and
 * removed after the file. Limits are lifted unless the file sets them: exactness, not refusal, is
 * what such files test.
 */
export function gatewaySettings(settings: Record<string, string>) {
  const all = { GATEWAY_ENABLED: 'true', GATEWAY_RATE_PER_SECOND: '100000', GATEWAY_BURST: '100000', GATEWAY_MAX_CALLS_IN_FLIGHT: '100000', ...settings }
  Object.assign(process.env, all)
  afterAll(() => {
    for (const name of Object.keys(all)) delete process.env[name]
  })
}

/**
 * Calls (`burst`) until the key holds an open unit lease with undrawn units; answers its ledger
 * entry. The last charges are written within a few milliseconds of the answers, so it waits 50 ms
 * before each look.
 */
export async function untilLeased(keyId: string, burst: () => Promise<unknown>) {
  for (let round = 0; round < 50; round++) {
    await burst()
    await new Promise(resolve => setTimeout(resolve, 50))
    const open = (await ledgerOf(keyId)).find(entry => entry.kind === 'lease' && entry.state === 'pending' && entry.units < 0)
    if (open) return open
  }
  throw new Error(`no unit lease of ${keyId} was taken`)
}
