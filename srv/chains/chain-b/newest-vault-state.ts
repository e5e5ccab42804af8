import type { StateVersion } from './port.ts'
import type { VaultState } from './vault.ts'

const sameVersion = (a: StateVersion, b: StateVersion) => a.transactionId === b.transactionId && a.transactionHash === b.transactionHash

interface Decoding { version: StateVersion; answer: Promise<VaultState> }
interface Queued extends Decoding { state: string; resolve: (state: VaultState) => void; reject: (error: Error) => void }

/**
 * The vault's current state, decoded one state at a time. Decoding takes seconds once the vault
 * holds a few thousand records, and the vault may change every block: decoding every state that a
 * read found, in turn, would make each read wait behind all the states found before it, without
 * bound. Here a state found while another is being decoded waits as the one next; a newer one
 * found meanwhile takes its place, and whoever waited gets the newer state (a read of the vault's
 * current state is answered by a state at least as new as the one it found). So a read waits for
 * at most two decodings, however fast the vault changes.
 *
 * "Newer" while waiting is the indexer's transaction id, which grows along the chain. The state
 * kept after its decoding is only reused for the very same version: after a reorg the current state
 * may come from a transaction with a smaller id, and it is decoded then.
 */
export class NewestVaultState {
  /** The decoding started last: running, or done and kept. */
  private current?: Decoding & { running: boolean }
  private next?: Queued

  private readonly decode: (state: string) => Promise<VaultState>

  constructor(decode: (state: string) => Promise<VaultState>) {
    this.decode = decode
  }

  /** The decoding of this version, started or done, when there is one (no need to fetch the state then). */
  kept(version: StateVersion): Promise<VaultState> | undefined {
    if (this.current && sameVersion(this.current.version, version)) return this.current.answer
    if (this.next && sameVersion(this.next.version, version)) return this.next.answer
    return undefined
  }

  /** The decoded state of this version, or of a newer one found before its decoding could start. */
  read(version: StateVersion, state: string): Promise<VaultState> {
    const kept = this.kept(version)
    if (kept) return kept
    if (this.next) {
      if (version.transactionId > this.next.version.transactionId) Object.assign(this.next, { version, state })
      return this.next.answer
    }
    if (this.current?.running) {
      if (this.current.version.transactionId > version.transactionId) return this.current.answer
      return this.queue(version, state)
    }
    return this.start(version, state)
  }

  private queue(version: StateVersion, state: string): Promise<VaultState> {
    let resolve!: Queued['resolve']
    let reject!: Queued['reject']
    const answer = new Promise<VaultState>((settle, fail) => { resolve = settle; reject = fail })
    this.next = { version, state, answer, resolve, reject }
    return answer
  }

  private start(version: StateVersion, state: string): Promise<VaultState> {
    const decoding = { version, answer: this.decode(state), running: true }
    this.current = decoding
    const settled = () => {
      decoding.running = false
      const waiting = this.next
      if (!waiting) return
      this.next = undefined
      this.start(waiting.version, waiting.state).then(waiting.resolve, waiting.reject)
    }
    decoding.answer.then(settled, () => {
      // A failed decoding is not kept: the next read of that version tries again.
      if (this.current === decoding) this.current = undefined
      settled()
    })
    return decoding.answer
  }
}
