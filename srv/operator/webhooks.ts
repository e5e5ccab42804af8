import cds from '@sap/cds'
import { WebhookDeliveries, WebhookDelivery, WebhookSecrets, WebhookSubscriptions } from '#cds-models/operator'
import { deliver, publish, unitsTaken } from '#cds-models/OperatorWebhooks'
import { DELIVERY_ID_HEADER, EVENT_HEADER, EVENT_ID_HEADER, SIGNATURE_HEADER, eventsOf, isWebhookEvent, signatureOf } from './webhook-events.ts'
import { activeSubscriptions, startSubscriptionCache, type CachedSubscription } from './webhook-subscriptions.ts'
import { checkWatchSettings, startWatches } from './webhook-watches.ts'

/**
 * Webhooks (webhooks.cds). An event is published inside the transaction that makes it true: each
 * delivery is recorded and its first attempt queued on CAP's persistent queue in that transaction,
 * so nothing is sent for a change that rolls back, and the queue sends once it commits. The queue
 * claims each message for one instance (a SELECT ... FOR UPDATE SKIP LOCKED on PostgreSQL, the
 * write lock on SQLite) and survives restarts.
 *
 * An attempt is one queued message. It reads what it sends in a short transaction of its own and
 * claims its attempt number with a guarded UPDATE (a second copy of the same attempt sends nothing),
 * POSTs with no transaction open (a SQLite file's transactions hold the write lock), then records
 * the outcome in the queue's transaction, together with the next attempt's message when it failed:
 * the record, the removal of this message and the next one commit together. So the back-off is the
 * delivery's own (RETRY_DELAYS_S), and each attempt shows in WebhookDeliveries as it happens;
 * a queue retry of a thrown error could not record the attempt (its transaction rolls back).
 */

const { SELECT, INSERT, UPDATE } = cds.ql
const { pending, retrying, delivered, failed } = WebhookDelivery.status

/** Seconds before each further attempt: 1 s, 2 s, 4 s ... 1 h; then the delivery has failed. */
export const RETRY_DELAYS_S = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 3600]
const ATTEMPT_TIMEOUT_MS = 10_000
const ERROR_LENGTH = 500

/**
 * A plain service, not an application service: its queued attempts run after the request that
 * published the event was answered, and the request's entry guard (srv/lib/service-entry.ts)
 * refuses work for an answered request in every application service. It also keeps the call on
 * every charge (`unitsTaken`) free of the generic handlers an application service runs.
 */
export class OperatorWebhooks extends cds.Service {
  init() {
    this.on(publish, req => publishEvent(this, req.data.event!, dataOf(req.data.data)))
    this.on(unitsTaken, req => onUnitsTaken(this, req.data.key!, Number(req.data.before), Number(req.data.after)))
    this.on(deliver, req => attempt(this, req.data.delivery!, req.data.attempt ?? 1))
    checkWatchSettings()
    cds.once('served', () => startSubscriptionCache())
    cds.once('listening', () => {
      void wakeForWaitingAttempts()
      startStalledAttemptRecovery(this)
      startWatches()
    })
    return super.init()
  }
}

const dataOf = (text: string | null | undefined): Record<string, unknown> => (text ? JSON.parse(text) : {})

/** Every active subscription that wants the event gets a delivery (read from the database: these events are rare). */
async function publishEvent(service: cds.Service, event: string, data: Record<string, unknown>) {
  if (!isWebhookEvent(event)) throw new Error(`unknown webhook event '${event}'`)
  const subscriptions = await SELECT.from(WebhookSubscriptions).columns('ID', 'events').where({ active: true })
  const wanting = subscriptions.filter(subscription => eventsOf(subscription.events).includes(event))
  if (wanting.length) await queueEvent(service, event, data, wanting.map(subscription => subscription.ID!))
}

/**
 * A charge took units from a key. Called on every metered call: it reads the subscriptions from
 * memory and touches the database only when a threshold (or zero) was crossed.
 */
async function onUnitsTaken(service: cds.Service, keyId: string, before: number, after: number) {
  const subscriptions = activeSubscriptions()
  if (!subscriptions.length) return
  if (before > 0 && after <= 0) {
    const wanting = subscriptions.filter(subscription => subscription.events.has('key.exhausted'))
    if (wanting.length) await queueEvent(service, 'key.exhausted', { key: keyId, unitsLeft: after }, wanting.map(subscription => subscription.ID))
  }
  const crossed = (subscription: CachedSubscription) =>
    subscription.events.has('key.balance_low') && subscription.balanceThreshold !== null && before >= subscription.balanceThreshold && after < subscription.balanceThreshold
  for (const subscription of subscriptions.filter(crossed)) {
    await queueEvent(service, 'key.balance_low', { key: keyId, unitsLeft: after, threshold: subscription.balanceThreshold }, [subscription.ID])
  }
}

/** Records one delivery per subscription and queues its first attempt, in the current transaction. */
async function queueEvent(service: cds.Service, event: string, data: Record<string, unknown>, subscriptionIds: string[]) {
  const eventId = cds.utils.uuid()
  const occurredAt = new Date().toISOString()
  const payload = JSON.stringify({ id: eventId, event, occurredAt, data })
  const queue = cds.queued(service)
  for (const subscriptionId of subscriptionIds) {
    const ID = cds.utils.uuid()
    await INSERT.into(WebhookDeliveries).entries({ ID, subscription_ID: subscriptionId, eventId, event, payload, status: pending, attempts: 0, createdAt: occurredAt, nextAttemptAt: occurredAt })
    await queue.send('deliver', { delivery: ID, attempt: 1 })
  }
}

interface Outcome {
  ok: boolean
  statusCode: number | null
  error: string | null
}

/** One attempt at one delivery (the queued `deliver`). */
async function attempt(service: cds.Service, deliveryId: string, number: number) {
  const claimed = await cds.tx(() => claimAttempt(deliveryId, number))
  if (!claimed) return void cds.log('webhooks').info(`attempt ${number} of delivery ${deliveryId} was taken already (or the delivery has ended): not sent again`)
  const outcome = claimed.gone ? { ok: false, statusCode: null, error: claimed.gone } : await post(claimed, deliveryId)
  const now = new Date().toISOString()
  const last = { lastStatusCode: outcome.statusCode, lastError: outcome.error?.slice(0, ERROR_LENGTH) ?? null, lastAttemptAt: now }
  if (outcome.ok) return UPDATE.entity(WebhookDeliveries).set({ ...last, status: delivered, deliveredAt: now, nextAttemptAt: null }).where({ ID: deliveryId })
  const delayS = claimed.gone ? undefined : RETRY_DELAYS_S[number - 1]
  if (delayS === undefined) return UPDATE.entity(WebhookDeliveries).set({ ...last, status: failed, nextAttemptAt: null }).where({ ID: deliveryId })
  const nextAttemptAt = new Date(Date.now() + delayS * 1000).toISOString()
  await UPDATE.entity(WebhookDeliveries).set({ ...last, status: retrying, nextAttemptAt }).where({ ID: deliveryId })
  await cds.queued(service).send({ event: 'deliver', data: { delivery: deliveryId, attempt: number + 1 }, queue: { after: delayS * 1000 } } as unknown as cds.Request)
}

interface Claimed {
  url: string
  secret: string
  payload: string
  eventId: string
  event: string
  /** Why there is nothing to send to: the subscription was removed or deactivated. */
  gone?: string
}

/**
 * Takes attempt `number` of the delivery, once: a guarded UPDATE from the attempt before it, in a
 * short transaction of its own. Answers what to send, or undefined when the attempt was taken
 * already (or the delivery has ended).
 */
async function claimAttempt(deliveryId: string, number: number): Promise<Claimed | undefined> {
  const taken = await UPDATE.entity(WebhookDeliveries).set({ attempts: number, lastAttemptAt: new Date().toISOString() })
    .where({ ID: deliveryId, attempts: number - 1, status: { in: [pending, retrying] } })
  if (taken !== 1) return undefined
  const delivery = await SELECT.one.from(WebhookDeliveries).columns('payload', 'eventId', 'event', 'subscription_ID').where({ ID: deliveryId })
  const subscription = await SELECT.one.from(WebhookSubscriptions).columns('url', 'active').where({ ID: delivery!.subscription_ID })
  const secret = await SELECT.one.from(WebhookSecrets).columns('secret').where({ subscription_ID: delivery!.subscription_ID })
  const sending = { url: subscription?.url ?? '', secret: secret?.secret ?? '', payload: delivery!.payload!, eventId: delivery!.eventId!, event: delivery!.event! }
  if (!subscription || !secret) return { ...sending, gone: 'the subscription was removed' }
  if (!subscription.active) return { ...sending, gone: 'the subscription was deactivated' }
  return sending
}

/** POSTs the signed body; any answer but 2xx, a time-out or a network failure is a failed attempt. */
async function post(claimed: Claimed, deliveryId: string): Promise<Outcome> {
  const signature = signatureOf(claimed.secret, claimed.payload, Math.floor(Date.now() / 1000))
  try {
    const response = await fetch(claimed.url, {
      method: 'POST',
      body: claimed.payload,
      redirect: 'manual',
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      headers: {
        'content-type': 'application/json', 'user-agent': 'chain-access-gateway-webhooks',
        [SIGNATURE_HEADER]: signature, [EVENT_ID_HEADER]: claimed.eventId, [EVENT_HEADER]: claimed.event, [DELIVERY_ID_HEADER]: deliveryId,
      },
    })
    await response.arrayBuffer().catch(() => undefined)
    if (response.status >= 200 && response.status < 300) return { ok: true, statusCode: response.status, error: null }
    return { ok: false, statusCode: response.status, error: `the receiver answered HTTP ${response.status}` }
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause
    const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s` : cause?.code ?? cause?.message ?? (error as Error).message
    return { ok: false, statusCode: null, error: `the receiver was not reached: ${reason}` }
  }
}

/**
 * An attempt whose instance stopped while it was sending (after its claim, before its outcome) has
 * a queue message CAP never takes again (in processing, never failed) and a claim no copy of it can
 * repeat. Such a delivery (claimed longer ago than an attempt can take, with no outcome recorded) is
 * given its next attempt: by one instance, through a guarded UPDATE of the claim it found. The
 * receiver may have had the stalled attempt: it de-duplicates by the event id.
 */
const STALLED_AFTER_S = Number(process.env.WEBHOOK_STALLED_ATTEMPT_S ?? 60)

async function recoverStalledAttempts(service: cds.Service) {
  const before = new Date(Date.now() - STALLED_AFTER_S * 1000).toISOString()
  const stalled = await cds.tx(() => SELECT.from(WebhookDeliveries).columns('ID', 'attempts', 'lastAttemptAt', 'nextAttemptAt')
    .where({ status: { in: [pending, retrying] }, attempts: { '>': 0 }, lastAttemptAt: { '<': before } }))
  for (const delivery of stalled.filter(row => !row.nextAttemptAt || Date.parse(row.nextAttemptAt) <= Date.parse(row.lastAttemptAt!))) {
    const attempts = Number(delivery.attempts)
    await cds.tx(async () => {
      const now = new Date().toISOString()
      const taken = await UPDATE.entity(WebhookDeliveries)
        .set({ status: retrying, nextAttemptAt: now, lastError: `attempt ${attempts} was left unfinished by a stopped instance` })
        .where({ ID: delivery.ID, attempts, lastAttemptAt: delivery.lastAttemptAt })
      if (taken === 1) await cds.queued(service).send('deliver', { delivery: delivery.ID, attempt: attempts + 1 })
    })
  }
}

let recovery: NodeJS.Timeout | undefined

function startStalledAttemptRecovery(service: cds.Service) {
  const recover = () => recoverStalledAttempts(service).catch(error => cds.log('webhooks').warn('could not recover stalled webhook attempts', error))
  void recover()
  recovery ??= setInterval(recover, STALLED_AFTER_S * 1000).unref()
  cds.once('shutdown', () => {
    if (recovery) clearInterval(recovery)
    recovery = undefined
  })
}

let wake: NodeJS.Timeout | undefined

/**
 * A restarted instance flushes the queue's due messages at once (CAP does), but a message waiting
 * for its back-off would wait for the queue's next periodic flush (an hour): so it is flushed when
 * the earliest waiting attempt is due.
 */
async function wakeForWaitingAttempts() {
  const next = await cds.tx(() => SELECT.one.from(WebhookDeliveries).columns('min(nextAttemptAt) as due').where({ status: { in: [pending, retrying] } })) as { due?: string | null } | undefined
  if (!next?.due) return
  const inMs = Math.max(0, Date.parse(next.due) - Date.now()) + 250
  if (wake) clearTimeout(wake)
  wake = setTimeout(() => void (cds as unknown as { flush(): Promise<void> }).flush().catch(error => cds.log('webhooks').warn('could not flush the queue', error)), inMs)
  wake.unref()
  cds.once('shutdown', () => wake && clearTimeout(wake))
}

export default OperatorWebhooks
