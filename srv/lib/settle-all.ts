/**
 * `Promise.all` that waits for every promise to settle before it answers (the first rejection, if
 * any). Inside a request, work running alongside a failure must end before the request's
 * transaction does: a query still under way after the rollback would begin the transaction again
 * and keep its database connection, which on SQLite (one connection) stops every other request.
 */
export async function settleAll<T extends readonly unknown[]>(promises: T): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const outcomes = await Promise.allSettled(promises)
  const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected')
  if (failed) throw failed.reason
  return outcomes.map(outcome => (outcome as PromiseFulfilledResult<unknown>).value) as { -readonly [K in keyof T]: Awaited<T[K]> }
}
