import cds from '@sap/cds'
import { createHash, randomBytes } from 'node:crypto'
import { Job, Jobs } from '#cds-models/chainb'
import { canonicalJson } from '../../lib/canonical-json.ts'
import { ApiError } from '../../lib/errors.ts'
import { ownerOf } from '../../lib/ownership.ts'
import { runWrite, tableOf } from '../../lib/plain-sql.ts'
import { attesterSubjectOf } from '../identity.ts'
import { commandOf, type JobCommand } from './commands.ts'
import { jobSettings } from './config.ts'
import type { JobKindName } from './kinds.ts'

const { SELECT } = cds.ql

/** Set on the answer to a repeated request (same key, same payload): the gateway charges it nothing. */
export const IDEMPOTENT_REPLAY = 'x-idempotent-replay'

export interface NewJob {
  kind: JobKindName
  /** The request's parameters as checked (idempotencyKey aside): what the fingerprint covers. */
  params: Record<string, unknown>
  command: JobCommand
  idempotencyKey?: string
}

export interface QueuedJob {
  ID: string
  status: string
  command: JobCommand
  /** True when an earlier request with the same key and payload made the job. */
  replay: boolean
}

export const fingerprintOf = (kind: string, params: Record<string, unknown>) =>
  createHash('sha256').update(`${kind}\0${canonicalJson(params)}`).digest('hex')

let insertStatement: string | undefined
/**
 * One statement whether or not the key is taken: a concurrent identical request inserts nothing
 * and then reads the winner's row. ON CONFLICT DO NOTHING (SQLite and PostgreSQL alike) leaves the
 * transaction usable, where a failed insert would abort it on PostgreSQL.
 */
const insertJob = () => (insertStatement ??= `INSERT INTO ${tableOf(Jobs)}
  (ID, owner, kind, status, idempotencyKey, payloadFingerprint, request, attempt, maxAttempts, nonce, attesterSubject, requestId, queuedAt)
  VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`)

/**
 * Persists a job in the request's transaction, or finds the one an earlier request with the same
 * owner and idempotency key made: the same payload answers that job (a replay, flagged for the
 * gateway), another payload 409 IDEMPOTENCY_KEY_REUSED. `makeRecords` runs only for a new job.
 */
export async function enqueue(req: cds.Request, job: NewJob, makeRecords: (jobId: string) => Promise<unknown>): Promise<QueuedJob> {
  const owner = ownerOf(req.user)
  const fingerprint = fingerprintOf(job.kind, job.params)
  const ID = cds.utils.uuid()
  const inserted = await runWrite(insertJob(), [
    ID, owner, job.kind, Job.status.queued, job.idempotencyKey ?? null, fingerprint, JSON.stringify(job.command),
    jobSettings().maxAttempts, randomBytes(32).toString('hex'), attesterSubjectOf(req.user), cds.context?.id ?? null, new Date().toISOString(),
  ])
  if (inserted === 1) {
    await makeRecords(ID)
    return { ID, status: Job.status.queued, command: job.command, replay: false }
  }
  const earlier = await SELECT.one.from(Jobs).columns('ID', 'status', 'payloadFingerprint', 'request').where({ owner, idempotencyKey: job.idempotencyKey ?? null })
  if (!earlier) throw new ApiError(409, 'JOB_CONFLICT', 'the job could not be recorded; retry the request')
  if (earlier.payloadFingerprint !== fingerprint)
    throw new ApiError(409, 'IDEMPOTENCY_KEY_REUSED', 'this idempotencyKey was used with another operation or other parameters', { target: 'idempotencyKey' })
  ;(req as cds.Request & { http?: { res?: { setHeader(name: string, value: string): void } } }).http?.res?.setHeader(IDEMPOTENT_REPLAY, 'true')
  return { ID: earlier.ID!, status: earlier.status!, command: commandOf(earlier.request), replay: true }
}
