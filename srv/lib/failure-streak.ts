import cds from '@sap/cds'

/**
 * How work that runs again and again reports its failures: once per change of state, never once
 * per run. The first failure is logged with its error; while the same error repeats nothing is
 * logged but a reminder every `reminderMs` with the count; a different error is logged as such;
 * the first success after failures logs "recovered after N failures in T s".
 */

type Log = Pick<ReturnType<typeof cds.log>, 'error' | 'info'>

interface Streak {
  failures: number
  since: number
  /** What the error says, to tell the same failure from a different one. */
  signature: string
  lastLogged: number
}

export const REMINDER_MS = 60_000

export class FailureStreak {
  private streak?: Streak
  private readonly name: string
  private readonly log: Log
  private readonly reminderMs: number
  private readonly now: () => number

  constructor(name: string, { log = cds.log('jobs') as Log, reminderMs = REMINDER_MS, now = Date.now }: { log?: Log; reminderMs?: number; now?: () => number } = {}) {
    this.name = name
    this.log = log
    this.reminderMs = reminderMs
    this.now = now
  }

  /** How many failures in a row so far (0: it works). */
  get failures(): number {
    return this.streak?.failures ?? 0
  }

  failed(error: unknown, retry = '') {
    const now = this.now()
    const signature = signatureOf(error)
    const streak = this.streak
    if (!streak) {
      this.streak = { failures: 1, since: now, signature, lastLogged: now }
      return this.log.error(`${this.name} failed${retry}:`, error)
    }
    streak.failures++
    if (signature !== streak.signature) {
      streak.signature = signature
      streak.lastLogged = now
      return this.log.error(`${this.name} fails differently now (${this.sofar(streak, now)})${retry}:`, error)
    }
    if (now - streak.lastLogged < this.reminderMs) return
    streak.lastLogged = now
    this.log.error(`${this.name} still failing (${this.sofar(streak, now)}), the same error: ${signature}`)
  }

  succeeded() {
    const streak = this.streak
    if (!streak) return
    this.streak = undefined
    this.log.info(`${this.name} recovered after ${this.sofar(streak, this.now())}`)
  }

  private sofar(streak: Streak, now: number) {
    return `${streak.failures} failure${streak.failures === 1 ? '' : 's'} in ${Math.round((now - streak.since) / 1000)} s`
  }
}

function signatureOf(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown }
  return `${code === undefined ? '' : `${String(code)} `}${String(message ?? error)}`.slice(0, 300)
}
