import cds from '@sap/cds'
import { Job, Jobs } from '#cds-models/chainb'
import { notFound } from '../../lib/errors.ts'
import { ownedBy } from '../../lib/ownership.ts'
import type { JobRunner } from './runner.ts'

const { SELECT } = cds.ql

/** The caller's job as getJobStatus answers it; another owner's id answers 404 like an unknown one. */
export async function jobStatus(jobId: string) {
  const job = await SELECT.one.from(Jobs).where({ ID: jobId, ...ownedBy() })
  if (!job) throw notFound('JOB_NOT_FOUND', `no job ${jobId}`, 'jobId')
  return {
    jobId: job.ID, kind: job.kind, status: job.status, result: job.result ?? null, errorCode: job.errorCode ?? null, errorMessage: job.errorMessage ?? null,
    attempt: job.attempt, maxAttempts: job.maxAttempts, txHash: job.txHash ?? null, txIdentifier: job.txIdentifier ?? null, blockHeight: job.blockHeight ?? null,
    queuedAt: job.queuedAt, startedAt: job.startedAt ?? null, submittedAt: job.submittedAt ?? null, finishedAt: job.finishedAt ?? null,
  }
}

/** A revoked grant's jobs that have not started fail GRANT_REVOKED; what is already on its way to the chain goes on. */
export async function failJobsOfGrant(runner: JobRunner, grantId: string) {
  const jobs = await cds.tx({ user: cds.User.privileged }, () =>
    SELECT.from(Jobs).columns('ID', 'kind', 'request', 'owner', 'requestId').where({ attesterSubject: `grant:${grantId}`, status: Job.status.queued }))
  for (const job of jobs) await runner.fail(job as Job & { ID: string }, 'GRANT_REVOKED', 'the grant that queued this job was revoked', {}, [Job.status.queued])
}
