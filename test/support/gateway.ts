import cds from '@sap/cds'
import { connect } from 'node:net'
import { issueKey, type IssueRequest } from '../../srv/gateway/accounts.ts'

/** Helpers for tests of the hosted gateway (enable it with GATEWAY_ENABLED before cds.test). */

export async function issueTestKey(request: IssueRequest = {}) {
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

/** Waits until no charge of the key is pending (commits are written right after the answer). */
export async function settled(keyId: string) {
  for (let i = 0; i < 200; i++) {
    if (!(await ledgerOf(keyId)).some(entry => entry.state === 'pending')) return
    await new Promise(resolve => setTimeout(resolve, 10))
  }
  throw new Error(`charges of ${keyId} stayed pending`)
}

export interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
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
    socket.on('end', () => resolve(parseResponse(Buffer.concat(chunks).toString('latin1'))))
    socket.write(lines.join('\r\n') + '\r\n\r\n' + body, 'latin1')
  })
}

function parseResponse(text: string): RawResponse {
  const [head, ...rest] = text.split('\r\n\r\n')
  const [statusLine, ...headerLines] = head.split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of headerLines) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
  }
  let body = rest.join('\r\n\r\n')
  if (headers['transfer-encoding'] === 'chunked') body = dechunk(body)
  return { status: Number(statusLine.split(' ')[1]), headers, body }
}

function dechunk(text: string): string {
  let out = ''
  let rest = text
  while (rest) {
    const lineEnd = rest.indexOf('\r\n')
    const size = parseInt(rest.slice(0, lineEnd), 16)
    if (!size) break
    out += rest.slice(lineEnd + 2, lineEnd + 2 + size)
    rest = rest.slice(lineEnd + 2 + size + 2)
  }
  return out
}
