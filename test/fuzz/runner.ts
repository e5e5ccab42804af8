import type { Answer, Probe } from './http.ts'
import { requestExcerpt, type Findings } from './findings.ts'
import type { Target } from './target.ts'

/**
 * Sends probes to the target and holds every answer to the suite's rules. When the process dies,
 * the request that killed it is named (the only one in flight, or the one that kills it again when
 * the requests that were in flight are replayed one by one on a restarted server), and its kinds of
 * hostile input are not sent again: to the same operation (`body …` kinds: to the same service), or
 * to any operation once the same error has killed the process twice. A server that still runs but
 * no longer answers calls that need the database is stopped and started again. Restarts are
 * bounded (FUZZ_RESTARTS); no request is sent to a dead server.
 */

const REPLAY_LIMIT = 8

export class Runner {
  readonly target: Target
  /** Where failures go (each phase of the suite has its own). */
  findings: Findings
  readonly statuses = new Map<string, number>()
  readonly covered = new Set<string>()
  sent = 0
  /** Why no more requests are sent (the server died and no restart is left). */
  stopped: string | undefined
  private readonly quarantine = new Set<string>()
  /** The request that first caused each crash (by the error the process died of). */
  private readonly killers = new Map<string, Probe>()
  private readonly onRestart: () => Promise<void>
  private suspects: Probe[] = []
  private recovery: { generation: number; done: Promise<void> } | undefined

  constructor(target: Target, findings: Findings, onRestart: () => Promise<void>) {
    this.target = target
    this.findings = findings
    this.onRestart = onRestart
  }

  /** Sends each probe in turn (so a crash names its request). */
  async sequence(probes: Iterable<Probe>) {
    for (const probe of probes) await this.probe(probe)
    await this.settled()
  }

  /** Sends probes from `next` with `concurrency` in flight until `until` returns false. */
  async concurrently(next: () => Probe, concurrency: number, until: () => boolean) {
    const worker = async () => {
      while (until() && !this.stopped) {
        let probe = next()
        for (let tries = 0; this.quarantined(probe) && tries < 20; tries++) probe = next()
        await this.probe(probe)
      }
    }
    await Promise.all(Array.from({ length: concurrency }, worker))
    await this.settled()
  }

  /** Resolves once no restart is under way. */
  async settled() {
    while (this.recovery) {
      const recovery = this.recovery
      await recovery.done
      if (this.recovery === recovery) return
    }
  }

  /** Sends one probe and checks its answer; the answer, or undefined when there was none. */
  async probe(probe: Probe): Promise<Answer | undefined> {
    await this.recovery?.done
    if (this.stopped) {
      this.findings.skip(this.stopped)
      return undefined
    }
    const quarantined = this.quarantineOf(probe)
    if (quarantined) {
      this.findings.skip(`${quarantined} (crashed the server before)`)
      return undefined
    }
    const generation = this.target.generation
    this.suspects.push(probe)
    this.sent++
    this.covered.add(probe.group)
    const outcome = await this.target.exchange(probe)
    const slow = (outcome.kind === 'answer' && outcome.answer.status === 504) || (outcome.kind === 'error' && /no answer within/.test(outcome.error))
    if (slow && this.recovery?.generation !== generation && !(await this.target.responsive()) && this.recovery?.generation !== generation) {
      this.recovery = { generation, done: this.recoverFromHang(probe) }
    }
    if (outcome.kind === 'answer') {
      this.suspects = this.suspects.filter(suspect => suspect !== probe)
      this.count(String(outcome.answer.status))
      this.findings.check(probe, outcome.answer, () => this.target.output())
      return outcome.answer
    }
    if (outcome.kind === 'unsent') {
      this.suspects = this.suspects.filter(suspect => suspect !== probe)
      this.count('unsent')
      return undefined
    }
    if (outcome.kind === 'error') {
      this.suspects = this.suspects.filter(suspect => suspect !== probe)
      this.count('no answer')
      this.findings.add(probe, `no answer (${outcome.error.replace(/\d+/g, 'N')})`, `error: ${outcome.error}`)
      return undefined
    }
    this.count(this.target.hung.has(generation) ? 'stopped (hung)' : 'process exited')
    if (this.recovery?.generation !== generation) this.recovery = { generation, done: this.recover(outcome.log) }
    await this.recovery.done
    return undefined
  }

  private async recover(log: string) {
    await new Promise(resolve => setTimeout(resolve, 100))
    const suspects = this.suspects
    this.suspects = []
    const known = this.killers.get(log)
    const alike = known ? suspects.filter(suspect => suspect.kinds.some(kind => known.kinds.includes(kind))) : []
    if (suspects.length === 1 || alike.length === 1) {
      const killer = suspects.length === 1 ? suspects[0] : alike[0]
      this.killed(killer, log, [killer], suspects.length === 1 ? '' : `the same error again; of the ${suspects.length} requests in flight the only one of its kind`)
      await this.restart(killer)
      return
    }
    if (known) {
      this.killed(known, log, suspects, `the same error again, with ${suspects.length} requests in flight`)
      await this.restart(known)
      return
    }
    if (!(await this.restart(suspects[0]))) {
      this.findings.crash(suspects[0], log, 'not replayed: no restart left', suspects)
      return
    }
    for (const suspect of suspects.slice(0, REPLAY_LIMIT)) {
      const outcome = await this.target.exchange(suspect)
      if (outcome.kind === 'answer') this.findings.check(suspect, outcome.answer)
      if (outcome.kind !== 'died') continue
      this.killed(suspect, outcome.log, [suspect], `found by replaying the ${suspects.length} requests in flight one by one`)
      await this.restart(suspect)
      return
    }
    this.findings.crash(suspects[0], log, 'replayed one by one, none killed it again', suspects)
  }

  /**
   * Records a crash and stops sending its kind of input: to the same operation the first time; to
   * every operation when the same error comes back (the kinds both killers have in common). With
   * several requests in flight and no replay, the killer is not known and nothing is held back.
   */
  private killed(killer: Probe, log: string, suspects: Probe[], note: string) {
    this.findings.crash(killer, log, note)
    const before = this.killers.get(log)
    if (!before) this.killers.set(log, killer)
    if (suspects.length > 1) return
    const common = before ? before.kinds.filter(kind => killer.kinds.includes(kind)) : []
    if (common.length) for (const kind of common) this.quarantine.add(`* ${kind}`)
    else for (const kind of killer.kinds) this.quarantine.add(this.scopeOf(killer, kind))
  }

  /** The server still runs but no longer answers calls that need the database: stop it and start it again. */
  private async recoverFromHang(probe: Probe) {
    const suspects = this.suspects.filter(suspect => suspect !== probe)
    this.findings.add(probe, 'the server stopped answering calls that need the database (GET /me hangs, the process still runs)',
      `requests in flight when it hung: ${[probe, ...suspects].map(suspect => requestExcerpt(suspect)).join(' | ').slice(0, 2000)}`)
    await this.target.stopHung()
    this.suspects = []
    await this.restart(probe)
  }

  private async restart(after: Probe): Promise<boolean> {
    try {
      if (await this.target.restart()) {
        await this.onRestart()
        return true
      }
      this.stopped = `no restart is left (FUZZ_RESTARTS) after ${after.name} stopped the server`
    } catch (error) {
      this.stopped = `the server did not start again after ${after.name}: ${String((error as Error).message ?? error).slice(-1500)}`
    }
    return false
  }

  private scopeOf(probe: Probe, kind: string): string {
    return kind.startsWith('body ') ? `${probe.group.split('.')[0]} ${kind}` : `${probe.group} ${kind}`
  }

  private quarantined(probe: Probe): boolean {
    return !!this.quarantineOf(probe)
  }

  private quarantineOf(probe: Probe): string | undefined {
    return probe.kinds.flatMap(kind => [this.scopeOf(probe, kind), `* ${kind}`]).find(scope => this.quarantine.has(scope))
  }

  private count(status: string) {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1)
  }

  progress(): string {
    const statuses = [...this.statuses].sort(([a], [b]) => a.localeCompare(b)).map(([status, n]) => `${status}: ${n}`).join(', ')
    return `${this.sent} sent (${statuses}); ${this.covered.size} operations, sets and routes covered; ${this.target.died.size} crash(es); ${this.findings.count} distinct failure(s)`
  }
}
