import cds from '@sap/cds'
import { LiveInstances } from '#cds-models/gateway'
import { forgetEndedWindows } from './failure-windows.ts'
import { newInstanceId } from '../lib/lease.ts'
import { requiresOptions } from '../lib/requires-options.ts'
import { scheduleJob } from '../lib/scheduled-job.ts'
import { liveInstances, shareLimitsAmong } from '../lib/token-buckets.ts'

/**
 * The instances serving now, for the limits they share: each instance refreshes its row of
 * gateway.LiveInstances every heartbeat and counts the rows refreshed within the last STALE_BEATS
 * heartbeats; the token buckets give each instance its share by that count. An instance that
 * stops removes its row; one that died drops out of the count once its row is stale. The same
 * job forgets the failure windows that have ended.
 */

const { SELECT, UPSERT, DELETE } = cds.ql
const LOG = cds.log('gateway')

const options = requiresOptions('gateway', { GATEWAY_INSTANCE_HEARTBEAT_S: 'instanceHeartbeatS' }, { named: 'variable' })
const heartbeatMs = () => options.reader(options.options()).number('instanceHeartbeatS', 5) * 1000

/** A row this many heartbeats old no longer counts: its instance is gone. */
const STALE_BEATS = 3
/** A row this many heartbeats old is removed. */
const FORGOTTEN_BEATS = 20

export interface Heartbeat {
  stop(): Promise<void>
}

/** Registers this instance and keeps its count of the live instances fresh, from now until stop. */
export async function startHeartbeat(): Promise<Heartbeat> {
  const id = newInstanceId()
  const startedAt = new Date().toISOString()
  const interval = heartbeatMs()
  if (!(interval > 0)) throw new Error(`Setting ${options.optionName('instanceHeartbeatS')} must be a positive number of seconds`)
  let failing = false
  const beat = async () => {
    try {
      const count = await refresh(id, startedAt, interval)
      if (failing) LOG.info('the instance heartbeat works again')
      failing = false
      if (count !== liveInstances()) LOG.info(`limits are shared by ${count} live instance${count === 1 ? '' : 's'}`)
      shareLimitsAmong(count)
    } catch (error) {
      // Logged once per change of state; meanwhile the last count stays.
      if (!failing) LOG.warn(`cannot refresh the instance heartbeat; the limits stay shared by ${liveInstances()}:`, (error as Error).message)
      failing = true
    }
  }
  await cds.tx({ user: cds.User.privileged }, beat)
  const job = scheduleJob('instance heartbeat', interval, beat)
  return {
    async stop() {
      await job.stop()
      await cds.tx(() => DELETE.from(LiveInstances).where({ ID: id })).catch(() => undefined)
      shareLimitsAmong(1)
    },
  }
}

/** Writes this instance's heartbeat, forgets what is long gone, and answers the live instances (this one included). */
async function refresh(id: string, startedAt: string, interval: number): Promise<number> {
  const now = Date.now()
  return cds.tx(async () => {
    await UPSERT.into(LiveInstances).entries({ ID: id, startedAt, seenAt: now })
    await DELETE.from(LiveInstances).where({ seenAt: { '<': now - FORGOTTEN_BEATS * interval } })
    await forgetEndedWindows(now)
    const live = (await SELECT.one.from(LiveInstances).columns('count(1) as count').where({ seenAt: { '>=': now - STALE_BEATS * interval } })) as { count?: number | string } | null
    return Math.max(1, Number(live?.count ?? 1))
  })
}
