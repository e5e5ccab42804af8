import { Agent, request } from 'node:http'
import { connect } from 'node:net'
import { parseRawResponse } from '../support/raw-http.ts'

/** One request of the fuzz suite: what is sent, and how it is named and grouped in a report. */
export interface Probe {
  /** The case, as a failure names it. */
  name: string
  /** The operation or entity set it attacks, for grouping failures. */
  group: string
  /** What is hostile about it (the vocabulary of skipping after a crash). */
  kinds: string[]
  method: string
  /** The request target (path and query) exactly as sent. */
  target: string
  headers?: Record<string, string>
  body?: string
  /** The exact request bytes, for what an HTTP client refuses to send. */
  raw?: string
  /** Sent without the API key. */
  anonymous?: boolean
  /** A case's own expectation: a problem, or undefined when the answer is right. */
  expect?: (answer: Answer) => string | undefined
  /** How long to wait for the answer (15 s). */
  timeoutMs?: number
}

export interface Answer {
  status: number
  headers: Record<string, string>
  body: string
}

export type Exchange = { answer: Answer } | { error: string; unsent?: boolean }

export const TIMEOUT_MS = 15_000
const agent = new Agent({ keepAlive: true, maxSockets: 16 })
/** How many requests were sent again on a fresh connection after an idle kept-alive one was closed under them. */
export let resentOnFreshConnection = 0

/**
 * Sends one probe over a kept-alive connection. The server closes an idle connection after its
 * keep-alive timeout; when it does so just as the client reuses it (likely on a busy machine), the
 * request dies unread with ECONNRESET and no byte of an answer. That is the client's race, not the
 * server's failure: such a request is sent once more on a fresh connection, so a connection reset
 * that reaches the runner always means the server dropped a connection it had taken.
 */
export async function send(baseUrl: string, key: string, probe: Probe): Promise<Exchange> {
  const first = await sendOnce(baseUrl, key, probe, agent)
  if (!('lostOnReusedSocket' in first)) return first
  resentOnFreshConnection++
  const again = await sendOnce(baseUrl, key, probe, false)
  return 'lostOnReusedSocket' in again ? { error: again.error } : again
}

type Attempt = Exchange | { error: string; lostOnReusedSocket: true }

function sendOnce(baseUrl: string, key: string, probe: Probe, through: Agent | false): Promise<Attempt> {
  const headers: Record<string, string> = { ...(probe.anonymous ? {} : { authorization: `Bearer ${key}` }), ...probe.headers }
  const timeoutMs = probe.timeoutMs ?? TIMEOUT_MS
  if (probe.raw !== undefined) return sendRaw(baseUrl, probe.raw.replace('{{authorization}}', headers.authorization ?? ''), timeoutMs)
  const { hostname, port } = new URL(baseUrl)
  const body = probe.body === undefined ? undefined : Buffer.from(probe.body)
  if (body) headers['content-length'] = String(body.length)
  return new Promise(resolve => {
    let outgoing: ReturnType<typeof request>
    let answered = false
    try {
      outgoing = request({ hostname, port, method: probe.method, path: probe.target, headers, agent: through }, incoming => {
        answered = true
        const chunks: Buffer[] = []
        incoming.on('data', chunk => chunks.push(chunk))
        incoming.on('error', error => resolve({ error: describe(error) }))
        incoming.on('end', () => resolve({ answer: { status: incoming.statusCode ?? 0, headers: flatten(incoming.headers), body: Buffer.concat(chunks).toString('utf8') } }))
      })
    } catch (error) {
      return resolve({ error: `the client refused to send it: ${describe(error)}`, unsent: true })
    }
    outgoing.setTimeout(timeoutMs, () => outgoing.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)))
    outgoing.on('error', error => {
      const reset = (error as NodeJS.ErrnoException).code === 'ECONNRESET'
      if (reset && outgoing.reusedSocket && !answered) resolve({ error: describe(error), lostOnReusedSocket: true })
      else resolve({ error: describe(error) })
    })
    outgoing.end(body)
  })
}

/** Writes these bytes on a fresh connection and reads until the server closes it. */
export function sendRaw(baseUrl: string, bytes: string, timeoutMs = TIMEOUT_MS): Promise<Exchange> {
  const { hostname, port } = new URL(baseUrl)
  return new Promise(resolve => {
    const socket = connect(Number(port), hostname)
    const chunks: Buffer[] = []
    const finish = (error?: Error) => {
      const text = Buffer.concat(chunks).toString('latin1')
      resolve(text ? { answer: parseRawResponse(text) } : { error: error ? describe(error) : 'the connection closed without an answer' })
    }
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)))
    socket.on('data', chunk => chunks.push(chunk))
    socket.on('error', finish)
    socket.on('close', () => finish())
    socket.write(bytes, 'latin1')
  })
}

function flatten(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value
  return flat
}

function describe(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string }
  return code ? `${code}: ${message}` : String(message ?? error)
}

export function closeConnections() {
  agent.destroy()
}
