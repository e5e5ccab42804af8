import { AsyncLocalStorage } from 'node:async_hooks'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { ApiError } from './errors.ts'
import { queryBudget } from './query-budget.ts'

/**
 * A request's work ends with its answer. Once the answer has left before the work was done (the
 * gateway answered 504 because the call took too long, a refusal was sent) or the client went
 * away, what still runs for the request stops at its next step that asks (`stopIfAnswered`: every
 * database statement, every upstream call, every row the read index completes) instead of running
 * on for nobody. A statement already running on PostgreSQL ends at the request's deadline
 * (statement-deadline.ts).
 *
 * Work a request starts for later (a job run, a follower woken) runs outside it (`outsideRequest`),
 * so it is not stopped with the request.
 */

interface RequestWork {
  answered: boolean
  /** When the request's statements must end, as epoch milliseconds (undefined: no deadline). */
  deadline?: number
}

const work = new AsyncLocalStorage<RequestWork>()

/** How long any one request's work may take when nothing sets a shorter deadline (QUERY_TIMEOUT_MS). */
const queryTimeoutMs = () => queryBudget().timeoutMs

/** Bootstrap middleware: the work of everything that handles this request is tied to its answer, and ends by its deadline. */
export function tieWorkToAnswer(req: IncomingMessage, res: ServerResponse, next: () => void) {
  const state: RequestWork = { answered: false, deadline: Date.now() + queryTimeoutMs() }
  res.once('close', () => (state.answered = true))
  work.run(state, next)
}

/** Sets when the current request's work must end (the gateway's timeout), unless an earlier deadline is set. */
export function setRequestDeadline(at: number) {
  const state = work.getStore()
  if (state && (state.deadline === undefined || at < state.deadline)) state.deadline = at
}

/** Milliseconds the current request's work has left before its deadline; undefined outside a request or without one. */
export function requestTimeLeft(): number | undefined {
  const deadline = work.getStore()?.deadline
  return deadline === undefined ? undefined : deadline - Date.now()
}

/** Whether the current request has been answered (or its client left) while its work goes on. */
export const requestAnswered = () => work.getStore()?.answered === true

export class RequestEnded extends ApiError {
  constructor() {
    super(503, 'REQUEST_ENDED', 'The request was answered or its client went away; the work left for it was stopped')
  }
}

/** Throws RequestEnded when the current request was answered already: its remaining work is for nobody. */
export function stopIfAnswered() {
  if (requestAnswered()) throw new RequestEnded()
}

/** Runs `fn` as work of its own, not of the request that started it (a job it queued, a follower it woke). */
export function outsideRequest<T>(fn: () => T): T {
  return work.exit(fn)
}
