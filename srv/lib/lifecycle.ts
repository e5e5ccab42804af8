/**
 * The process's serving state. It serves until a stop signal; from then on it is stopping: the
 * readiness probe fails, new requests are refused, calls in flight finish (srv/server.ts).
 */
let stoppingSince: number | undefined

export const isStopping = (): boolean => stoppingSince !== undefined

/** Marks the process as stopping, once (the first signal counts). */
export function markStopping(now = Date.now()) {
  stoppingSince ??= now
}
