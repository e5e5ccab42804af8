import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { INSTANCE_ID } from './config.ts'

/**
 * A proving job's witness (its claims' circuit inputs: the fields' values and salts, paths, whole
 * document openings) never reaches the database in plain text. The process that accepts the
 * request seals it with AES-256-GCM under a fresh random key of the job's own (the job's id as
 * associated data); the job row keeps the ciphertext and names this process as the witness's
 * holder, and the key stays in this process's memory only, here. Only runners in this process
 * claim the job for proving (turns.ts); once its proofs are made, or the job ends in any way, the
 * ciphertext is set to null in the same statement and the key is dropped (its bytes overwritten).
 * A key that is gone (the process stopped or died) leaves a ciphertext nobody can open: the job
 * fails WITNESS_LOST and the caller asks again. Old copies of a row (SQLite's free pages and WAL,
 * PostgreSQL's dead tuples, backups) hold only that ciphertext.
 *
 * The keys are bounded: one per open proving job this process accepted, and every owner has at
 * most maxQueuedPerOwner open jobs.
 */

/** This process as the holder of the keys it made: its runner instance id (a restarted process is another holder). */
export const WITNESS_HOLDER = INSTANCE_ID

/** A circuit input per claim, in the order of the job's claims. */
export type Witness = Record<string, unknown>[]

interface HeldKey {
  key: Buffer
  /** When it was made (ms): a key whose job never committed is dropped once it is old (see staleKeys). */
  since: number
}

const keys = new Map<string, HeldKey>()

const VERSION = 'v1'
const IV_BYTES = 12
const TAG_BYTES = 16

/** Seals the witness of job `jobId` under a new key kept here; answers the ciphertext for the job row. */
export function sealWitness(jobId: string, witness: Witness): string {
  const key = randomBytes(32)
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(Buffer.from(jobId))
  const plain = Buffer.from(JSON.stringify(witness))
  const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()])
  plain.fill(0)
  keys.set(jobId, { key, since: Date.now() })
  return `${VERSION}.${sealed.toString('base64')}`
}

/** The witness of job `jobId`, opened with the key held here; undefined when this process holds no key for it (or the ciphertext is not the one sealed). */
export function openWitness(jobId: string, sealed: string | null | undefined): Witness | undefined {
  const held = keys.get(jobId)
  if (!held || !sealed?.startsWith(`${VERSION}.`)) return undefined
  const bytes = Buffer.from(sealed.slice(VERSION.length + 1), 'base64')
  if (bytes.length < IV_BYTES + TAG_BYTES) return undefined
  try {
    const decipher = createDecipheriv('aes-256-gcm', held.key, bytes.subarray(0, IV_BYTES))
    decipher.setAAD(Buffer.from(jobId))
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
    const plain = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()])
    const witness = JSON.parse(plain.toString()) as Witness
    plain.fill(0)
    return witness
  } catch {
    return undefined
  }
}

/** Drops the key of a job that has proved or ended (or was never recorded): its witness can no longer be opened anywhere. */
export function forgetWitness(jobId: string) {
  const held = keys.get(jobId)
  if (!held) return
  held.key.fill(0)
  keys.delete(jobId)
}

/** How many keys this process holds. */
export const heldWitnesses = () => keys.size

/** Jobs whose key this process has held for longer than `ageMs`: each is checked against its row (the runner drops those whose job ended elsewhere). */
export function staleKeys(ageMs: number, now = Date.now()): string[] {
  return [...keys].filter(([, held]) => now - held.since > ageMs).map(([jobId]) => jobId)
}

/** Marks a key as checked now (its job is still open and held here). */
export function touchKey(jobId: string, now = Date.now()) {
  const held = keys.get(jobId)
  if (held) held.since = now
}
