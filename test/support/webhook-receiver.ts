import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** An answer that never comes: the request is held open (until the receiver stops). */
export const HOLD = 0

/** A delivery as a receiver saw it. */
export interface Received {
  path: string
  headers: Record<string, string | string[] | undefined>
  body: string
  /** When it arrived, unix seconds by this process's clock. */
  arrivedAt: number
  /** The status it was answered with. */
  answered: number
}

/**
 * A webhook receiver on 127.0.0.1 (port 0): it keeps every delivery and answers each with the
 * next status of `answers` (then 200), so a test can make it fail a few times.
 */
export class WebhookReceiver {
  readonly received: Received[] = []
  private answers: number[] = []
  private server?: Server
  url = ''

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', chunk => chunks.push(chunk))
      req.on('end', () => {
        const answered = this.answers.shift() ?? 200
        this.received.push({ path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), arrivedAt: Math.floor(Date.now() / 1000), answered })
        if (answered === HOLD) return
        res.statusCode = answered
        res.end(answered < 300 ? 'ok' : 'not now')
      })
    })
    await new Promise<void>(resolve => this.server!.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
    return this
  }

  /** The next deliveries are answered with these statuses, in order (HOLD: never answered). */
  answerNext(...statuses: number[]) {
    this.answers.push(...statuses)
  }

  /** From now on every delivery is answered 200. */
  answerAllOk() {
    this.answers.length = 0
  }

  /** Deliveries of one event (by its id). */
  of(eventId: string) {
    return this.received.filter(delivery => delivery.headers['x-cag-event-id'] === eventId)
  }

  /** Waits until `condition` holds of what arrived (polling; generous by default: the machine is busy). */
  async until(condition: (received: Received[]) => boolean, timeoutMs = 60_000): Promise<Received[]> {
    const giveUpAt = Date.now() + timeoutMs
    while (!condition(this.received)) {
      if (Date.now() > giveUpAt) throw new Error(`the receiver did not see what was awaited within ${timeoutMs} ms; it got ${this.received.length}: ${this.received.map(r => `${r.answered} ${r.body}`).join('\n')}`)
      await new Promise(resolve => setTimeout(resolve, 100))
    }
    return this.received
  }

  stop() {
    const server = this.server
    if (!server) return Promise.resolve()
    const closed = new Promise<void>(resolve => server.close(() => resolve()))
    server.closeAllConnections()
    return closed
  }
}

/**
 * What a receiver does with `x-cag-signature: t=<unix seconds>,v1=<hex>`: the HMAC-SHA256 of
 * `<t>.<body>` with the secret, compared in constant time, and `t` within `toleranceS` of its clock.
 */
export function verifySignature(secret: string, body: string, header: string | undefined, nowS = Math.floor(Date.now() / 1000), toleranceS = 300) {
  const parts = Object.fromEntries((header ?? '').split(',').map(part => part.split('=') as [string, string]))
  const t = Number(parts.t)
  if (!Number.isInteger(t) || !parts.v1) return { valid: false, fresh: false }
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest()
  const given = Buffer.from(parts.v1, 'hex')
  return { valid: given.length === expected.length && timingSafeEqual(given, expected), fresh: Math.abs(nowS - t) <= toleranceS }
}
