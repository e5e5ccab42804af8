import cds from '@sap/cds'
import { createHash, randomBytes } from 'node:crypto'
import { Job, Jobs } from '#cds-models/chainb'
import { submitNotConfigured } from '../../chains/chain-b/indexer-client.ts'
import { canonicalJson } from '../../lib/canonical-json.ts'
import { ApiError } from '../../lib/errors.ts'
import { ownerOf } from '../../lib/ownership.ts'
import { forDatabase, isPostgres, runWrite, tableOf } from '../../lib/plain-sql.ts'
import { chainB } from '../chain.ts'
import { attesterSubjectOf } from '../identity.ts'
import { commandOf, withoutWitness, type JobCommand } from './commands.ts'
import { jobSettings } from './config.ts'
import type { JobKindName } from './kinds.ts'
import { forgetWitness, sealWitness, WITNESS_HOLDER } from './witness.ts'

const { SELECT } = cds.ql

/** Set on the answer to a repeated request (same key, same payload): the gateway charges it nothing. */
const IDEMPOTENT_REPLAY = 'x-idempotent-replay'

interface NewJob {
  kind: JobKindName
  /** The request's parameters as checked (idempotencyKey aside): what the fingerprint covers. */
  params: Record<string, unknown>
  /** What the job does; a proving job's claim inputs (the witness) are sealed apart, never stored as given. */
  command: JobCommand
  idempotencyKey?: string
}

interface QueuedJob {
  ID: string
  status: string
  /** The command as stored (without the witness). */
  command: JobCommand
  /** True when an earlier request with the same key and payload made the job. */
  replay: boolean
}

const fingerprintOf = (kind: string, params: Record<string, unknown>) =>
  createHash('sha256').update(`${kind}\0${canonicalJson(params)}`).digest('hex')

/** A job that has not finished: what the bound on one owner's jobs counts. */
const OPEN_STATUSES = [Job.status.queued, Job.status.running, Job.status.submitted]

/** What a caller whose queue is full is told to wait: about the time its oldest job needs to be proven and confirmed. */
const FULL_QUEUE_RETRY_AFTER_S = 10

let insertStatement: string | undefined
/**
 * One statement whether or not the key is taken: a concurrent identical request inserts nothing
 * and then reads the winner's row. ON CONFLICT DO NOTHING (SQLite and PostgreSQL alike) leaves the
 * transaction usable, where a failed insert would abort it on PostgreSQL. The same statement
 * counts the owner's open jobs and inserts nothing when they are at the bound.
 */
const insertJob = () => (insertStatement ??= `INSERT INTO ${tableOf(Jobs)}
  (ID, owner, kind, status, idempotencyKey, payloadFingerprint, request, sealedWitness, witnessHolder, witnessHeldUntil, attempt, maxAttempts, nonce, attesterSubject, requestId, queuedAt)
  SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?
  WHERE (SELECT COUNT(*) FROM ${tableOf(Jobs)} WHERE owner = ? AND status IN (${OPEN_STATUSES.map(status => `'${status}'`).join(', ')})) < ?
  ON CONFLICT DO NOTHING`)

/** Arbitrary first half of the advisory lock's key: the lock space of chain-B job queues. */
const QUEUE_LOCK_SPACE = 0x0c4b

/**
 * On PostgreSQL an owner's writes queue one after the other until their transactions end: under
 * READ COMMITTED two of them would each count the other's job out and both pass the bound. SQLite
 * has one writer at a time already. Other owners never wait for this lock.
 */
async function lockOwnerQueue(owner: string) {
  if (isPostgres()) await cds.run(forDatabase('SELECT pg_advisory_xact_lock(?, hashtext(?))'), [QUEUE_LOCK_SPACE, owner])
}

function queueFull(req: cds.Request, bound: number): ApiError {
  httpResponseOf(req)?.setHeader('Retry-After', String(FULL_QUEUE_RETRY_AFTER_S))
  return new ApiError(429, 'TOO_MANY_QUEUED_JOBS', `you have ${bound} chain-B jobs queued or on their way to the chain, the most one caller may have; retry once one of them is confirmed or failed (getJobStatus)`, { retryAfter: FULL_QUEUE_RETRY_AFTER_S })
}

type HttpResponse = { setHeader(name: string, value: string): void }
const httpResponseOf = (req: cds.Request) => (req as cds.Request & { http?: { res?: HttpResponse } }).http?.res

/**
 * Persists a job in the request's transaction, or finds the one an earlier request with the same
 * owner and idempotency key made: the same payload answers that job (a replay, flagged for the
 * gateway), another payload 409 IDEMPOTENCY_KEY_REUSED. `makeRecords` runs only for a new job.
 * A proving job's witness is sealed under a key this process keeps in memory (witness.ts); the
 * row holds the ciphertext and names this process as its holder. Should the job not be recorded
 * (a replay, a full queue, the request's transaction rolled back), the key is dropped.
 * Without a submission API no job is queued: the write answers 503 CHAIN_B_SUBMIT_NOT_CONFIGURED
 * at once (the gateway refunds an error answer), instead of failing in the runner much later.
 */
export async function enqueue(req: cds.Request, job: NewJob, makeRecords: (jobId: string) => Promise<unknown>): Promise<QueuedJob> {
  if (!(await chainB()).canSubmit) throw submitNotConfigured()
  const owner = ownerOf(req.user)
  const fingerprint = fingerprintOf(job.kind, job.params)
  const ID = cds.utils.uuid()
  const { maxAttempts, maxQueuedPerOwner, witnessHoldMs } = jobSettings()
  const { stored, witness } = withoutWitness(job.command)
  await lockOwnerQueue(owner)
  const now = Date.now()
  const sealed = witness ? sealWitness(ID, witness) : null
  let inserted = 0
  try {
    inserted = await runWrite(insertJob(), [
      ID, owner, job.kind, Job.status.queued, job.idempotencyKey ?? null, fingerprint, JSON.stringify(stored),
      sealed, sealed ? WITNESS_HOLDER : null, sealed ? new Date(now + witnessHoldMs).toISOString() : null,
      maxAttempts, randomBytes(32).toString('hex'), attesterSubjectOf(req.user), cds.context?.id ?? null, new Date(now).toISOString(),
      owner, maxQueuedPerOwner,
    ])
  } finally {
    if (sealed && inserted !== 1) forgetWitness(ID)
  }
  if (inserted === 1) {
    if (sealed) req.on('failed', () => forgetWitness(ID))
    await makeRecords(ID)
    return { ID, status: Job.status.queued, command: stored, replay: false }
  }
  // Nothing inserted: the idempotency key is taken (a replay, or a reuse), or the owner's queue is full.
  const earlier = job.idempotencyKey === undefined ? undefined
    : await SELECT.one.from(Jobs).columns('ID', 'status', 'payloadFingerprint', 'request').where({ owner, idempotencyKey: job.idempotencyKey })
  if (!earlier) {
    if (await openJobsOf(owner) >= maxQueuedPerOwner) throw queueFull(req, maxQueuedPerOwner)
    throw new ApiError(409, 'JOB_CONFLICT', 'the job could not be recorded; retry the request')
  }
  if (earlier.payloadFingerprint !== fingerprint)
    throw new ApiError(409, 'IDEMPOTENCY_KEY_REUSED', 'this idempotencyKey was used with another operation or other parameters', { target: 'idempotencyKey' })
  httpResponseOf(req)?.setHeader(IDEMPOTENT_REPLAY, 'true')
  return { ID: earlier.ID!, status: earlier.status!, command: commandOf(earlier.request), replay: true }
}

async function openJobsOf(owner: string): Promise<number> {
  const { count } = await SELECT.one.from(Jobs).columns('count(1) as count').where({ owner, status: { in: OPEN_STATUSES } }) as { count: number | string }
  return Number(count)
}
