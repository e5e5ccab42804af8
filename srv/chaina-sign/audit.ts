import cds from '@sap/cds'
import { SigningAuditHead, SigningAuditLog_, type SigningAuditLog } from '#cds-models/chainasign'
import { appendAuditEntry, verifyChain, type AuditEntry, type AuditEventKind, type JsonValue } from '../chains/chain-a/signing/audit-chain.ts'
import { ApiError } from '../lib/errors.ts'
import { ownedBy } from '../lib/ownership.ts'
import { runWrite, tableOf } from '../lib/plain-sql.ts'
import { settleAll } from '../lib/settle-all.ts'

/**
 * The signing audit log: one hash-chained entry per event, written in the transaction of the change
 * it records, just before that transaction commits. The head row (last sequence and hash) is
 * advanced with a guarded UPDATE; an append that finds the head moved by another transaction reads
 * it again and retries. On PostgreSQL the UPDATE waits for a concurrent append to commit and then
 * no longer matches, so appends from any number of processes form one gap-free chain.
 */

const { SELECT, INSERT, UPDATE } = cds.ql
const HEAD_ID = 1
const MAX_ATTEMPTS = 100

export interface AuditNote {
  kind: AuditEventKind
  signingRequestId: string
  /** The owner of the signing request, who may read the entry (not part of its hash). */
  owner: string
  actor: string
  details: { [key: string]: JsonValue }
}

const queues = new WeakMap<object, AuditNote[]>()

/**
 * Records events of the current transaction. They are appended when it is about to commit, so the
 * head is the last row a transaction locks, and only for the commit: never while it waits for
 * other locks or for the chain.
 */
export function audit(...notes: AuditNote[]) {
  const root = rootContext()
  let queue = queues.get(root)
  if (!queue) {
    const pending: AuditNote[] = (queue = [])
    queues.set(root, pending)
    root.before('commit', async () => {
      for (const note of pending) await appendOne(note)
    })
  }
  queue.push(...notes)
}

/** The transaction's root context and its `commit` hook, which cds-types do not declare. */
const rootContext = () => (cds.context as unknown as { context: { before(event: 'commit', hook: () => Promise<void>): void } }).context

async function appendOne(note: AuditNote) {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const head = await SELECT.one.from(SigningAuditHead).columns('sequence', 'hash').where({ ID: HEAD_ID })
    const previous = head ? ({ sequence: head.sequence!, hash: head.hash! } as AuditEntry) : undefined
    const { owner, ...event } = note
    const entry = appendAuditEntry(previous, { at: new Date(), ...event })
    const advanced = head
      ? (await UPDATE.entity(SigningAuditHead).set({ sequence: entry.sequence, hash: entry.hash }).where({ ID: HEAD_ID, sequence: head.sequence })) === 1
      : await createHead(entry)
    if (advanced) {
      await INSERT.into(SigningAuditLog_).entries({
        sequence: entry.sequence, owner, occurredAt: entry.at as string, kind: entry.kind, signingRequest_ID: entry.signingRequestId, actor: entry.actor,
        details: JSON.stringify(entry.details), previousHash: entry.previousHash, hash: entry.hash,
      })
      return
    }
  }
  throw new ApiError(503, 'AUDIT_CONTENTION', 'The signing audit log is too busy to append to; try again')
}

/** The first append ever creates the head; of two first appends, the other one finds it and retries. */
async function createHead(entry: AuditEntry): Promise<boolean> {
  const sql = `INSERT INTO ${tableOf(SigningAuditHead)} (ID, sequence, hash) VALUES (?, ?, ?) ON CONFLICT (ID) DO NOTHING`
  return (await runWrite(sql, [HEAD_ID, entry.sequence, entry.hash])) === 1
}

interface AuditLogAnswer {
  valid: boolean
  brokenAt: number | null
  reason: string | null
  entries: ReturnType<typeof entryOf>[]
}

/**
 * Whether the whole log verifies, up to the head (every owner's entries are read for that), and the
 * caller's own entries (all for an operator), of one signing request when given: another owner's
 * request answers no entries, like one that does not exist.
 */
export async function auditLog(signingRequestId?: string | null): Promise<AuditLogAnswer> {
  const [rows, head] = await settleAll([
    SELECT.from(SigningAuditLog_).orderBy('sequence'),
    SELECT.one.from(SigningAuditHead).columns('sequence', 'hash').where({ ID: HEAD_ID }),
  ])
  const entries = rows.map(entryOf)
  const { owner } = ownedBy()
  const answered = entries.filter((entry, i) => (!owner || rows[i].owner === owner) && (!signingRequestId || entry.signingRequestId === signingRequestId))
  let verdict = verifyChain(entries.map(entry => ({ ...entry, at: entry.occurredAt, details: parseDetails(entry.details) })))
  const last = entries.at(-1)
  if (verdict.valid && (head?.sequence ?? 0) !== (last?.sequence ?? 0)) {
    verdict = { valid: false, brokenAt: (last?.sequence ?? 0) + 1, reason: `the log ends at entry ${last?.sequence ?? 0} but its head says ${head?.sequence}: entries were removed` }
  } else if (verdict.valid && last && head?.hash !== last.hash) {
    verdict = { valid: false, brokenAt: last.sequence, reason: `entry ${last.sequence} does not match the head's hash` }
  }
  return {
    valid: verdict.valid,
    brokenAt: verdict.brokenAt ?? null,
    reason: verdict.reason ?? null,
    entries: answered,
  }
}

function entryOf(row: SigningAuditLog) {
  return {
    sequence: Number(row.sequence), occurredAt: String(row.occurredAt), kind: row.kind as AuditEventKind, signingRequestId: String(row.signingRequest_ID),
    actor: String(row.actor), details: String(row.details), previousHash: String(row.previousHash), hash: String(row.hash),
  }
}

/** Details that are no longer JSON (edited in the database) stay text, so the hash check reports the entry. */
function parseDetails(text: string): JsonValue {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}
