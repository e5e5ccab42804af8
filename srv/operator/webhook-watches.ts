import cds from '@sap/cds'
import { ApiKey, ApiKeys } from '#cds-models/gateway'
import { SyncState as ChainASyncState } from '#cds-models/chaina'
import { Job, Jobs, SyncState as ChainBSyncState } from '#cds-models/chainb'
import { WebhookWatchStates } from '#cds-models/operator'
import { chainAEnabled } from '../chains/chain-a/config.ts'
import { chainB } from '../chains/chain-b/index.ts'
import { chainBEnabled } from '../chains/chain-b/config.ts'
import { healthSettings } from '../health/settings.ts'
import { requiresOptions, type Environment } from '../lib/requires-options.ts'
import { publishWebhookEvent } from '../lib/webhooks.ts'
import { activeSubscriptions } from './webhook-subscriptions.ts'
import type { WebhookEvent } from './webhook-events.ts'

/**
 * The events that tell of a state rather than of a change someone made: a key past its expiry, a
 * follower behind the tip, the chain-B sponsor low on its fee resource, chain-B jobs failing. Each
 * instance looks every `intervalS` (only for the events some active subscription wants); the state
 * each look finds is one row of WebhookWatchStates, and only the instance whose guarded write moves
 * that row into the state publishes, in the same transaction: told once, however many instances
 * look. A state left (the follower caught up) is recorded silently, so the next time it is entered
 * is told again.
 */

const { SELECT, INSERT, UPDATE } = cds.ql

const ENVIRONMENT: Environment = {
  WEBHOOK_WATCH_INTERVAL_S: 'intervalS',
  WEBHOOK_FOLLOWER_LAG_BLOCKS: 'followerLagBlocks',
  WEBHOOK_JOB_FAILURE_PERCENT: 'jobFailurePercent',
  WEBHOOK_JOB_FAILURE_WINDOW_S: 'jobFailureWindowS',
  WEBHOOK_JOB_FAILURE_MIN_JOBS: 'jobFailureMinJobs',
}

const options = requiresOptions('webhooks', ENVIRONMENT, { named: 'variable' })

export interface WatchSettings {
  /** How often each instance looks. */
  intervalS: number
  /** follower.lag: more blocks than this behind the tip (by default the readiness probe's maxLagBlocks). */
  followerLagBlocks: number
  /** jobs.failure_rate: more than this share (percent) of the chain-B jobs ended in the window failed ... */
  jobFailurePercent: number
  /** ... the window, in seconds, back from now ... */
  jobFailureWindowS: number
  /** ... with at least this many jobs ended in it (a single failure is no rate). */
  jobFailureMinJobs: number
}

/** The watches' settings; throws on a value out of range (checked at start, see checkWatchSettings). */
export function watchSettings(): WatchSettings {
  const read = options.reader(options.options())
  const within = (path: string, fallback: number, least: number, most = Number.MAX_SAFE_INTEGER) => {
    const value = read.number(path, fallback)
    if (!(value >= least && value <= most)) throw new Error(`Setting ${options.optionName(path)} must be a number from ${least} to ${most}, got ${value}`)
    return value
  }
  return {
    intervalS: within('intervalS', 30, 0.1, 86_400),
    followerLagBlocks: within('followerLagBlocks', healthSettings().maxLagBlocks, 0),
    jobFailurePercent: within('jobFailurePercent', 50, 0, 100),
    jobFailureWindowS: within('jobFailureWindowS', 900, 1),
    jobFailureMinJobs: within('jobFailureMinJobs', 5, 1),
  }
}

export const checkWatchSettings = () => void watchSettings()

/** Keys that expired longer ago than this are not told of (a first start would tell of every old key). */
const EXPIRED_LOOKBACK_MS = 7 * 24 * 3600 * 1000
/** At most this many expired keys are told of in one look; the rest in the next ones. */
const EXPIRED_PER_LOOK = 500

/**
 * Moves the watch `name` from the state `from` (undefined: no row yet) to `to`, and publishes the
 * event when given, in one transaction of its own: only one instance's move succeeds.
 */
async function moveState(name: string, from: string | undefined, to: string, event?: { name: WebhookEvent; data: Record<string, unknown> }): Promise<boolean> {
  try {
    return await cds.tx(async () => {
      const changedAt = new Date().toISOString()
      if (from === undefined) await INSERT.into(WebhookWatchStates).entries({ name, state: to, changedAt })
      else if ((await UPDATE.entity(WebhookWatchStates).set({ state: to, changedAt }).where({ name, state: from })) !== 1) return false
      if (event) await publishWebhookEvent(event.name, event.data)
      return true
    })
  } catch (error) {
    // The row was inserted by another instance at the same time: its move counts.
    if (from === undefined && (await stateOf(name)) !== undefined) return false
    throw error
  }
}

async function stateOf(name: string): Promise<string | undefined> {
  const row = await cds.tx(() => SELECT.one.from(WebhookWatchStates).columns('state').where({ name }))
  return row?.state ?? undefined
}

/** A two-state watch: `inside` is told (with its data) when entered, the way out is recorded silently. */
async function watchCondition(name: string, inside: boolean, event: WebhookEvent, data: Record<string, unknown>) {
  const now = inside ? 'on' : 'off'
  const before = await stateOf(name)
  if (before === now || (before === undefined && !inside)) return
  await moveState(name, before, now, inside ? { name: event, data } : undefined)
}

/** key.expired: each key whose validUntil passed (not revoked), once per expiry (a new validUntil is a new expiry). */
async function watchExpiredKeys() {
  const now = Date.now()
  const keys = await cds.tx(() => SELECT.from(ApiKeys).columns('ID', 'hint', 'label', 'validUntil', 'plan_name')
    .where({ validUntil: { between: new Date(now - EXPIRED_LOOKBACK_MS).toISOString(), and: new Date(now).toISOString() }, status: { '!=': ApiKey.status.revoked } })
    .orderBy('validUntil').limit(EXPIRED_PER_LOOK))
  if (!keys.length) return
  const names = keys.map(key => `key.expired:${key.ID}`)
  const states = new Map((await cds.tx(() => SELECT.from(WebhookWatchStates).columns('name', 'state').where({ name: { in: names } }))).map(row => [row.name, row.state]))
  for (const key of keys) {
    const name = `key.expired:${key.ID}`
    const expiry = new Date(key.validUntil!).toISOString()
    const told = states.get(name) ?? undefined
    if (told === expiry) continue
    await moveState(name, told, expiry, { name: 'key.expired', data: { key: key.ID, hint: key.hint, label: key.label ?? null, plan: key.plan_name, validUntil: expiry } })
  }
}

/** follower.lag: a chain's follower (one for all instances) more than followerLagBlocks behind the tip it last saw. */
async function watchFollowerLag(settings: WatchSettings) {
  const followers = [
    ...(chainAEnabled() ? [{ chain: 'chain-a', entity: ChainASyncState }] : []),
    ...(chainBEnabled() ? [{ chain: 'chain-b', entity: ChainBSyncState }] : []),
  ]
  for (const { chain, entity } of followers) {
    const row = await cds.tx(() => SELECT.one.from(entity).columns('chainHeight', 'indexedHeight'))
    if (row?.chainHeight === null || row?.chainHeight === undefined) continue
    const lagBlocks = Math.max(0, Number(row.chainHeight) - Number(row.indexedHeight ?? -1))
    await watchCondition(`follower.lag:${chain}`, lagBlocks > settings.followerLagBlocks, 'follower.lag',
      { chain, lagBlocks, threshold: settings.followerLagBlocks, chainHeight: Number(row.chainHeight), indexedHeight: row.indexedHeight ?? null })
  }
}

/** chainb.sponsor_low: the sponsor's balance in the fee resource under the connector's sponsorMinBalance. */
async function watchSponsorBalance() {
  if (!chainBEnabled()) return
  const connector = await chainB()
  if (!connector.canSubmit) return
  const sponsor = connector.sponsorKey().publicKey
  const balance = BigInt(await connector.port.sponsorBalance(sponsor))
  const threshold = connector.settings.sponsorMinBalance
  await watchCondition('chainb.sponsor_low', balance < threshold, 'chainb.sponsor_low', { sponsor, balance: String(balance), threshold: String(threshold), network: connector.settings.network })
}

/** jobs.failure_rate: of the chain-B jobs that ended in the window, more than jobFailurePercent failed. */
async function watchJobFailures(settings: WatchSettings) {
  if (!chainBEnabled()) return
  const since = new Date(Date.now() - settings.jobFailureWindowS * 1000).toISOString()
  const { confirmed, failed } = Job.status
  const ended = (await cds.tx(() => SELECT.from(Jobs).columns('status', 'count(1) as jobs').where({ finishedAt: { '>=': since }, status: { in: [confirmed, failed] } }).groupBy('status'))) as unknown as { status: string; jobs: number | string }[]
  const count = (status: string) => Number(ended.find(row => row.status === status)?.jobs ?? 0)
  const total = count(confirmed) + count(failed)
  const percent = total ? (100 * count(failed)) / total : 0
  const high = total >= settings.jobFailureMinJobs && percent > settings.jobFailurePercent
  await watchCondition('jobs.failure_rate', high, 'jobs.failure_rate',
    { failed: count(failed), ended: total, percent: Math.round(percent * 10) / 10, threshold: settings.jobFailurePercent, windowSeconds: settings.jobFailureWindowS })
}

const WATCHES: { event: WebhookEvent; look: (settings: WatchSettings) => Promise<void> }[] = [
  { event: 'key.expired', look: watchExpiredKeys },
  { event: 'follower.lag', look: watchFollowerLag },
  { event: 'chainb.sponsor_low', look: watchSponsorBalance },
  { event: 'jobs.failure_rate', look: watchJobFailures },
]

/** One look by every watch some active subscription wants; a failing watch is logged and tried at the next look. */
export async function lookOnce() {
  const wanted = new Set(activeSubscriptions().flatMap(subscription => [...subscription.events]))
  const settings = watchSettings()
  for (const watch of WATCHES.filter(({ event }) => wanted.has(event))) {
    await watch.look(settings).catch(error => cds.log('webhooks').warn(`could not look for ${watch.event}`, error))
  }
}

let timer: NodeJS.Timeout | undefined

/** Looks every intervalS until shutdown, one look at a time. */
export function startWatches() {
  if (timer) return
  const { intervalS } = watchSettings()
  let looking = false
  timer = setInterval(() => {
    if (looking) return
    looking = true
    void lookOnce().finally(() => (looking = false))
  }, intervalS * 1000).unref()
  cds.once('shutdown', () => {
    if (timer) clearInterval(timer)
    timer = undefined
  })
}
