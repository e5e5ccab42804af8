import cds from '@sap/cds'
import { Attestations, Job, Jobs } from '#cds-models/chainb'
import type { ChainBTransaction } from '../../chains/chain-b/port.ts'
import { isApiError } from '../../lib/errors.ts'
import { runWrite, tableOf } from '../../lib/plain-sql.ts'
import { scheduleJob, type ScheduledJob } from '../../lib/scheduled-job.ts'
import { onStop } from '../../lib/graceful-stop.ts'
import { HANDED_BACK, takeoverNote } from '../../lib/lease.ts'
import { isStopping } from '../../lib/lifecycle.ts'
import { chainB, type ChainBAccess } from '../chain.ts'
import { commandOf, withoutWitness, type JobCommand } from './commands.ts'
import { INSTANCE_ID, jobSettings, type JobSettings } from './config.ts'
import { CALLER_FAULTS, confirmedResult, explainFailure, recordConfirmation, recordFailure, type Inclusion } from './outcomes.ts'
import { ProofFailure, proveClaims } from './prove.ts'
import { sponsoredCall } from './sign.ts'
import { JobKind } from './kinds.ts'
import { candidatesInTurn, claimJob } from './turns.ts'
import { forgetWitness, heldWitnesses, openWitness, staleKeys, touchKey, WITNESS_HOLDER, type Witness } from './witness.ts'

const { SELECT, UPDATE } = cds.ql

/**
 * The job runner: takes queued jobs to the chain with bounded concurrency and follows them to
 * confirmed (finalityDepth deep) or failed. Safe with several instances on one database:
 * - a job is claimed with one guarded UPDATE (queued, or its lease expired → running, leased to
 *   this instance); only the instance whose UPDATE changed the row runs it. Owners are served in
 *   turn (turns.ts), and a proving job is claimed only while this instance has a prover thread
 *   free for it, so proving jobs wait in the database, where every owner's turn is kept, not in
 *   the prover's own queue;
 * - the lease is renewed on every tick while the job runs or is watched, so a crashed instance's
 *   jobs are taken over once their lease expires, and submitted again with the job's fixed nonce
 *   (the submission API answers the first submission: never a second transaction);
 * - every end (submitted, confirmed, failed) is a guarded UPDATE from the state it leaves, so it
 *   happens once, and JobFailed is emitted once.
 * An upstream that does not answer costs a job no attempt: it waits and is tried again, and fails
 * CHAIN_B_UNAVAILABLE only once unavailableTimeoutMs have passed since it was queued.
 * A proving job's witness can be opened only in the process that accepted it (witness.ts): that
 * process's runners alone claim it for proving, and renew its hold while they run; a job whose
 * holder has not renewed its hold for witnessHoldMs (it stopped or died), or whose key its holder
 * no longer has, fails WITNESS_LOST (refunded) in whichever runner sees it first.
 */

type JobRow = Job & { ID: string }

export interface JobFailedEvent { jobId: string; owner: string; requestId: string | null; errorCode: string }

const OPEN = [Job.status.queued, Job.status.running, Job.status.submitted]
/** What a job needing its witness may be in: not yet proved. */
const UNPROVED = [Job.status.queued, Job.status.running]
const WATCHED_AT_ONCE = 4
const LOST_AT_ONCE = 100

const WITNESS_LOST = 'WITNESS_LOST'
const WITNESS_LOST_MESSAGE = "the claims' hidden inputs were kept only in the memory of the server process that accepted this request, "
  + 'and it stopped before proving them; nothing was recorded and the charge is refunded: ask again (with a new idempotencyKey if you gave one)'

let renewStatement: string | undefined
/** Renews every lease this instance holds: built once the model is loaded. */
const renewSql = () => (renewStatement ??= `UPDATE ${tableOf(Jobs)} SET leaseExpiresAt = ? WHERE leaseOwner = ? AND status IN ('${Job.status.running}', '${Job.status.submitted}')`)
let handBackStatement: string | undefined
/** Hands back every lease this instance holds. */
const handBackSql = () => (handBackStatement ??= `UPDATE ${tableOf(Jobs)} SET leaseExpiresAt = ? WHERE leaseOwner = ? AND status IN ('${Job.status.running}', '${Job.status.submitted}')`)
let holdStatement: string | undefined
/** Renews the hold of every witness this process holds. */
const holdSql = () => (holdStatement ??= `UPDATE ${tableOf(Jobs)} SET witnessHeldUntil = ? WHERE witnessHolder = ? AND status IN ('${Job.status.queued}', '${Job.status.running}')`)

const iso = (ms: number = Date.now()) => new Date(ms).toISOString()
const privileged = <T>(work: () => PromiseLike<T>) => cds.tx({ user: cds.User.privileged }, async () => work())
const unavailable = (error: unknown) => !isApiError(error) || error.status >= 500 || error.status === 429

export class JobRunner {
  readonly settings: JobSettings
  readonly instance: string
  private readonly inFlight = new Map<string, Promise<void>>()
  /** Jobs of this instance that are proving (or about to): at most the prover's threads. */
  private readonly proving = new Set<string>()
  /** The tip height at which a submitted job's transaction was first found missing from the chain. */
  private readonly missingSince = new Map<string, number>()
  /** When this runner last renewed the holds of this process's witnesses (ms). */
  private heldAt = 0
  private schedule?: ScheduledJob
  private readonly emit: (event: JobFailedEvent) => Promise<unknown>

  constructor(emit: (event: JobFailedEvent) => Promise<unknown>, settings: JobSettings = jobSettings(), instance = INSTANCE_ID) {
    this.emit = emit
    this.settings = settings
    this.instance = instance
  }

  start() {
    if (!this.settings.enabled || this.schedule) return
    this.schedule = scheduleJob('chain-B jobs', this.settings.pollMs, () => this.tick())
    onStop(() => this.stop())
  }

  /**
   * No further ticks; once the jobs in flight are settled, the leases on this instance's jobs are
   * handed back (`handBack`), so another runner takes them at once. By default while the process
   * stops on a signal, whose stop steps run before the database closes (srv/lib/graceful-stop.ts);
   * not on CAP's shutdown alone, which closes the database at the same time.
   */
  async stop(handBack = isStopping()) {
    await this.schedule?.stop()
    await Promise.all(this.inFlight.values())
    if (handBack) await this.handBackLeases()
  }

  /** A database already gone (or going) leaves the leases to expire as after a crash: the stop goes on. */
  private async handBackLeases() {
    try {
      const handedBack = await privileged(() => runWrite(handBackSql(), [HANDED_BACK, this.instance]))
      if (handedBack) cds.log('chainb').info(`job runner ${this.instance} handed back the leases on ${handedBack} job(s)`)
    } catch (error) {
      cds.log('chainb').warn(`job runner ${this.instance} could not hand back its job leases; they expire as after a crash (${(error as Error).message})`)
    }
  }

  /** Looks for work now (a job was just queued), after the tick in progress. */
  kick() {
    if (this.schedule) this.schedule.runNow().catch(error => cds.log('chainb').warn('job runner tick failed', error))
  }

  /** One round: renew this instance's leases and witness holds, fail jobs whose witness is lost, watch its submitted jobs, claim what it has room for. */
  async tick() {
    await privileged(() => runWrite(renewSql(), [iso(Date.now() + this.settings.leaseMs), this.instance]))
    await this.holdWitnesses()
    await this.failLostWitnesses()
    await this.watchSubmitted()
    const room = this.settings.concurrency - this.inFlight.size
    if (room > 0) for (const job of await this.claim(room, await this.provingRoom())) this.launch(job)
  }

  /** Jobs in flight in this instance, settled (for tests and shutdown). */
  async idle() {
    await Promise.all(this.inFlight.values())
  }

  /** Prover threads not taken by this instance's proving jobs. */
  private async provingRoom(): Promise<number> {
    const { zk } = await chainB()
    return Math.max(0, zk.prover.size - this.proving.size)
  }

  /** Up to `room` jobs, owners in turn; proving jobs only as many as `provingRoom`. */
  private async claim(room: number, provingRoom: number): Promise<JobRow[]> {
    const now = iso()
    const candidates = await privileged(() => candidatesInTurn(now, room * 2, provingRoom > 0, WITNESS_HOLDER))
    const claimed: JobRow[] = []
    let provingClaimed = 0
    for (const { ID, kind, leaseOwner, leaseExpiresAt } of candidates) {
      if (claimed.length >= room) break
      const proves = kind === JobKind.proveAttestation
      if (proves && provingClaimed >= provingRoom) continue
      if (!(await privileged(() => claimJob(ID, this.instance, iso(Date.now() + this.settings.leaseMs), now, WITNESS_HOLDER)))) continue
      if (leaseOwner && leaseOwner !== this.instance) cds.log('chainb').info(`job runner ${this.instance}: job ${ID} ${takeoverNote({ leaseOwner, leaseExpiresAt })}`)
      const job = await privileged(() => SELECT.one.from(Jobs, ID)) as JobRow | undefined
      if (!job) continue
      if (proves) provingClaimed++
      claimed.push(job)
    }
    return claimed
  }

  private launch(job: JobRow) {
    if (needsProving(job)) this.proving.add(job.ID)
    const run = this.execute(job)
      .catch(error => cds.log('chainb').error(`job ${job.ID} (${job.kind}) failed unexpectedly`, error))
      .finally(() => {
        this.inFlight.delete(job.ID)
        this.doneProving(job.ID)
      })
    this.inFlight.set(job.ID, run)
  }

  /** A prover thread is free again: the next job in turn is claimed now, not at the next poll. */
  private doneProving(jobId: string) {
    if (this.proving.delete(jobId)) this.kick()
  }

  /**
   * Submits a claimed job (again, after a takeover: the same nonce answers the same transaction).
   * A proving job proves first, and keeps the call with its proofs before submitting it: a
   * takeover submits that same call, never a second proof of the claim.
   */
  private async execute(job: JobRow) {
    if (job.attempt! > job.maxAttempts!) return this.fail(job, 'ATTEMPTS_EXHAUSTED', `the job was taken up ${job.maxAttempts} times without reaching the chain`)
    let command = commandOf(job.request)
    let chain: ChainBAccess
    try {
      chain = await chainB()
      if (!command.call) {
        // A job queued before witnesses were sealed carries its inputs in the command itself.
        const witness = openWitness(job.ID, job.sealedWitness) ?? inlineWitness(command)
        if (!witness) {
          this.doneProving(job.ID)
          return this.fail(job, WITNESS_LOST, WITNESS_LOST_MESSAGE)
        }
        try {
          command = await proveClaims(chain, command, witness)
        } finally {
          this.doneProving(job.ID)
        }
        if (!(await this.keepProofs(job, command))) return
      }
      await chain.ensureSponsorFunded()
      const submission = await chain.port.submit(sponsoredCall(chain, job.attesterSubject!, command.call!, job.nonce!))
      await privileged(() => UPDATE.entity(Jobs).set({
        status: Job.status.submitted, txHash: submission.hash, txIdentifier: submission.identifier, submittedAt: iso(), errorCode: null, errorMessage: null,
      }).where({ ID: job.ID, status: Job.status.running, leaseOwner: this.instance }))
    } catch (error) {
      if (error instanceof ProofFailure) return this.fail(job, error.code, error.message)
      if (unavailable(error)) return this.retryLater(job, error)
      const { code, message } = error as { code: string; message: string }
      return this.fail(job, code, message)
    }
  }

  /**
   * The proved call replaces the claims in the job, the sealed witness goes in the same statement
   * (and its key with it), and the proofs go to their attestations; false when the job is no
   * longer this instance's.
   */
  private async keepProofs(job: JobRow, command: JobCommand): Promise<boolean> {
    const kept = await privileged(async () => {
      const changed = await UPDATE.entity(Jobs).set({ request: JSON.stringify(command), ...NO_WITNESS })
        .where({ ID: job.ID, status: Job.status.running, leaseOwner: this.instance })
      if (changed !== 1) return false
      const claims = (command.call!.args.claims ?? []) as { proof: unknown; publicSignals: string[] }[]
      for (const [index, ID] of (command.attestationIds ?? []).entries())
        await UPDATE.entity(Attestations, ID).set({ proof: JSON.stringify(claims[index].proof), publicSignals: JSON.stringify(claims[index].publicSignals) })
      return true
    })
    forgetWitness(job.ID)
    return kept
  }

  /**
   * Renews the holds of the witnesses this process holds (a quarter of witnessHoldMs after the
   * last renewal, so each hold stays at least three quarters ahead), and drops keys whose job ended
   * elsewhere (failed by another instance, or never recorded).
   */
  private async holdWitnesses() {
    const now = Date.now()
    if (!heldWitnesses() || now - this.heldAt < this.settings.witnessHoldMs / 4) return
    await privileged(() => runWrite(holdSql(), [iso(now + this.settings.witnessHoldMs), WITNESS_HOLDER]))
    this.heldAt = now
    const stale = staleKeys(this.settings.witnessHoldMs, now)
    for (let at = 0; at < stale.length; at += LOST_AT_ONCE) {
      const ids = stale.slice(at, at + LOST_AT_ONCE)
      const open = new Set((await privileged(() => SELECT.from(Jobs).columns('ID').where({ ID: { in: ids }, witnessHolder: WITNESS_HOLDER, status: { in: UNPROVED } })) as { ID: string }[]).map(row => row.ID))
      for (const ID of ids) if (open.has(ID)) touchKey(ID, now)
      else forgetWitness(ID)
    }
  }

  /** Jobs whose witness's holder has not renewed its hold in time (it stopped or died): failed WITNESS_LOST, refunded. */
  private async failLostWitnesses() {
    const now = iso()
    const [queued, running] = UNPROVED
    const lost = await privileged(() => SELECT.from(Jobs).columns('ID', 'kind', 'request', 'owner', 'requestId', 'witnessHolder')
      .where`(status = ${queued} or status = ${running}) and witnessHolder is not null and witnessHolder <> ${WITNESS_HOLDER} and witnessHeldUntil < ${now}`
      .limit(LOST_AT_ONCE)) as JobRow[]
    // Each guarded by the hold it was read with: a holder that renewed meanwhile keeps its job.
    for (const job of lost) await this.fail(job, WITNESS_LOST, WITNESS_LOST_MESSAGE, {}, UNPROVED, { witnessHolder: job.witnessHolder, witnessHeldUntil: { '<': now } })
  }

  /** Back to queued, tried again after retryMs; the claim is given back (the upstream's absence is no attempt). */
  private async retryLater(job: JobRow, error: unknown) {
    const code = isApiError(error) ? error.code : 'CHAIN_B_UNAVAILABLE'
    const message = String((error as Error)?.message ?? error).slice(0, 500)
    if (Date.now() - Date.parse(String(job.queuedAt)) > this.settings.unavailableTimeoutMs)
      return this.fail(job, 'CHAIN_B_UNAVAILABLE', `chain B did not answer for ${Math.round(this.settings.unavailableTimeoutMs / 1000)} s: ${message}`)
    await privileged(() => UPDATE.entity(Jobs).set({
      status: Job.status.queued, leaseOwner: null, leaseExpiresAt: null, notBefore: iso(Date.now() + this.settings.retryMs),
      attempt: { '-=': 1 } as unknown as number, errorCode: code, errorMessage: message,
    }).where({ ID: job.ID, status: Job.status.running, leaseOwner: this.instance }))
  }

  /** Follows this instance's submitted jobs: included and finalityDepth deep → confirmed; FAILURE → failed. */
  private async watchSubmitted() {
    const jobs = await privileged(() => SELECT.from(Jobs).where({ status: Job.status.submitted, leaseOwner: this.instance }).limit(500)) as JobRow[]
    if (!jobs.length) return
    let chain: ChainBAccess
    let tipHeight: number
    try {
      chain = await chainB()
      tipHeight = (await chain.port.tip()).height
    } catch {
      return // watched again on the next tick
    }
    // A few lookups at a time: each is one small query of the upstream.
    for (let at = 0; at < jobs.length; at += WATCHED_AT_ONCE) {
      await Promise.all(jobs.slice(at, at + WATCHED_AT_ONCE).map(async job => {
        try {
          await this.watch(chain, tipHeight, job)
        } catch (error) {
          if (!unavailable(error)) cds.log('chainb').warn(`watching job ${job.ID} failed`, error)
        }
      }))
    }
  }

  private async watch(chain: ChainBAccess, tipHeight: number, job: JobRow) {
    const offset = job.txIdentifier ? { identifier: job.txIdentifier } : { hash: job.txHash! }
    const [tx] = await chain.port.transactions(offset)
    if (!tx) return this.missing(chain, tipHeight, job)
    this.missingSince.delete(job.ID)
    if (!succeeded(tx)) {
      const { code, message } = await explainFailure(chain, commandOf(job.request), job.attesterSubject!, tx.hash)
      return this.fail(job, code, message, { txHash: tx.hash, blockHeight: tx.blockHeight })
    }
    if (tipHeight - tx.blockHeight + 1 < chain.settings.finalityDepth) {
      if (job.blockHeight !== tx.blockHeight) await privileged(() => UPDATE.entity(Jobs, job.ID).set({ blockHeight: tx.blockHeight }))
      return
    }
    const inclusion: Inclusion = { txHash: tx.hash, blockHeight: tx.blockHeight, at: iso(tx.blockTimestamp * 1000) }
    await this.confirm(job, inclusion)
  }

  /**
   * A submitted transaction not on the chain is in the mempool (or was sent back there by a reorg),
   * or it was dropped (a reorg that dropped it, a node that lost it). Once the tip has moved
   * resubmitAfterBlocks past the first time it was missed, it is submitted again with the job's
   * nonce: a pending one answers the first submission, a dropped one is the same transaction again.
   */
  private async missing(chain: ChainBAccess, tipHeight: number, job: JobRow) {
    const since = this.missingSince.get(job.ID)
    if (since === undefined || tipHeight < since) return void this.missingSince.set(job.ID, tipHeight)
    if (tipHeight - since < this.settings.resubmitAfterBlocks) return
    let submission
    try {
      submission = await chain.port.submit(sponsoredCall(chain, job.attesterSubject!, commandOf(job.request).call!, job.nonce!))
    } catch (error) {
      if (unavailable(error)) return
      const { code, message } = error as { code: string; message: string }
      return this.fail(job, code, message)
    }
    this.missingSince.set(job.ID, tipHeight)
    if (!submission.duplicate) cds.log('chainb').info(`job ${job.ID}: its transaction ${job.txHash} was not on chain ${this.settings.resubmitAfterBlocks} blocks on; submitted again`)
    await privileged(() => UPDATE.entity(Jobs).set({ txHash: submission.hash, txIdentifier: submission.identifier, blockHeight: null })
      .where({ ID: job.ID, status: Job.status.submitted, leaseOwner: this.instance }))
  }

  private async confirm(job: JobRow, inclusion: Inclusion) {
    const command = commandOf(job.request)
    await privileged(async () => {
      const changed = await UPDATE.entity(Jobs).set({
        status: Job.status.confirmed, txHash: inclusion.txHash, blockHeight: inclusion.blockHeight, finishedAt: iso(),
        result: JSON.stringify(confirmedResult(job.kind!, command, inclusion)), leaseOwner: null, leaseExpiresAt: null, errorCode: null, errorMessage: null,
      }).where({ ID: job.ID, status: Job.status.submitted })
      if (changed === 1) await recordConfirmation(job.kind!, command, inclusion)
    })
  }

  /**
   * Ends a job failed, once (from the states `from`, and what `guard` asks besides); a reason that
   * is not the caller's is refunded through JobFailed. A witness the job still had goes in the
   * same statement, and its key if this process held it.
   */
  async fail(job: Pick<JobRow, 'ID' | 'kind' | 'request' | 'owner' | 'requestId'>, code: string, message: string, seen: { txHash?: string; blockHeight?: number } = {}, from: string[] = OPEN, guard: Record<string, unknown> = {}) {
    const refund = !CALLER_FAULTS.has(code)
    const failed = await privileged(async () => {
      const changed = await UPDATE.entity(Jobs).set({
        status: Job.status.failed, errorCode: code.slice(0, 50), errorMessage: message.slice(0, 500), finishedAt: iso(), refunded: refund,
        leaseOwner: null, leaseExpiresAt: null, ...NO_WITNESS, ...withoutInlineWitness(job.request), ...seen,
      }).where({ ...guard, ID: job.ID, status: { in: from } })
      if (changed === 1) await recordFailure(job.kind!, commandOf(job.request))
      return changed === 1
    })
    if (failed) forgetWitness(job.ID)
    if (failed && refund) await this.emit({ jobId: job.ID, owner: job.owner!, requestId: job.requestId ?? null, errorCode: code })
  }
}

const succeeded = (tx: ChainBTransaction) => tx.result?.status === 'SUCCESS'

/** A job without its witness: what proving or any end of the job leaves. */
const NO_WITNESS = { sealedWitness: null, witnessHolder: null, witnessHeldUntil: null }

/** The inputs a command queued before witnesses were sealed carries itself (every claim's), else undefined. */
function inlineWitness(command: JobCommand): Witness | undefined {
  const claims = command.prove ?? []
  return claims.length && claims.every(claim => claim.input) ? claims.map(claim => claim.input!) : undefined
}

/** The request of such a command without its inputs, for a job that ends before proving them. */
function withoutInlineWitness(request: string | null | undefined): { request?: string } {
  try {
    const command = commandOf(request)
    return command.prove?.some(claim => claim.input) ? { request: JSON.stringify(withoutWitness(command).stored) } : {}
  } catch {
    return {}
  }
}

/** A job whose claims are still to be proved (an unreadable request is execute's to fail). */
function needsProving(job: JobRow): boolean {
  try {
    return !commandOf(job.request).call
  } catch {
    return false
  }
}
