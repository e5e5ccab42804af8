import { createHash } from 'node:crypto'
import { badInput } from '../../../lib/errors.ts'

/**
 * The pure part of the tamper-evident signing audit trail: each entry's hash covers its canonical
 * serialisation and the previous entry's hash, so changing, removing or reordering any entry
 * breaks the chain from there on.
 */

export const AUDIT_EVENT_KINDS = ['created', 'signed', 'verified', 'submitted', 'cancelled', 'expired', 'failed', 'policy-refused'] as const
export type AuditEventKind = (typeof AUDIT_EVENT_KINDS)[number]

/** What the first entry chains to. */
export const AUDIT_GENESIS_HASH = '0'.repeat(64)

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }

export interface AuditEvent {
  /** 1 for the first entry, then consecutive. */
  sequence: number
  /** When it happened (ISO 8601, or a Date). */
  at: string | Date
  kind: AuditEventKind
  signingRequestId: string
  /** Who caused it: a user id, `system`, or the HSM signer's name. */
  actor: string
  details: JsonValue
}

export interface AuditEntry extends AuditEvent {
  previousHash: string
  /** sha256 (hex) of the canonical serialisation, which includes `previousHash`. */
  hash: string
}

interface ChainVerification {
  valid: boolean
  /** The sequence of the first entry that does not fit. */
  brokenAt?: number
  reason?: string
}

/**
 * Canonical JSON of an event and the hash it chains to: object keys sorted, no whitespace, the time
 * as a UTC ISO string with milliseconds, so equal content always serialises to equal bytes.
 */
export function canonicalAuditEvent(event: AuditEvent, previousHash: string): string {
  const { sequence, at, kind, signingRequestId, actor, details } = event
  if (!Number.isSafeInteger(sequence) || sequence < 1) throw invalidEvent(`sequence must be a positive integer, got ${sequence}`)
  if (!(AUDIT_EVENT_KINDS as readonly string[]).includes(kind)) throw invalidEvent(`'${kind}' is not an audit event kind`)
  if (typeof signingRequestId !== 'string' || typeof actor !== 'string') throw invalidEvent('signingRequestId and actor must be strings')
  if (!/^[0-9a-f]{64}$/.test(previousHash)) throw invalidEvent('previousHash must be a sha256 hex digest')
  return canonicalJson({ actor, at: isoTime(at), details, kind, previousHash, sequence, signingRequestId })
}

export const auditEntryHash = (event: AuditEvent, previousHash: string): string =>
  createHash('sha256').update(canonicalAuditEvent(event, previousHash)).digest('hex')

/** The entry that follows `previous` (the first entry when there is none). */
export function appendAuditEntry(previous: AuditEntry | undefined, event: Omit<AuditEvent, 'sequence'>): AuditEntry {
  const chained: AuditEvent = { ...event, sequence: (previous?.sequence ?? 0) + 1, at: isoTime(event.at) }
  const previousHash = previous?.hash ?? AUDIT_GENESIS_HASH
  return { ...chained, previousHash, hash: auditEntryHash(chained, previousHash) }
}

/** Checks entries in order, from the first one (which chains to the genesis value). */
export function verifyChain(entries: AuditEntry[]): ChainVerification {
  let previous = { sequence: 0, hash: AUDIT_GENESIS_HASH }
  for (const entry of entries) {
    const broken = (reason: string): ChainVerification => ({ valid: false, brokenAt: entry.sequence, reason })
    if (entry.sequence !== previous.sequence + 1) return broken(`sequence ${entry.sequence} follows ${previous.sequence}: an entry is missing or out of order`)
    if (entry.previousHash !== previous.hash) return broken(`entry ${entry.sequence} does not chain to the hash of entry ${previous.sequence}`)
    let hash: string
    try {
      hash = auditEntryHash(entry, entry.previousHash)
    } catch (error) {
      return broken((error as Error).message)
    }
    if (hash !== entry.hash) return broken(`entry ${entry.sequence} was altered: its content does not match its hash`)
    previous = entry
  }
  return { valid: true }
}

function isoTime(at: string | Date): string {
  const time = at instanceof Date ? at : new Date(at)
  if (Number.isNaN(time.getTime())) throw invalidEvent(`'${at}' is not a time`)
  return time.toISOString()
}

function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw invalidEvent('details must not hold non-finite numbers')
    return JSON.stringify(value)
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
  }
  throw invalidEvent(`details must be plain JSON, not ${typeof value}`)
}

const invalidEvent = (message: string) => badInput('INVALID_AUDIT_EVENT', message)
