import { issueGrantInTransaction, type GrantRequest, type IssuedKey, type IssueRequest } from '../gateway/accounts.ts'
import * as keys from '../gateway/key-administration.ts'
import { currentActor as actor, recordAction } from './audit.ts'

/**
 * What an operator does to keys, for the operator service and the command line alike: each action
 * runs in the caller's transaction, as the caller (`cds.context.user`), and records itself in the
 * audit with the key before and after (never its secret).
 */

/** A key after an action, as the operator sees it. */
export type KeyAfter = keys.KeyView
type KeyView = KeyAfter

/** Runs a change of one key and audits it; answers the key after. */
async function changed(keyId: string, action: string, reason: string | null, change: () => Promise<unknown>): Promise<KeyView> {
  const before = await keys.keyView(keyId)
  await change()
  const after = await keys.keyView(keyId)
  await recordAction({ actor: actor(), action: `key.${action}`, target: `key:${keyId}`, before, after, reason })
  return after
}

export const creditKey = (keyId: string, units: number, reason: string) => changed(keyId, 'credit', reason, () => keys.creditKey(keyId, units, reasonNote(reason)))
export const debitKey = (keyId: string, units: number, reason: string) => changed(keyId, 'debit', reason, () => keys.debitKey(keyId, units, reasonNote(reason)))
export const suspendKey = (keyId: string, reason: string | null) => changed(keyId, 'suspend', reason, () => keys.suspendKey(keyId))
export const resumeKey = (keyId: string, reason: string | null) => changed(keyId, 'resume', reason, () => keys.resumeKey(keyId))
export const revokeKey = (keyId: string, reason: string | null) => changed(keyId, 'revoke', reason, () => keys.revokeKey(keyId))
export const changeKeyPlan = (keyId: string, plan: string, reason: string | null) => changed(keyId, 'change-plan', reason, () => keys.changeKeyPlan(keyId, plan))
export const setKeyExpiry = (keyId: string, validUntil: string | null, reason: string | null) =>
  changed(keyId, 'set-expiry', reason, () => keys.setKeyExpiry(keyId, validUntil))

/** A new secret on the key, answered once; the audit records that it was rotated, not the secret. */
export async function rotateKey(keyId: string, reason: string | null): Promise<{ id: string; key: string }> {
  let rotated: { id: string; key: string } | undefined
  await changed(keyId, 'rotate', reason, async () => (rotated = await keys.rotateKey(keyId)))
  return rotated!
}

/** Issues a key (its secret answered once); the audit records the key without its secret. */
export async function issueKey(request: IssueRequest, reason: string | null = null): Promise<IssuedKey> {
  const issued = await keys.issueKeyInTransaction(request)
  await recordAction({ actor: actor(), action: 'key.issue', target: `key:${issued.id}`, before: null, after: await keys.keyView(issued.id), reason })
  return issued
}

/** The ledger note of an operator's credit or debit: who and why, cut to the note's 200 characters. */
const reasonNote = (reason: string) => `operator ${actor()}: ${reason}`.slice(0, 200)

/** Issues an agent grant (its token answered once), audited with the grant (never its token). */
export async function issueGrant(request: GrantRequest, reason: string | null) {
  const issued = await issueGrantInTransaction(request)
  const after = await keys.grantView(issued.id)
  await recordAction({ actor: actor(), action: 'grant.issue', target: `grant:${issued.id}`, before: null, after, reason })
  return { ...after, token: issued.token }
}

/** Revokes an agent grant, audited with the grant before and after (never its token). */
export async function revokeGrant(grantId: string, reason: string | null) {
  const before = await keys.grantView(grantId)
  await keys.revokeGrant(grantId)
  const after = await keys.grantView(grantId)
  await recordAction({ actor: actor(), action: 'grant.revoke', target: `grant:${grantId}`, before, after, reason })
  return after
}
