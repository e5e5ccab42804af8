import { readFileSync, readdirSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { Cluster, TIMINGS } from './cluster.ts'
import { chainARead, Load, type PhaseStats } from './load.ts'
import type { InvariantReport, Totals } from './ledger-reader.ts'
import type { FaultMode } from './proxy.ts'

/**
 * The fault harness: a load mix on several gateway instances sharing one database while faults
 * come in turn (each upstream failure mode on both chains, the database taken away and given back,
 * an instance killed mid-charge), and after each fault the invariants metering and operations
 * promise. `npm run faults` and `npm run soak` print what it finds; test/faults runs its short form.
 */

export const UPSTREAM_FAULTS: FaultMode[] = ['slow', '5xx', 'reset', 'truncate', '429']
/** How long an instance may take to answer a metered read with 200 again once a fault is over. */
export const RECOVERY_BOUND_MS = 30_000
/** A charge still pending this long after it was made outlived the sweeper (its time-out, one sweep, and slack for a busy machine). */
/** Clients calling the instance to be killed with the key of their own, so that some of its calls are mid-charge when it dies. */
const VICTIM_CALLERS = 4
export const STALE_AFTER_S = TIMINGS.reservationTimeoutS + TIMINGS.sweepIntervalS + 5

export interface FaultResult {
  fault: string
  /** What the fault itself observed (the killed instance's reservations). */
  note?: string
  stats: PhaseStats
  /** Units charged (committed) and given back (refunded or voided) during the phase. */
  charged: number
  refunded: number
  /** Of the refunded units, those the sweeper voided. */
  voided: number
  /** Upstream requests the proxies failed (or slowed) during the fault. */
  faultedUpstreamCalls: number
  /** Milliseconds each instance took to answer a metered read with 200 after the fault ended; undefined: not within the bound. */
  recoveredAfterMs: (number | undefined)[]
  invariants: InvariantReport
  /** The names of the invariants that failed. */
  failures: string[]
}

export interface FaultsOptions {
  /** Seconds each fault lasts while the load runs. */
  faultSeconds: number
  instances?: number
  keys?: number
  concurrency?: number
  /** Take the database away and give it back (PostgreSQL only). */
  databaseOutage: boolean
  log?: (line: string) => void
}

export interface FaultsRun {
  results: FaultResult[]
  /** The last error lines of each instance's log, when a fault failed. */
  errorLines: string[][]
  /** After the load stopped and the sweeper's time-out passed: every charge resolved. */
  final: { invariants: InvariantReport; pending: number; failures: string[]; chargesByClass: Map<string, number>; jobsByOutcome: Map<string, number>; totals: Totals }
}

export async function runFaults(options: FaultsOptions): Promise<FaultsRun> {
  const log = options.log ?? (() => undefined)
  const cluster = await Cluster.start({ instances: options.instances ?? 2, keys: options.keys ?? 4, log })
  try {
    const load = new Load({ urls: () => cluster.instances.map(instance => instance.url), keys: cluster.keys, address: cluster.chainA.wallets()[0].address }, options.concurrency ?? 8)
    await recovery(cluster)
    load.start()
    const results: FaultResult[] = []
    const phase = async (fault: string, inject: () => Promise<PhaseOutcome | void>) => {
      log(`fault: ${fault}`)
      results.push(await runPhase(cluster, load, fault, inject))
      log(summaryLine(results.at(-1)!))
    }
    const seconds = options.faultSeconds * 1000
    await phase('none (baseline)', () => sleep(seconds))
    for (const mode of UPSTREAM_FAULTS) await phase(`upstreams ${mode}`, async () => {
      cluster.proxyA.set(mode)
      cluster.proxyB.set(mode)
      await sleep(seconds)
      cluster.proxyA.set('pass')
      cluster.proxyB.set('pass')
    })
    if (options.databaseOutage) await phase('database taken away and given back', async () => {
      await cluster.database.takeAway()
      await sleep(seconds)
      await cluster.database.giveBack()
    })
    // Calls of a key of their own wait upstream with their units reserved when the instance dies: the sweeper must void those.
    await phase('instance SIGKILLed mid-charge and restarted', async () => {
      await sleep(seconds / 2)
      const victim = cluster.instances.length - 1
      const { id, key } = cluster.victimKey
      cluster.proxyA.set('slow')
      cluster.proxyB.set('slow')
      let calling = true
      const victimUrl = cluster.instances[victim].url
      const callers = Array.from({ length: VICTIM_CALLERS }, async () => {
        while (calling) {
          const request = chainARead(cluster.chainA.wallets()[0].address, key)
          await fetch(victimUrl + request.path, request.init).then(response => response.arrayBuffer(), () => sleep(100))
        }
      })
      await until(async () => (await cluster.ledger.chargesOf(id)).pending > 0, 20_000)
      const reserved = (await cluster.ledger.chargesOf(id)).pending
      await cluster.killAndRestart(victim, () => {
        calling = false
        cluster.proxyA.set('pass')
        cluster.proxyB.set('pass')
      })
      await Promise.all(callers)
      await sleep(seconds / 2)
      // The phase lasts until the sweeper voided them, or until they are stale and fail the check.
      await until(async () => (await cluster.ledger.chargesOf(id)).pending === 0, STALE_AFTER_S * 1000 + 1000)
      const { voided } = await cluster.ledger.chargesOf(id)
      const failures = []
      if (!reserved) failures.push('no call had its units reserved when the instance was killed')
      else if (!voided) failures.push(`of the ${reserved} reservations the killed instance left, none was voided`)
      return { note: `${reserved} calls mid-charge when killed, ${voided} voided by the sweeper`, failures }
    })
    await load.stop()
    log(`load stopped; waiting ${STALE_AFTER_S} s for the sweeper to resolve what is left`)
    const final = await finalCheck(cluster)
    const failed = results.some(result => result.failures.length) || final.failures.length
    return { results, final, errorLines: failed ? cluster.errorLines() : [] }
  } finally {
    await cluster.stop()
  }
}

/** What a fault found beyond the invariants every phase checks. */
interface PhaseOutcome {
  note: string
  failures: string[]
}

async function runPhase(cluster: Cluster, load: Load, fault: string, inject: () => Promise<PhaseOutcome | void>): Promise<FaultResult> {
  const before = await cluster.ledger.totals()
  const faultedBefore = faultedCalls(cluster)
  load.nextPhase()
  const outcome = await inject()
  const faultedUpstreamCalls = faultedCalls(cluster) - faultedBefore
  const recoveredAfterMs = await recovery(cluster)
  const stats = load.nextPhase()
  const after = await cluster.ledger.totals()
  const invariants = await cluster.ledger.invariants(STALE_AFTER_S)
  const failures = [...invariantFailures(invariants), ...(outcome?.failures ?? [])]
  recoveredAfterMs.forEach((ms, i) => ms === undefined && failures.push(`instance ${i + 1} did not serve within ${RECOVERY_BOUND_MS / 1000} s`))
  if (stats.bad5xx.size) failures.push(`5xx other than 502/503/504 with a code: ${[...stats.bad5xx].map(([k, n]) => `${n} × ${k}`).join(', ')}`)
  // An instance that did not come back is restarted, so that the next fault is measured on its own.
  for (const [index, ms] of recoveredAfterMs.entries()) if (ms === undefined) await cluster.restart(index)
  const unanswered = [...stats.unanswered].filter(([instance]) => !fault.includes('SIGKILL') || instance !== cluster.instances.length - 1)
  if (unanswered.length) failures.push(`requests without an answer: ${unanswered.map(([i, n]) => `${n} at instance ${i + 1}`).join(', ')}`)
  return { fault, note: outcome?.note, stats, ...delta(before, after), faultedUpstreamCalls, recoveredAfterMs, invariants, failures }
}

/** Polls until the probe holds or the time is up. */
async function until(probe: () => Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs
  while (!(await probe()) && Date.now() < deadline) await sleep(50)
}

/** Requests both proxies met in a mode other than pass, so far. */
function faultedCalls(cluster: Cluster): number {
  const count = (seen: Map<FaultMode, number>) => [...seen].reduce((sum, [mode, n]) => sum + (mode === 'pass' ? 0 : n), 0)
  return count(cluster.proxyA.seen) + count(cluster.proxyB.seen)
}

function delta(before: Totals, after: Totals) {
  return { charged: after.committed - before.committed, refunded: after.refunded - before.refunded, voided: after.voided - before.voided }
}

export function invariantFailures(report: InvariantReport): string[] {
  const failures: string[] = []
  if (report.balanceMismatches.length) failures.push(`balance ≠ ledger for ${report.balanceMismatches.length} keys`)
  if (report.stalePending) failures.push(`${report.stalePending} reservations pending beyond the sweeper's time-out`)
  if (report.chargedTwice.length) failures.push(`${report.chargedTwice.length} request ids charged or refunded twice`)
  if (report.refundsAstray) failures.push(`${report.refundsAstray} charges whose refund state and refund entries disagree`)
  return failures
}

/** Polls each instance with a metered read until it answers 200; answers how long that took (undefined: not within the bound). */
export async function recovery(cluster: Cluster): Promise<(number | undefined)[]> {
  const { key } = cluster.keys[0] ?? { key: '' }
  const address = cluster.chainA.wallets()[0].address
  return Promise.all(cluster.instances.map(async instance => {
    const started = Date.now()
    while (Date.now() - started < RECOVERY_BOUND_MS) {
      const request = chainARead(address, key)
      const status = await fetch(instance.url + request.path, { ...request.init, signal: AbortSignal.timeout(RECOVERY_BOUND_MS) })
        .then(async response => (await response.arrayBuffer(), response.status), () => 0)
      if (status === 200) return Date.now() - started
      await sleep(200)
    }
    return undefined
  }))
}

async function finalCheck(cluster: Cluster): Promise<FaultsRun['final']> {
  const deadline = Date.now() + STALE_AFTER_S * 1000
  let pending = (await cluster.ledger.totals()).pending
  while (pending && Date.now() < deadline) {
    await sleep(500)
    pending = (await cluster.ledger.totals()).pending
  }
  const invariants = await cluster.ledger.invariants(STALE_AFTER_S)
  const failures = invariantFailures(invariants)
  if (pending) failures.push(`${pending} charges still pending ${STALE_AFTER_S} s after the load stopped`)
  return { invariants, pending, failures, chargesByClass: await cluster.ledger.chargesByClass(), jobsByOutcome: await cluster.ledger.jobsByOutcome(), totals: await cluster.ledger.totals() }
}

export function summaryLine(result: FaultResult): string {
  return `  ${result.stats.requests} requests, ${result.charged} units charged, ${result.refunded} refunded, ${result.failures.length ? 'FAIL: ' + result.failures.join('; ') : 'invariants OK'}`
}

/** One table per fault: requests, answers by status and code, units, recovery and the invariants. */
export function faultTable(result: FaultResult): string {
  const lines = [`### ${result.fault}`, '', '| | |', '|---|---|']
  if (result.note) lines.push(`| fault | ${result.note} |`)
  lines.push(`| requests | ${result.stats.requests} (${[...result.stats.byKind].map(([kind, n]) => `${kind} ${n}`).join(', ')}) |`)
  for (const [status, n] of [...result.stats.byStatus].sort(([a], [b]) => a.localeCompare(b))) lines.push(`| ${status} | ${n} |`)
  lines.push(`| units charged / refunded (of which voided by the sweeper) | ${result.charged} / ${result.refunded} (${result.voided}) |`)
  lines.push(`| upstream calls the proxies failed or slowed | ${result.faultedUpstreamCalls} |`)
  lines.push(`| latency p50 / p99 | ${result.stats.quantile(0.5).toFixed(0)} / ${result.stats.quantile(0.99).toFixed(0)} ms |`)
  lines.push(`| serving again after | ${result.recoveredAfterMs.map(ms => (ms === undefined ? 'never' : `${ms} ms`)).join(', ')} |`)
  lines.push(`| balance = ledger | ${result.invariants.balanceMismatches.length ? 'FAIL' : 'OK'} |`)
  lines.push(`| no reservation beyond the sweeper | ${result.invariants.stalePending ? 'FAIL' : 'OK'} |`)
  lines.push(`| no request id charged twice | ${result.invariants.chargedTwice.length || result.invariants.refundsAstray ? 'FAIL' : 'OK'} |`)
  lines.push(`| serves again | ${result.recoveredAfterMs.includes(undefined) ? 'FAIL' : 'OK'} |`)
  lines.push(`| only 502/503/504 with a code | ${result.stats.bad5xx.size ? 'FAIL' : 'OK'} |`)
  lines.push(`| every request answered | ${result.failures.some(f => f.startsWith('requests without')) ? 'FAIL' : 'OK'} |`)
  return lines.join('\n')
}

// ---- soak ------------------------------------------------------------------------------------

export interface SoakOptions {
  minutes: number
  instances: number
  keys?: number
  concurrency?: number
  log: (line: string) => void
}

export interface SoakMinute {
  minute: number
  stats: PhaseStats
  rssMb: number[]
  fds: number[]
  failures: string[]
}

export interface SoakRun {
  minutes: SoakMinute[]
  rssStartMb: number[]
  fdsStart: number[]
  final: FaultsRun['final']
}

export async function runSoak(options: SoakOptions): Promise<SoakRun> {
  const cluster = await Cluster.start({ instances: options.instances, keys: options.keys ?? 4, log: options.log })
  try {
    const load = new Load({ urls: () => cluster.instances.map(instance => instance.url), keys: cluster.keys, address: cluster.chainA.wallets()[0].address }, options.concurrency ?? 8)
    await recovery(cluster)
    const rssStartMb = cluster.instances.map(instance => rssMb(instance.pid))
    const fdsStart = cluster.instances.map(instance => openFds(instance.pid))
    load.start()
    const minutes: SoakMinute[] = []
    for (let minute = 1; minute <= options.minutes; minute++) {
      await sleep(60_000)
      const stats = load.nextPhase()
      const invariants = await cluster.ledger.invariants(STALE_AFTER_S)
      const failures = invariantFailures(invariants)
      if (stats.bad5xx.size) failures.push(`5xx other than 502/503/504 with a code: ${[...stats.bad5xx].map(([k, n]) => `${n} × ${k}`).join(', ')}`)
      if (stats.unanswered.size) failures.push(`requests without an answer: ${[...stats.unanswered].map(([i, n]) => `${n} at instance ${i + 1}`).join(', ')}`)
      const result = { minute, stats, rssMb: cluster.instances.map(instance => rssMb(instance.pid)), fds: cluster.instances.map(instance => openFds(instance.pid)), failures }
      minutes.push(result)
      options.log(soakLine(result))
    }
    await load.stop()
    return { minutes, rssStartMb, fdsStart, final: await finalCheck(cluster) }
  } finally {
    await cluster.stop()
  }
}

export function soakLine(m: SoakMinute): string {
  return `minute ${m.minute}: ${m.stats.requests} requests (${(m.stats.requests / 60).toFixed(0)}/s), p50 ${m.stats.quantile(0.5).toFixed(0)} ms, p99 ${m.stats.quantile(0.99).toFixed(0)} ms, `
    + `RSS ${m.rssMb.map(mb => mb.toFixed(0)).join('/')} MB, fds ${m.fds.join('/')}, ${m.failures.length ? 'FAIL: ' + m.failures.join('; ') : 'invariants OK'}`
}

/** Resident memory of a process, from /proc (Linux). */
export function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) / 1024 : NaN
}

/** Open file descriptors of a process (sockets, files, pipes), from /proc (Linux). */
export function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length
}
