import cds from '@sap/cds'
import { ApiKey, ApiKeys, LedgerEntries, LedgerEntry, Plans, ProductGrants } from '#cds-models/gateway'
import { insertKey, revokeGrantInTransaction, revokeKeyInTransaction, rotateKeyInTransaction, type IssuedKey, type IssueRequest } from './accounts.ts'
import { announceKeyChange } from './key-changes.ts'
import { LedgerEntryKind } from './ledger-kinds.ts'
import { undrawnLeased } from './ledger.ts'
import { ApiError, badInput } from '../lib/errors.ts'

/**
 * What an operator does to a key, each in the caller's transaction (the operator service's request,
 * or the command line's own), so the audit entry that records it commits with it or not at all.
 * Units move by guarded UPDATEs with the ledger entry that explains them. A change of what the key
 * may do (its status, plan or expiry) counts up its version and is announced, so every instance
 * reads the key again at once and hands back the units it leased on it.
 */

const { SELECT, INSERT, UPDATE } = cds.ql
const { active, suspended } = ApiKey.status

/** The most units one credit or debit moves: far above any balance, far below where a JSON number loses precision. */
export const MAX_UNITS_MOVED = 1_000_000_000_000

/** A key as an operator sees it (never its secret's hash), with the units its open leases hold undrawn. */
export interface KeyView {
  ID: string
  hint: string | null
  plan_name: string | null
  unitsLeft: number
  unitsLeased: number
  validUntil: string
  status: string
  boundAddress: string | null
  label: string | null
  version: number
}

const VIEW_COLUMNS = ['ID', 'hint', 'plan_name', 'unitsLeft', 'validUntil', 'status', 'boundAddress', 'label', 'version'] as const

/** The key as it is now in this transaction, or a 404 KEY_NOT_FOUND. */
export async function keyView(keyId: string): Promise<KeyView> {
  const row = await SELECT.one.from(ApiKeys).columns(...VIEW_COLUMNS).where({ ID: keyId })
  if (!row) throw keyNotFound(keyId)
  const leased = await undrawnLeased([keyId])
  return {
    ID: row.ID!, hint: row.hint ?? null, plan_name: row.plan_name ?? null, unitsLeft: Number(row.unitsLeft), unitsLeased: leased.get(keyId) ?? 0,
    validUntil: new Date(row.validUntil!).toISOString(), status: row.status!, boundAddress: row.boundAddress ?? null, label: row.label ?? null, version: Number(row.version),
  }
}

export const keyNotFound = (keyId: string) => new ApiError(404, 'KEY_NOT_FOUND', `There is no key ${keyId}`)

/** Issues a key in this transaction (the secret is in the answer, once). */
export const issueKeyInTransaction = (request: IssueRequest): Promise<IssuedKey> => insertKey(request)

/** Adds units with a credit entry naming why. */
export async function creditKey(keyId: string, units: number, note: string): Promise<void> {
  checkUnits(units)
  if ((await UPDATE.entity(ApiKeys).set({ unitsLeft: { '+=': units } }).where({ ID: keyId })) !== 1) throw keyNotFound(keyId)
  await postEntry(keyId, LedgerEntryKind.credit, units, note)
}

/** Takes units away with a debit entry naming why; never below zero (units leased to an instance stay until it hands them back). */
export async function debitKey(keyId: string, units: number, note: string): Promise<void> {
  checkUnits(units)
  const affected = await UPDATE.entity(ApiKeys).set({ unitsLeft: { '-=': units } }).where`ID = ${keyId} and unitsLeft >= ${units}`
  if (affected !== 1) {
    const key = await keyView(keyId)
    const leased = key.unitsLeased ? ` (and ${key.unitsLeased} leased to a serving instance, which hands them back when the key goes idle)` : ''
    throw new ApiError(409, 'INSUFFICIENT_UNITS', `The key has ${key.unitsLeft} units left${leased}: a debit of ${units} would take it below zero`)
  }
  await postEntry(keyId, LedgerEntryKind.debit, -units, note)
}

/** Suspends an active key: every call with it is refused (403 KEY_SUSPENDED) until it is resumed. */
export const suspendKey = (keyId: string) => changeStatus(keyId, active, suspended)

/** Resumes a suspended key. */
export const resumeKey = (keyId: string) => changeStatus(keyId, suspended, active)

/** Revokes the key (active or suspended) and its grants; the products hear of it once this commits. */
export async function revokeKey(keyId: string): Promise<void> {
  if (!(await revokeKeyInTransaction(keyId))) throw await notInState(keyId, 'revoke', [active, suspended])
}

/** A new secret on the same key (units and ledger stay): answered once. */
export async function rotateKey(keyId: string): Promise<{ id: string; key: string }> {
  const rotated = await rotateKeyInTransaction(keyId)
  if (!rotated) throw await notInState(keyId, 'rotate', [active])
  return rotated
}

export async function changeKeyPlan(keyId: string, plan: string): Promise<void> {
  if (!(await SELECT.one.from(Plans).columns('name').where({ name: plan }))) throw badInput('UNKNOWN_PLAN', `There is no plan '${plan}'`, 'plan')
  await changeKey(keyId, { plan_name: plan })
}

/** The key's end of validity; none given, the key never expires. */
export async function setKeyExpiry(keyId: string, validUntil: string | null): Promise<void> {
  await changeKey(keyId, { validUntil: validUntil ?? NEVER })
}

/** What a key that never expires stores as its end of validity. */
const NEVER = '9999-12-31T23:59:59.999Z'

async function changeKey(keyId: string, change: Record<string, unknown>) {
  if ((await UPDATE.entity(ApiKeys).set({ ...change, version: { '+=': 1 } }).where({ ID: keyId })) !== 1) throw keyNotFound(keyId)
  await announceKeyChange(keyId)
}

type KeyStatus = typeof active | typeof suspended

async function changeStatus(keyId: string, from: KeyStatus, to: KeyStatus) {
  const affected = await UPDATE.entity(ApiKeys).set({ status: to, version: { '+=': 1 } }).where({ ID: keyId, status: from })
  if (affected !== 1) throw await notInState(keyId, to === suspended ? 'suspend' : 'resume', [from])
  await announceKeyChange(keyId)
}

/** Why a change found no key to act on: none with that id (404), or it is not in a state the change applies to (409). */
async function notInState(keyId: string, change: string, states: string[]): Promise<ApiError> {
  const key = await SELECT.one.from(ApiKeys).columns('status').where({ ID: keyId })
  if (!key) return keyNotFound(keyId)
  return new ApiError(409, 'KEY_STATE_CONFLICT', `The key is ${key.status}: only a key that is ${states.join(' or ')} can be asked to ${change}`)
}

function checkUnits(units: number) {
  if (!Number.isSafeInteger(units) || units <= 0 || units > MAX_UNITS_MOVED)
    throw badInput('INVALID_UNITS', `units must be a whole number from 1 to ${MAX_UNITS_MOVED}, got ${units}`, 'units')
}

async function postEntry(keyId: string, kind: typeof LedgerEntryKind.credit | typeof LedgerEntryKind.debit, units: number, note: string) {
  const now = new Date().toISOString()
  await INSERT.into(LedgerEntries).entries({ ID: cds.utils.uuid(), apiKey_ID: keyId, kind, units, state: LedgerEntry.state.posted, note, createdAt: now, resolvedAt: now })
}

/** An agent grant as an operator sees it (never its token's hash). */
export async function grantView(grantId: string) {
  const row = await SELECT.one.from(ProductGrants).columns('ID', 'apiKey_ID', 'product', 'tokenHint', 'status', 'label', 'subject', 'validUntil', 'createdAt', 'revokedAt').where({ ID: grantId })
  if (!row) throw new ApiError(404, 'GRANT_NOT_FOUND', `There is no agent grant ${grantId}`)
  return row
}

/** Revokes an active agent grant; its key (if any) is read again by every instance. */
export async function revokeGrant(grantId: string): Promise<void> {
  if (await revokeGrantInTransaction(grantId)) return
  const grant = await grantView(grantId)
  throw new ApiError(409, 'GRANT_STATE_CONFLICT', `The agent grant is ${grant.status}: only an active grant can be revoked`)
}
