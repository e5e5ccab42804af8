/**
 * Coalesces concurrent calls for one key into one execution. A settled result is held for
 * `holdMs` more, so callers that arrive just after the leader finished (and before the leader's
 * writes are visible to them) reuse the result instead of calling the upstream again.
 */
export class SingleFlight<T> {
  private readonly inFlight = new Map<string, Promise<T>>()
  private readonly holdMs: number

  constructor(holdMs = 0) {
    this.holdMs = holdMs
  }

  run(key: string, work: () => Promise<T>): Promise<T> {
    const pending = this.inFlight.get(key)
    if (pending) return pending
    const started = work()
    this.inFlight.set(key, started)
    const release = () => {
      if (this.holdMs > 0) setTimeout(() => this.forget(key, started), this.holdMs).unref()
      else this.forget(key, started)
    }
    started.then(release, () => this.forget(key, started))
    return started
  }

  private forget(key: string, settled: Promise<T>) {
    if (this.inFlight.get(key) === settled) this.inFlight.delete(key)
  }
}
