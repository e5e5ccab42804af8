import cds from '@sap/cds'
import { ApiKey, ApiKeys, LedgerEntries, LedgerEntry, Plans, ProductGrant, ProductGrants } from '#cds-models/gateway'
import { API_KEY_PREFIX, GRANT_PREFIXES, hashSecret, hintOf, newSecret, type Product } from './keys.ts'
import { LedgerEntryKind } from './ledger-kinds.ts'
import { undrawnLeased } from './ledger.ts'
import { announceKeyChange } from './key-changes.ts'
import { endRemoteGrantsOf } from './remote-products.ts'
import { ApiError } from '../lib/errors.ts'

/**
 * Key lifecycle: issue (with its two product grants and the opening credit), rotate (a new secret on
 * the same key: units and ledger stay), revoke (the key and both grants), list, look up.
 */

const { SELECT, INSERT, UPDATE } = cds.ql
const { active, suspended, revoked } = ApiKey.status

/** What a product's grant allows by default: every operation of the services that declare themselves that product (`@gateway.product`). */
function defaultOperations(product: Product): string[] {
  const definitions = cds.model?.definitions
  if (!definitions) throw new Error('The model is not loaded: a grant\'s default operations are those of the services it declares for the product')
  return Object.entries(definitions)
    .filter(([, definition]) => definition.kind === 'service' && (definition as ProductDeclaration)['@gateway.product'] === product)
    .map(([name]) => `${name}:*`)
}

/** What a service declares to the gateway about itself (srv/<service>/access.cds). */
interface ProductDeclaration {
  '@gateway.product'?: string
  /** The event the gateway emits to the service when a grant is revoked (carrying the grant's id). */
  '@gateway.onGrantRevoked'?: string
}

export interface IssuedKey {
  id: string
  key: string
  plan: string
  unitsLeft: number
  validUntil: string
  boundAddress?: string | null
}

export interface IssueRequest {
  /** The plan (db/seed/gateway-Plans.csv); each lane names its own: the command line `operator`. */
  plan: string
  /** Units to start with; the plan's units when absent. */
  units?: number
  validDays?: number
  label?: string
  boundAddress?: string
  /** The opening credit's note and what it is for (a payment, a voucher, a wallet's free calls: unique). */
  note?: string
  reference?: string
}

export async function issueKey(request: IssueRequest): Promise<IssuedKey> {
  return cds.tx(() => insertKey(request))
}

/**
 * Issues a key inside the caller's transaction, so that it exists only if what it was issued for
 * (a payment credited, a voucher redeemed, a wallet's first sign-in) is recorded too.
 */
export async function insertKey(request: IssueRequest): Promise<IssuedKey> {
  const plan = await SELECT.one.from(Plans).where({ name: request.plan })
  if (!plan) throw new ApiError(400, 'UNKNOWN_PLAN', `There is no plan '${request.plan}'`)
  const units = request.units ?? Number(plan.units)
  if (!Number.isInteger(units) || units < 0) throw new ApiError(400, 'INVALID_UNITS', `Units must be a whole number of 0 or more, got ${request.units}`)
  const validDays = request.validDays ?? plan.validityDays
  if (!Number.isInteger(validDays) || validDays! <= 0) throw new ApiError(400, 'INVALID_VALIDITY', `Validity must be a whole number of days, got ${request.validDays}`)

  const id = cds.utils.uuid()
  const key = newSecret(API_KEY_PREFIX)
  const now = new Date().toISOString()
  const validUntil = new Date(Date.parse(now) + validDays! * 86_400_000).toISOString()
  await INSERT.into(ApiKeys).entries({
    ID: id, secretHash: hashSecret(key), hint: hintOf(key), plan_name: request.plan, unitsLeft: units, validUntil,
    status: active, boundAddress: request.boundAddress ?? null, label: request.label ?? null, createdAt: now,
  })
  for (const product of Object.keys(GRANT_PREFIXES) as Product[]) await insertGrant({ product, apiKeyId: id, validUntil })
  await INSERT.into(LedgerEntries).entries({
    ID: cds.utils.uuid(), apiKey_ID: id, kind: LedgerEntryKind.credit, units, state: LedgerEntry.state.posted, note: request.note ?? 'issued',
    reference: request.reference ?? null, createdAt: now, resolvedAt: now,
  })
  return { id, key, plan: request.plan, unitsLeft: units, validUntil, boundAddress: request.boundAddress ?? null }
}

export interface GrantRequest {
  product: Product
  apiKeyId?: string
  validUntil?: string
  label?: string
  operations?: string[]
  /** Whom the grant acts for (another gateway's key, `hosted:<key>`): the owner of what it creates. */
  subject?: string
}

/** Issues a grant on one product; answers its token, shown once. */
export async function issueGrant(grant: GrantRequest) {
  return cds.tx(() => insertGrant(grant))
}

/** The same, in the caller's transaction (an operator's action). The operations must be the product's: `<Service>:<operation>` or `<Service>:*`. */
export async function issueGrantInTransaction(grant: GrantRequest) {
  checkGrantOperations(grant)
  checkGrantSubject(grant)
  return insertGrant(grant)
}

/**
 * A subject names a client of another gateway (`hosted:<its key>`), never an owner of this instance
 * (`key:…`, `grant:…`, a user): a grant must not act as someone whose records are here already.
 */
const GRANT_SUBJECT = /^hosted:[A-Za-z0-9._:-]{1,100}$/
function checkGrantSubject({ subject }: GrantRequest) {
  if (subject !== undefined && !GRANT_SUBJECT.test(subject)) {
    throw new ApiError(400, 'INVALID_GRANT_SUBJECT', 'A grant\'s subject is hosted:<id> (letters, digits, . _ : -, at most 100), the client of another gateway it acts for', { target: 'subject' })
  }
}

function checkGrantOperations({ product, operations }: GrantRequest) {
  const services = new Set(defaultOperations(product).map(rule => rule.slice(0, -2)))
  for (const rule of operations ?? []) {
    const [service, operation, ...rest] = String(rule).split(':')
    if (!services.has(service) || !operation || rest.length) {
      throw new ApiError(400, 'INVALID_GRANT_OPERATION', `A ${product} grant allows operations of ${[...services].join(', ')} only, each as <Service>:<operation> or <Service>:*; not ${JSON.stringify(rule)}`, { target: 'operations' })
    }
  }
}

async function insertGrant(grant: GrantRequest) {
  const token = newSecret(GRANT_PREFIXES[grant.product])
  const id = cds.utils.uuid()
  await INSERT.into(ProductGrants).entries({
    ID: id, apiKey_ID: grant.apiKeyId ?? null, product: grant.product, tokenHash: hashSecret(token), tokenHint: hintOf(token),
    allowedOperations: JSON.stringify(grant.operations ?? defaultOperations(grant.product)), status: ProductGrant.status.active,
    label: grant.label ?? null, subject: grant.subject ?? null, validUntil: grant.validUntil ?? null, createdAt: new Date().toISOString(),
  })
  return { id, token, product: grant.product }
}

/**
 * A new secret for the same key; the old one stops working when this returns. With `presented`,
 * only while the key still has that secret (the holder of a rotated secret cannot rotate again).
 * Answers undefined when there is no such active key.
 */
export async function rotateKey(id: string, presented?: string): Promise<{ id: string; key: string } | undefined> {
  return cds.tx(() => rotateKeyInTransaction(id, presented))
}

/** The same rotation in the caller's transaction. */
export async function rotateKeyInTransaction(id: string, presented?: string): Promise<{ id: string; key: string } | undefined> {
  const key = newSecret(API_KEY_PREFIX)
  const affected = await UPDATE.entity(ApiKeys)
    .set({ secretHash: hashSecret(key), hint: hintOf(key), rotatedAt: new Date().toISOString(), version: { '+=': 1 } })
    .where({ ID: id, status: active, ...(presented ? { secretHash: presented } : {}) })
  if (affected !== 1) return undefined
  await announceKeyChange(id)
  afterCommit(() => endRemoteGrantsOf(id))
  return { id, key }
}

/** Revokes the key and both of its product grants. Answers false when it was not active (or no longer has the `presented` secret). */
export async function revokeKey(id: string, presented?: string): Promise<boolean> {
  return cds.tx(() => revokeKeyInTransaction(id, presented))
}

/**
 * The same revocation in the caller's transaction; a suspended key is revoked too. The products
 * that ask for it hear of the revoked grants once the transaction commits.
 */
export async function revokeKeyInTransaction(id: string, presented?: string): Promise<boolean> {
  const now = new Date().toISOString()
  const affected = await UPDATE.entity(ApiKeys)
    .set({ status: revoked, revokedAt: now, version: { '+=': 1 } })
    .where({ ID: id, status: { in: [active, suspended] }, ...(presented ? { secretHash: presented } : {}) })
  if (affected !== 1) return false
  await announceKeyChange(id)
  const grants = await SELECT.from(ProductGrants).columns('ID').where({ apiKey_ID: id, status: ProductGrant.status.active })
  await UPDATE.entity(ProductGrants).set({ status: ProductGrant.status.revoked, revokedAt: now }).where({ apiKey_ID: id, status: ProductGrant.status.active })
  const revokedGrants = grants.map(grant => grant.ID!)
  afterCommit(() => tellProducts(revokedGrants))
  afterCommit(() => endRemoteGrantsOf(id))
  return true
}

/** Revokes a grant; its key (if any) changes version, so no gateway instance forwards it from a cached copy. */
export async function revokeGrant(id: string): Promise<boolean> {
  return cds.tx(() => revokeGrantInTransaction(id))
}

/** The same revocation in the caller's transaction; the products hear of it once the transaction commits. */
export async function revokeGrantInTransaction(id: string): Promise<boolean> {
  const grant = await SELECT.one.from(ProductGrants).columns('apiKey_ID', 'product').where({ ID: id, status: ProductGrant.status.active })
  if (!grant) return false
  const affected = await UPDATE.entity(ProductGrants).set({ status: ProductGrant.status.revoked, revokedAt: new Date().toISOString() }).where({ ID: id, status: ProductGrant.status.active })
  if (affected !== 1) return false
  if (grant.apiKey_ID) {
    await UPDATE.entity(ApiKeys).set({ version: { '+=': 1 } }).where({ ID: grant.apiKey_ID })
    await announceKeyChange(grant.apiKey_ID)
  }
  afterCommit(() => tellProducts([id]))
  if (grant.apiKey_ID) afterCommit(() => endRemoteGrantsOf(grant.apiKey_ID!, [grant.product as Product]))
  return true
}

/** Runs once the current transaction committed (cds-types do not declare the context's events). */
const afterCommit = (then: () => void) => (cds.context as unknown as { on(event: 'succeeded', listener: () => void): void }).on('succeeded', then)

/**
 * After a revocation is committed, the services that ask for it (`@gateway.onGrantRevoked`) hear of
 * it (to fail the grant's work still waiting, say). Only a running server hears it; the grant's
 * status stays the truth.
 */
function tellProducts(grantIds: string[]) {
  for (const service of Object.values(cds.services) as cds.Service[]) {
    const event = (cds.model?.definitions[service.name] as ProductDeclaration | undefined)?.['@gateway.onGrantRevoked']
    if (!event) continue
    for (const grantId of grantIds) service.emit(event, { grantId }).catch(error => cds.log('gateway').warn(`could not tell ${service.name} of a revoked grant`, error))
  }
}

export interface KeyGrant {
  ID: string
  product: Product
  status: NonNullable<ProductGrant['status']>
  allowedOperations: string[]
}

/** A key as the gateway checks it: the row, its plan's limits and its grants. */
export interface KeyRecord {
  ID: string
  secretHash: string
  plan_name: string | null
  /** Units left when the key was read; the gateway updates it with what each reservation answers. */
  unitsLeft: number
  validUntil: string
  status: NonNullable<ApiKey['status']>
  version: number
  ratePerSecond: number
  burst: number
  grants: KeyGrant[]
}

/** The key with this secret hash, its plan's limits and its grants, or undefined. */
export async function keyBySecretHash(secretHash: string): Promise<KeyRecord | undefined> {
  return cds.tx(async () => {
    const key = await SELECT.one.from(ApiKeys).columns('ID', 'secretHash', 'plan_name', 'unitsLeft', 'validUntil', 'status', 'version').where({ secretHash })
    if (!key) return undefined
    const plan = await SELECT.one.from(Plans).columns('ratePerSecond', 'burst').where({ name: key.plan_name })
    const grants = await SELECT.from(ProductGrants).columns('ID', 'product', 'status', 'allowedOperations').where({ apiKey_ID: key.ID })
    return {
      ID: key.ID!, secretHash: key.secretHash!, plan_name: key.plan_name ?? null, validUntil: key.validUntil!, status: key.status!,
      unitsLeft: Number(key.unitsLeft),
      version: Number(key.version),
      ratePerSecond: plan?.ratePerSecond ?? FALLBACK_RATE.ratePerSecond,
      burst: plan?.burst ?? FALLBACK_RATE.burst,
      grants: grants.map(grant => ({
        ID: grant.ID!, product: grant.product!, status: grant.status!, allowedOperations: JSON.parse(grant.allowedOperations ?? '[]'),
      })),
    }
  })
}

/** The rate of a key whose plan is gone from the plan table: the `standard` plan's as seeded. */
const FALLBACK_RATE = { ratePerSecond: 20, burst: 50 }

/** Every key, newest first; units left include what the key's open leases hold undrawn. */
export async function listKeys() {
  const keys = await cds.tx(() => SELECT.from(ApiKeys).columns('ID', 'hint', 'plan_name', 'unitsLeft', 'status', 'validUntil', 'boundAddress', 'label', 'createdAt', 'lastUsedAt').orderBy('createdAt desc'))
  const leased = await undrawnLeased()
  return keys.map(key => ({ ...key, unitsLeft: Number(key.unitsLeft) + (leased.get(key.ID!) ?? 0) }))
}
