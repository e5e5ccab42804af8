import cds from '@sap/cds'
import { stopIfAnswered } from './request-work.ts'

/**
 * A check a request must pass when it enters a service, before CAP's own checks and before any
 * handler reads its input. It throws to refuse; it may answer a check the result must pass too.
 */
type EntryCheck = (srv: cds.ApplicationService, req: cds.Request) => ((result: unknown) => void) | undefined | void

/**
 * Runs the checks, in the order given, in front of every event of every application service.
 *
 * The one place that replaces a framework method (`srv.handle`), and why: CAP runs a service's
 * `before` handlers in parallel (test/lib/cap-seams.test.ts pins this), so a check registered as one
 * more `before` handler, even prepended, would refuse a request while another `before` handler is
 * still querying, and that handler would go on in a rolled-back request (on PostgreSQL, a connection
 * left idle in its transaction). `srv.handle` is where CAP dispatches every event of a service
 * (reads, writes, actions and functions; pinned by the same test), so one wrapper there covers every
 * service and every operation without code of its own.
 */
export function guardServiceEntry(services: Iterable<cds.Service>, checks: EntryCheck[]) {
  for (const srv of services) {
    if (!(srv instanceof cds.ApplicationService)) continue
    const service = srv as unknown as { handle(req: cds.Request): Promise<unknown> }
    const handle = service.handle
    service.handle = function (req: cds.Request) {
      stopIfAnswered()
      const resultChecks = checks.map(check => check(srv, req)).filter(check => typeof check === 'function')
      if (!resultChecks.length) return handle.call(this, req)
      return handle.call(this, req).then(result => {
        for (const check of resultChecks) check(result)
        return result
      })
    }
  }
}
