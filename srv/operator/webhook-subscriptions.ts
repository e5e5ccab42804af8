import cds from '@sap/cds'
import { randomBytes } from 'node:crypto'
import { WebhookSecrets, WebhookSubscriptions } from '#cds-models/operator'
import { badInput } from '../lib/errors.ts'
import { currentActor, recordAction } from './audit.ts'
import { WEBHOOK_EVENTS, eventsOf, isWebhookEvent } from './webhook-events.ts'

/**
 * Webhook subscriptions as the operator service writes them: validated (an http(s) URL with a
 * host, known events, a threshold where an event needs one), their secret kept apart and shown
 * only in the answer to the create (or the change) that set it, each change audited without it.
 * Every instance keeps the active subscriptions in memory for the charge path: read again every
 * few seconds, and at once in the instance that changed them.
 */

const { SELECT, UPSERT, DELETE } = cds.ql

const REFRESH_MS = Number(process.env.WEBHOOK_SUBSCRIPTIONS_REFRESH_MS ?? 5000)
const URL_LENGTH = 2000
const SECRET_LENGTH = { least: 16, most: 200 }

export interface CachedSubscription {
  ID: string
  events: Set<string>
  balanceThreshold: number | null
}

let cached: CachedSubscription[] = []
let refresher: NodeJS.Timeout | undefined

/** The active subscriptions as last read (no database round trip). */
export const activeSubscriptions = (): CachedSubscription[] => cached

export async function refreshSubscriptions() {
  const rows = await cds.tx(() => SELECT.from(WebhookSubscriptions).columns('ID', 'events', 'balanceThreshold').where({ active: true }))
  cached = rows.map(row => ({ ID: row.ID!, events: new Set(eventsOf(row.events)), balanceThreshold: row.balanceThreshold === null || row.balanceThreshold === undefined ? null : Number(row.balanceThreshold) }))
}

const refreshQuietly = () => refreshSubscriptions().catch(error => cds.log('webhooks').warn('could not read the webhook subscriptions', error))

export function startSubscriptionCache() {
  void refreshQuietly()
  refresher ??= setInterval(refreshQuietly, REFRESH_MS).unref()
  cds.once('shutdown', () => {
    if (refresher) clearInterval(refresher)
    refresher = undefined
  })
}

interface SubscriptionInput {
  ID?: string
  url?: unknown
  events?: unknown
  active?: unknown
  balanceThreshold?: unknown
  description?: unknown
  secret?: unknown
}

/** Checks and normalises a create's or a change's data; a create must name a URL and events. */
export function validateSubscription(data: SubscriptionInput, creating: boolean) {
  if (creating || data.url !== undefined) data.url = validUrl(data.url)
  if (creating || data.events !== undefined) data.events = validEvents(data.events)
  if (data.secret !== undefined && data.secret !== null) {
    if (typeof data.secret !== 'string' || data.secret.length < SECRET_LENGTH.least || data.secret.length > SECRET_LENGTH.most) {
      throw badInput('INVALID_WEBHOOK_SECRET', `secret must be a string of ${SECRET_LENGTH.least} to ${SECRET_LENGTH.most} characters`, 'secret')
    }
  }
  if (data.balanceThreshold !== undefined && data.balanceThreshold !== null) {
    const text = String(data.balanceThreshold).trim()
    if (!/^\d{1,15}$/.test(text) || Number(text) < 1) throw badInput('INVALID_WEBHOOK_THRESHOLD', `balanceThreshold must be a whole number of units from 1, got '${text.slice(0, 40)}'`, 'balanceThreshold')
  }
}

function validUrl(value: unknown): string {
  if (typeof value !== 'string' || !value.trim()) throw badInput('INVALID_WEBHOOK_URL', 'url is required: the http(s) address deliveries are POSTed to', 'url')
  const text = value.trim()
  if (text.length > URL_LENGTH) throw badInput('INVALID_WEBHOOK_URL', `url must be at most ${URL_LENGTH} characters`, 'url')
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw badInput('INVALID_WEBHOOK_URL', `url must be an absolute http(s) URL, got '${text.slice(0, 80)}'`, 'url')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badInput('INVALID_WEBHOOK_URL', `url must be http or https, got '${url.protocol}'`, 'url')
  if (!url.hostname) throw badInput('INVALID_WEBHOOK_URL', 'url must name a host', 'url')
  if (url.username || url.password) throw badInput('INVALID_WEBHOOK_URL', 'url must carry no user or password: the signature authenticates the delivery', 'url')
  return text
}

function validEvents(value: unknown): string {
  if (typeof value !== 'string') throw badInput('UNKNOWN_WEBHOOK_EVENT', `events must be a comma-separated list of: ${WEBHOOK_EVENTS.join(', ')}`, 'events')
  const names = [...new Set(eventsOf(value))]
  if (!names.length) throw badInput('UNKNOWN_WEBHOOK_EVENT', `events must name at least one of: ${WEBHOOK_EVENTS.join(', ')}`, 'events')
  const unknown = names.filter(name => !isWebhookEvent(name))
  if (unknown.length) throw badInput('UNKNOWN_WEBHOOK_EVENT', `unknown event ${unknown.map(name => `'${name.slice(0, 40)}'`).join(', ')}; known: ${WEBHOOK_EVENTS.join(', ')}`, 'events')
  return names.join(',')
}

/** A balance_low subscription needs its threshold (checked on the row as it stands after the change). */
function checkThreshold(row: { events?: string | null; balanceThreshold?: unknown } | null | undefined) {
  if (row && eventsOf(row.events).includes('key.balance_low') && (row.balanceThreshold === null || row.balanceThreshold === undefined)) {
    throw badInput('INVALID_WEBHOOK_THRESHOLD', 'key.balance_low needs balanceThreshold: the units under which a key is reported', 'balanceThreshold')
  }
}

const newSecret = () => `whsec_${randomBytes(32).toString('base64url')}`

const readRow = (id: string) => SELECT.one.from(WebhookSubscriptions).where({ ID: id })

/**
 * A create, change or removal as CAP writes it, in the request's transaction, with the secret kept
 * apart and the change audited (before and after, never the secret; a secret set says so). The
 * answer to a create or a change that set the secret carries it, this once.
 */
export async function auditedSubscriptionChange(req: cds.Request, next: () => Promise<unknown>) {
  const data = (req.data ?? {}) as SubscriptionInput
  const creating = req.event === 'CREATE'
  const id = creating ? (data.ID ??= cds.utils.uuid()) : String((req.params[0] as { ID?: string })?.ID ?? req.params[0])
  const before = creating ? null : await readRow(id)
  if (!creating && !before) return next()
  if (req.event !== 'DELETE') validateSubscription(data, creating)
  const given = data.secret as string | null | undefined
  const secret = creating && !given ? newSecret() : (given ?? undefined)
  delete data.secret
  const result = await next()
  const after = req.event === 'DELETE' ? null : await readRow(id)
  checkThreshold(after)
  if (req.event === 'DELETE') await DELETE.from(WebhookSecrets).where({ subscription_ID: id })
  else if (secret) await UPSERT.into(WebhookSecrets).entries({ subscription_ID: id, secret })
  const action = `webhook.${creating ? 'create' : req.event === 'DELETE' ? 'delete' : 'update'}`
  await recordAction({ actor: currentActor(), action, target: `webhook:${id}`, before, after, reason: secret && !creating ? 'secret replaced' : null })
  req.on('succeeded', refreshQuietly)
  if (req.event === 'DELETE') return result
  return { ...(after as object), secret: secret ?? null }
}

