import cds from '@sap/cds'
import { outsideRequest } from './request-work.ts'
import { onStop } from './graceful-stop.ts'

/**
 * Background work of an owning service (DESIGN 2, 9.14): one job per owner, started once the
 * services are served, run every `intervalMs` with `cds.spawn` in a transaction of its own as the
 * privileged user, stopped on shutdown. A run never overlaps the one before in the same process;
 * it runs as work of its own, never stopped with a request that kicked it (request-work.ts); the
 * work must be safe to run in several instances at once (guarded UPDATEs from the states a
 * change may start in, so each change is made, and audited, once).
 */

export interface ScheduledJob {
  /** Runs the work now in a transaction of its own, after the run in progress if there is one. */
  runNow(): Promise<void>
  /** No further runs; waits for the one in progress. */
  stop(): Promise<void>
}

export function scheduleJob(name: string, intervalMs: number, work: () => Promise<unknown>): ScheduledJob {
  /** The run in progress, settled either way (its failure is reported where it is awaited). */
  let running: Promise<void> | undefined
  let stopped = false

  const track = (run: Promise<unknown>) => {
    const settled: Promise<void> = run.then(() => undefined, () => undefined).then(() => { if (running === settled) running = undefined })
    running = settled
    return run
  }
  const ticks = outsideRequest(() => cds.spawn({ every: intervalMs, user: cds.User.privileged }, () => (running || stopped ? Promise.resolve() : track(work()))))
  ticks.on('failed', error => cds.log('jobs').error(`${name} failed; it runs again in ${intervalMs} ms:`, error))

  const stop = async () => {
    stopped = true
    clearInterval(ticks.timer)
    await running
  }
  onStop(stop)

  return {
    async runNow() {
      await running
      await track(outsideRequest(() => cds.tx({ user: cds.User.privileged }, () => work())))
    },
    stop,
  }
}
