import { isStopping } from '../lib/lifecycle.ts'
import { outsideRequest } from '../lib/request-work.ts'
import { checkChainA, checkChainB, checkDatabase, checkJobQueue, checkProvers, type Check } from './checks.ts'
import { healthSettings, type HealthSettings } from './settings.ts'
import { failureReason } from './timeouts.ts'

/**
 * Whether this instance should take traffic. Ready unless the process is stopping, the database
 * does not answer, or an enabled chain's upstream does not (unless HEALTH_UPSTREAM_REQUIRED=false).
 * What every instance shares (a follower's lag, the job queue) and a busy prover pool are reported,
 * DEGRADED, but never make it unready: that would take every instance off the router at once.
 * The checks run concurrently, each within its time-out, and one answer serves every probe for
 * cacheMs, so probes cannot load the database.
 */

export interface Readiness {
  ready: boolean
  checks: Record<string, Check>
  /** The failing parts, with their reasons. */
  failing: string[]
}

type CheckName = 'database' | 'chainA' | 'chainB' | 'jobQueue' | 'provers'

const CHECKS: Record<CheckName, (settings: HealthSettings) => Promise<Check>> = {
  database: checkDatabase,
  chainA: checkChainA,
  chainB: checkChainB,
  jobQueue: checkJobQueue,
  provers: checkProvers,
}

/** A DOWN part that makes the instance unready. */
const makesUnready = (name: CheckName, check: Check, settings: HealthSettings) =>
  check.status === 'DOWN' && (name === 'database' || settings.upstreamRequired)

const STOPPING: Readiness = { ready: false, checks: { process: { status: 'DOWN', reason: 'stopping: it finishes the calls in flight and takes no new ones' } }, failing: ['process (stopping)'] }

let last: { answer: Promise<Readiness>; settledAt?: number } | undefined

/** The readiness answer: while stopping at once, else the cached one or a fresh one (one check at a time). */
export function readiness(): Promise<Readiness> {
  if (isStopping()) return Promise.resolve(STOPPING)
  const settings = healthSettings()
  const fresh = last && (last.settledAt === undefined || Date.now() - last.settledAt < settings.cacheMs)
  if (fresh) return last!.answer
  const current: { answer: Promise<Readiness>; settledAt?: number } = { answer: outsideRequest(() => checkAll(settings)) }
  void current.answer.finally(() => (current.settledAt = Date.now()))
  last = current
  return current.answer
}

async function checkAll(settings: HealthSettings): Promise<Readiness> {
  const names = Object.keys(CHECKS) as CheckName[]
  const results = await Promise.all(names.map(name => CHECKS[name](settings).catch((error): Check => ({ status: 'UNKNOWN', reason: failureReason(error) }))))
  const checks = Object.fromEntries(names.map((name, i) => [name, results[i]])) as Record<CheckName, Check>
  const failing = names.filter(name => makesUnready(name, checks[name], settings)).map(name => `${name} (${checks[name].reason ?? 'down'})`)
  return { ready: failing.length === 0, checks, failing }
}
