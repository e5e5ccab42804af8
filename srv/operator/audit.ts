import cds from '@sap/cds'
import { createHash } from 'node:crypto'
import { OperatorAuditHead, OperatorAuditLog } from '#cds-models/operator'
import { canonicalJson } from '../lib/canonical-json.ts'
import { ApiError } from '../lib/errors.ts'
import { forDatabase, rowsChanged, tableOf } from '../lib/plain-sql.ts'

/**
 * The audit of operator actions: one hash-chained entry per change, written in the transaction of
 * the change, so it exists exactly when the change does. Each entry's hash is the SHA-256 of its
 * canonical JSON, which includes the previous entry's hash. The head row (last sequence and hash) is
 * advanced with a guarded UPDATE; an append that finds the head moved by another transaction reads
 * it again and retries, so appends from any number of instances form one gap-free chain.
 */

const { SELECT, INSERT, UPDATE } = cds.ql
const HEAD_ID = 1
const MAX_ATTEMPTS = 100
export const GENESIS_HASH = '0'.repeat(64)

/** Who acts: the operator's user id (`cli:<system user>` on the command line). */
export const currentActor = () => String(cds.context?.user?.id ?? 'anonymous')

export interface OperatorAction {
  actor: string
  /** `key.credit`, `key.revoke`, ... */
  action: string
  /** `key:<id>`, ... */
  target: string
  /** The record before and after the change, without secrets (null where there was none). */
  before: unknown
  after: unknown
  reason?: string | null
}

export interface AuditEntry {
  sequence: number
  occurredAt: string
  actor: string
  action: string
  target: string
  /** Canonical JSON, or null. */
  before: string | null
  after: string | null
  reason: string | null
  previousHash: string
  hash: string
}

/** The hash of an entry: over every field but the hash itself, the previous hash included. */
export function entryHash(entry: Omit<AuditEntry, 'hash'>): string {
  const { sequence, occurredAt, actor, action, target, before, after, reason, previousHash } = entry
  return createHash('sha256').update(canonicalJson({ sequence, occurredAt, actor, action, target, before, after, reason, previousHash })).digest('hex')
}

const jsonOrNull = (value: unknown) => (value === null || value === undefined ? null : canonicalJson(value))

/** Runs the audit's statements: the current transaction's database (cds.db), or a transaction given. */
type Runner = Pick<cds.Service, 'run'>

/**
 * Appends the action to the audit, in the current transaction, or in `db` (a streamed export's,
 * which writes after its handler returned).
 */
export async function recordAction(done: OperatorAction, db: Runner = cds.db): Promise<AuditEntry> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const head = await db.run(SELECT.one.from(OperatorAuditHead).columns('sequence', 'hash').where({ ID: HEAD_ID }))
    const unhashed = {
      sequence: (head?.sequence ?? 0) + 1, occurredAt: new Date().toISOString(), actor: done.actor, action: done.action, target: done.target,
      before: jsonOrNull(done.before), after: jsonOrNull(done.after), reason: done.reason ?? null, previousHash: head?.hash ?? GENESIS_HASH,
    }
    const entry: AuditEntry = { ...unhashed, hash: entryHash(unhashed) }
    const advanced = head
      ? rowsChanged(await db.run(UPDATE.entity(OperatorAuditHead).set({ sequence: entry.sequence, hash: entry.hash }).where({ ID: HEAD_ID, sequence: head.sequence }))) === 1
      : rowsChanged(await db.run(forDatabase(`INSERT INTO ${tableOf(OperatorAuditHead)} (ID, sequence, hash) VALUES (?, ?, ?) ON CONFLICT (ID) DO NOTHING`), [HEAD_ID, entry.sequence, entry.hash])) === 1
    if (advanced) {
      await db.run(INSERT.into(OperatorAuditLog).entries(entry))
      return entry
    }
  }
  throw new ApiError(503, 'AUDIT_CONTENTION', 'The operator audit is too busy to append to; try again')
}

export interface AuditVerdict {
  valid: boolean
  entries: number
  /** The sequence of the first entry that does not fit, and why. */
  brokenAt: number | null
  reason: string | null
}

/** Reads the whole audit in order, page by page, and checks every link up to the head. */
export async function verifyAudit(pageSize = 1000): Promise<AuditVerdict> {
  const head = await SELECT.one.from(OperatorAuditHead).columns('sequence', 'hash').where({ ID: HEAD_ID })
  let previous = { sequence: 0, hash: GENESIS_HASH }
  const broken = (sequence: number, reason: string): AuditVerdict => ({ valid: false, entries: previous.sequence, brokenAt: sequence, reason })
  for (;;) {
    const rows = await SELECT.from(OperatorAuditLog).where({ sequence: { '>': previous.sequence } }).orderBy('sequence').limit(pageSize)
    for (const row of rows) {
      const entry = entryOf(row)
      if (entry.sequence !== previous.sequence + 1) return broken(previous.sequence + 1, `entry ${previous.sequence + 1} is missing: ${entry.sequence} follows ${previous.sequence}`)
      if (entry.previousHash !== previous.hash) return broken(entry.sequence, `entry ${entry.sequence} does not chain to the hash of entry ${previous.sequence}`)
      const { hash, ...unhashed } = entry
      if (entryHash(unhashed) !== hash) return broken(entry.sequence, `entry ${entry.sequence} was altered: its content does not match its hash`)
      previous = entry
    }
    if (rows.length < pageSize) break
  }
  const last = head?.sequence ?? 0
  if (last !== previous.sequence) return broken(previous.sequence + 1, `the audit ends at entry ${previous.sequence} but its head says ${last}: entries were removed`)
  if (last && head?.hash !== previous.hash) return broken(last, `entry ${last} does not match the head's hash`)
  return { valid: true, entries: previous.sequence, brokenAt: null, reason: null }
}

function entryOf(row: OperatorAuditLog): AuditEntry {
  return {
    sequence: Number(row.sequence), occurredAt: new Date(row.occurredAt!).toISOString(), actor: row.actor!, action: row.action!, target: row.target!,
    before: row.before ?? null, after: row.after ?? null, reason: row.reason ?? null, previousHash: row.previousHash!, hash: row.hash!,
  }
}
