import cds from '@sap/cds'
import { outsideRequest } from './request-work.ts'
import { FailureStreak } from './failure-streak.ts'
import { onStop } from './graceful-stop.ts'

/**
 * Background work of an owning service (DESIGN 2, 9.14): one job per owner, started once the
 * services are served, run every `intervalMs` in a transaction of its own as the privileged user
 * (as `cds.spawn` would, without its error line for every failed run), stopped on shutdown; its
 * failures are logged once per change of state (failure-streak.ts). A run never overlaps the one
 * before in the same process; it runs as work of its own, never stopped with a request that kicked it (request-work.ts); the
 * work must be safe to run in several instances at once (guarded UPDATEs from the states a
 * change may start in, so each change is made, and audited, once).
 */

export interface ScheduledJob {
  /**
   * Runs the work now in a transaction of its own, after the run in progress if there is one; a
   * failure is the caller's to report, a success ends a streak of failures.
   */
  runNow(): Promise<void>
  /** No further runs; waits for the one in progress. */
  stop(): Promise<void>
}

export function scheduleJob(name: string, intervalMs: number, work: () => Promise<unknown>): ScheduledJob {
  /** The run in progress, settled either way (its failure is reported where it is awaited). */
  let running: Promise<void> | undefined
  let stopped = false
  // A run that keeps failing (the database gone) is logged once per change of state, not once a run.
  const failures = new FailureStreak(name)

  const track = (run: Promise<unknown>) => {
    const settled: Promise<void> = run.then(() => failures.succeeded(), () => undefined).then(() => { if (running === settled) running = undefined })
    running = settled
    return run
  }
  const inOwnTransaction = () => outsideRequest(() => cds.tx({ user: cds.User.privileged }, () => work()))
  const tick = () => {
    if (running || stopped) return
    track(inOwnTransaction()).catch(error => failures.failed(error, `; it runs again in ${intervalMs} ms`))
  }
  const timer = outsideRequest(() => setInterval(tick, intervalMs).unref())

  const stop = async () => {
    stopped = true
    clearInterval(timer)
    await running
  }
  onStop(stop)

  return {
    async runNow() {
      await running
      await track(inOwnTransaction())
    },
    stop,
  }
}
