/**
 * Coalesces concurrent calls for one key into one execution. A settled result may be held for
 * `holdMs` more, so callers that arrive just after the leader finished (and before the leader's
 * writes are visible to them) reuse the result instead of calling the upstream again.
 */
export class SingleFlight<T> {
  private readonly inFlight = new Map<string, Promise<T>>()

  run(key: string, work: () => Promise<T>, holdMs = 0): Promise<T> {
    const pending = this.inFlight.get(key)
    if (pending) return pending
    const started = work()
    this.inFlight.set(key, started)
    const release = () => {
      if (holdMs > 0) setTimeout(() => this.release(key, started), holdMs).unref()
      else this.release(key, started)
    }
    started.then(release, () => this.release(key, started))
    return started
  }

  /** Drops a held or running result, so the next call starts afresh. */
  forget(key: string) {
    this.inFlight.delete(key)
  }

  clear() {
    this.inFlight.clear()
  }

  private release(key: string, settled: Promise<T>) {
    if (this.inFlight.get(key) === settled) this.inFlight.delete(key)
  }
}
