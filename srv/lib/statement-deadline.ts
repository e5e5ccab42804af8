import type cds from '@sap/cds'
import { requestAnswered, requestTimeLeft } from './request-work.ts'

/**
 * On PostgreSQL, a statement run for a request ends at the request's deadline: each transaction
 * begun for an unanswered request sets `statement_timeout` to the time the request has left, in
 * the statement CAP already sends at every begin to set the session's variables (no extra round
 * trip). Other transactions (background jobs, the ledger's writes after an answer) run without one.
 * SQLite runs a statement synchronously and cannot be interrupted: there the read's row budget
 * (query-options.ts) is what bounds it.
 */

/** The least a statement is given, so that a request at its deadline still fails fast rather than at once with a misleading error. */
const LEAST_MS = 50

interface SessionVariables {
  set(variables: object): Promise<unknown>
}

export function limitStatementsToRequestDeadline(db: cds.Service) {
  if ((db as { kind?: string }).kind !== 'postgres') return
  const service = db as unknown as SessionVariables
  const set = service.set
  service.set = function (variables: object) {
    return set.call(this, Object.create(variables, { statement_timeout: { value: String(statementTimeout()), enumerable: true } }))
  }
}

/** Milliseconds for the transaction's statements; 0 (no limit) outside an unanswered request. */
function statementTimeout(): number {
  const left = requestTimeLeft()
  if (left === undefined || requestAnswered()) return 0
  return Math.max(LEAST_MS, Math.ceil(left))
}
