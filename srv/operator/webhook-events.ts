import { createHmac } from 'node:crypto'

/**
 * The events an operator subscribes to, and how a delivery is signed. A receiver checks a delivery
 * as docs/routes.md#webhooks says: the HMAC-SHA256 of `<t>.<body>` with the subscription's secret,
 * and `t` (unix seconds) close to its own clock.
 */
export const WEBHOOK_EVENTS = [
  'key.balance_low',
  'key.exhausted',
  'key.expired',
  'payment.credited',
  'voucher.redeemed',
  'upstream.down',
  'upstream.recovered',
  'reservations.swept',
  'follower.lag',
  'chainb.sponsor_low',
  'jobs.failure_rate',
] as const

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number]

export const isWebhookEvent = (name: string): name is WebhookEvent => (WEBHOOK_EVENTS as readonly string[]).includes(name)

/** The events of a subscription's comma-separated list. */
export const eventsOf = (list: string | null | undefined): string[] => (list ?? '').split(',').map(name => name.trim()).filter(Boolean)

export const SIGNATURE_HEADER = 'x-cag-signature'
export const EVENT_ID_HEADER = 'x-cag-event-id'
export const DELIVERY_ID_HEADER = 'x-cag-delivery-id'
export const EVENT_HEADER = 'x-cag-event'

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export function signatureOf(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')
  return `t=${unixSeconds},v1=${mac}`
}
