import cds from '@sap/cds'
import { Job, Jobs } from '#cds-models/chainb'
import { forDatabase, runWrite, tableOf } from '../../lib/plain-sql.ts'
import { JobKind } from './kinds.ts'

/**
 * Which jobs a runner takes next: owners in turn, so one owner's burst never stands before
 * another owner's job. Every owner's claimable jobs are numbered oldest first (its turns); the
 * runner takes first turns before second turns, and within a turn the owner served least recently
 * (the latest claim of any of its jobs; never served comes first), then the oldest job. A new
 * owner's job therefore waits for the jobs already claimed, not for anyone's queue.
 *
 * The order is read from the database, so runners in several instances share it; each job is then
 * claimed with one guarded UPDATE, and only the runner whose UPDATE changed the row runs it. A job
 * whose witness another process holds (witness.ts) is not a candidate here: only its holder can
 * prove it.
 */

interface Candidate {
  ID: string
  kind: string
  /** Who ran it before (a takeover), and until when. */
  leaseOwner: string | null
  leaseExpiresAt: string | null
}

/** Queued and due, or left running or submitted by an instance whose lease ran out (a takeover). */
const claimable = () =>
  `((status = '${Job.status.queued}' AND (notBefore IS NULL OR notBefore <= ?)) OR (status IN ('${Job.status.running}', '${Job.status.submitted}') AND leaseExpiresAt < ?))`

/** Its witness (if it has one still) is held by the process asking. */
const provableHere = () => '(witnessHolder IS NULL OR witnessHolder = ?)'

/**
 * Each owner's turns numbered (waiting), each waiting owner's last claim looked up once, by the
 * index on (owner, startedAt) (owners), then the first `limit` turns in order. Both are
 * MATERIALIZED so the lookup runs once per owner, not once per waiting job.
 */
const candidatesSql = (withProving: boolean) => {
  const jobs = tableOf(Jobs)
  const kinds = withProving ? '' : ` AND kind <> '${JobKind.proveAttestation}'`
  return forDatabase(`WITH waiting AS MATERIALIZED (
      SELECT ID, kind, owner, queuedAt, leaseOwner, leaseExpiresAt, ROW_NUMBER() OVER (PARTITION BY owner ORDER BY queuedAt, ID) AS turn
      FROM ${jobs} WHERE ${claimable()} AND ${provableHere()}${kinds}
    ), owners AS MATERIALIZED (
      SELECT owner, (SELECT MAX(served.startedAt) FROM ${jobs} served WHERE served.owner = waiting.owner) AS lastServed
      FROM waiting WHERE turn = 1
    )
    SELECT waiting.ID AS "ID", waiting.kind AS "kind", waiting.leaseOwner AS "leaseOwner", waiting.leaseExpiresAt AS "leaseExpiresAt" FROM waiting JOIN owners ON owners.owner = waiting.owner
    WHERE waiting.turn <= ?
    ORDER BY waiting.turn, owners.lastServed NULLS FIRST, waiting.queuedAt, waiting.ID
    LIMIT ?`)
}

let statements: { candidates: string; candidatesNotProving: string; claim: string } | undefined
/** The statements, built once the model is loaded. */
function sql() {
  statements ??= {
    candidates: candidatesSql(true),
    candidatesNotProving: candidatesSql(false),
    claim: `UPDATE ${tableOf(Jobs)} SET status = '${Job.status.running}', leaseOwner = ?, leaseExpiresAt = ?, startedAt = ?, attempt = attempt + 1 WHERE ID = ? AND ${claimable()} AND ${provableHere()}`,
  }
  return statements
}

/**
 * Up to `limit` jobs in turn order, of those this process can run (`holder`: the process's
 * witness holder id). Without `withProving`, proving jobs are left for a runner with a free
 * prover thread (here or in another instance).
 */
export async function candidatesInTurn(now: string, limit: number, withProving: boolean, holder: string): Promise<Candidate[]> {
  const statement = withProving ? sql().candidates : sql().candidatesNotProving
  return await cds.run(statement, [now, now, holder, limit, limit]) as Candidate[]
}

/** Takes the job for this instance if it is still claimable (and provable here); false when another runner was first. */
export async function claimJob(ID: string, instance: string, leaseExpiresAt: string, now: string, holder: string): Promise<boolean> {
  return (await runWrite(sql().claim, [instance, leaseExpiresAt, now, ID, now, now, holder])) === 1
}
