import cds from '@sap/cds'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { SigningRequests, type SigningRequest } from '#cds-models/chainasign'
import { BuildInputs, TransactionBuilds } from '#cds-models/chainatx'
import { chainA } from '../chains/chain-a/index.ts'
import { cardanoCliRecipe } from '../chains/chain-a/signing/cardano-cli.ts'
import { policyRefusal } from '../chains/chain-a/signing/policies.ts'
import { ApiError, badInput, notFound } from '../lib/errors.ts'
import { ownedBy } from '../lib/ownership.ts'
import { expireStaleBuilds, extendSpendLocks } from '../chaina-transaction/builds.ts'
import { afterRollback } from './after-rollback.ts'
import { audit } from './audit.ts'
import { policyViolation } from './policies.ts'

/**
 * Signing requests: one open request per build (creating it moves the build from built to signing
 * and keeps its outputs locked until the request expires; a request that ends without a submission
 * hands the build back). A request belongs to the owner of its build; a caller finds and moves only
 * its own (all for an operator), so another owner's id answers 404 like one that does not exist.
 * Every transition is a guarded UPDATE from the states it may start in; only when it does not apply
 * is the reason looked up.
 */

const { SELECT, INSERT, UPDATE } = cds.ql

export const SIGNER_TYPES = ['browser-wallet', 'cardano-cli', 'hsm'] as const
export type SignerType = (typeof SIGNER_TYPES)[number]
export type Status = 'pending' | 'signed' | 'verified' | 'submitted' | 'expired' | 'cancelled' | 'failed'

export const OPEN_STATES: Status[] = ['pending', 'signed', 'verified']
export const DEFAULT_EXPIRY_SECONDS = 1800

export type RequestRow = SigningRequest & { ID: string; owner: string; build_ID: string; status: Status; signerType: SignerType; unsignedTxCbor: string; txHash: string }

export interface CreateParameters {
  buildId?: string | null
  signerType?: string | null
  signerInfo?: string | null
  expiresInSeconds?: number | null
}

/** Creates a signing request for a built build, or answers the open one of the same signer type. */
export async function createSigningRequest(req: cds.Request, p: CreateParameters): Promise<string> {
  const buildId = requiredId(p.buildId, 'buildId')
  const signerType = parseSignerType(p.signerType ?? 'browser-wallet')
  const lifetime = parseLifetime(p.expiresInSeconds)
  await expireStale()
  const build = await buildRow(buildId)
  if (build.status === 'signing') return openRequestOf(buildId, signerType)
  if (build.status !== 'built') throw invalidBuildState(build, 'only a built build can be signed')

  const id = cds.utils.uuid()
  const createdAt = new Date()
  const expiresAt = new Date(Math.min(createdAt.getTime() + lifetime * 1000, build.expiresAt ? Date.parse(build.expiresAt) : Infinity))
  const expiresInSeconds = Math.max(0, Math.round((expiresAt.getTime() - createdAt.getTime()) / 1000))
  const senderAddresses = await senderAddressesOf(build)
  const violation = await policyViolation({ unsignedTxCbor: build.unsignedTxCbor, signerType, senderAddresses, expiresInSeconds })
  if (violation) {
    afterRollback(req, async () => audit({
      kind: 'policy-refused', signingRequestId: id, owner: build.owner, actor: actorOf(req),
      details: { stage: 'create', buildId, signerType, policy: violation.policy, rule: violation.rule, message: violation.message },
    }))
    throw policyRefusal(violation)
  }

  const cli = signerType === 'cardano-cli' ? await cliRecipe(build.unsignedTxCbor, build.senderAddress) : undefined
  const claimed = await UPDATE.entity(TransactionBuilds).set({ status: 'signing', updatedAt: createdAt.toISOString() }).where({ ID: buildId, status: 'built', ...ownedBy() })
  if (claimed !== 1) {
    const current = await buildRow(buildId)
    if (current.status === 'signing') return openRequestOf(buildId, signerType)
    throw invalidBuildState(current, 'only a built build can be signed')
  }
  await INSERT.into(SigningRequests).entries({
    ID: id, owner: build.owner, build_ID: buildId, status: 'pending', signerType, signerInfo: p.signerInfo ?? null, network: chainA().networkName,
    senderAddress: build.senderAddress, txHash: build.txHash, unsignedTxCbor: build.unsignedTxCbor,
    cardanoCliCommand: cli?.command ?? null, cardanoCliEnvelope: cli?.envelopeJson ?? null, cardanoCliScript: cli?.script ?? null,
    requestedBy: actorOf(req), createdAt: createdAt.toISOString(), expiresAt: expiresAt.toISOString(), updatedAt: createdAt.toISOString(),
  })
  await extendSpendLocks(build, expiresAt.toISOString())
  audit({
    kind: 'created', signingRequestId: id, owner: build.owner, actor: actorOf(req),
    details: { buildId, signerType, txHash: build.txHash, expiresAt: expiresAt.toISOString() },
  })
  return id
}

/** A request that must be in one of `allowed`; 404, 410 (expired) or 409 otherwise. */
export async function requestIn(req: cds.Request, idParameter: unknown, allowed: Status[], rule: string): Promise<RequestRow> {
  const id = requiredId(idParameter, 'signingRequestId')
  await expireStale()
  const request = await requestRow(id)
  if (!allowed.includes(request.status)) throw refusal(req, request, rule)
  return request
}

/**
 * Moves a request from one of `from` to `to`; false when it was in none of them, or is not the
 * caller's. Housekeeping (expiry) passes `scope` `{}` to act on every owner's requests.
 */
export async function transition(id: string, from: Status[], to: Status, set: Partial<SigningRequest> = {}, scope: { owner?: string } = ownedBy()): Promise<boolean> {
  const affected = await UPDATE.entity(SigningRequests).set({ ...set, status: to, updatedAt: new Date().toISOString() }).where({ ID: id, status: { in: from }, ...scope })
  return affected === 1
}

/** The answer when a transition did not apply: why, from the request's state now. */
export async function refusedTransition(req: cds.Request, id: string, rule: string): Promise<ApiError> {
  return refusal(req, await requestRow(id), rule)
}

export async function cancelSigningRequest(req: cds.Request, idParameter: unknown): Promise<string> {
  const id = requiredId(idParameter, 'signingRequestId')
  await expireStale()
  if (!(await transition(id, OPEN_STATES, 'cancelled'))) throw await refusedTransition(req, id, 'only a pending, signed or verified request can be cancelled')
  const request = await requestRow(id)
  await handBackBuild(request.build_ID)
  audit({ kind: 'cancelled', signingRequestId: id, owner: request.owner, actor: actorOf(req), details: { buildId: request.build_ID } })
  return id
}

/**
 * Expires open requests whose time has run out, whoever's they are, and hands their builds back;
 * also expires stale builds. Each expiry is audited as `system`, for the request's owner.
 */
export async function expireStale() {
  await expireStaleBuilds()
  const stale = await SELECT.from(SigningRequests).columns('ID', 'owner', 'build_ID', 'expiresAt').where({ status: { in: OPEN_STATES }, expiresAt: { '<': new Date().toISOString() } })
  for (const request of stale) {
    if (!(await transition(request.ID!, OPEN_STATES, 'expired', {}, ALL_OWNERS))) continue
    await handBackBuild(request.build_ID!)
    audit({ kind: 'expired', signingRequestId: request.ID!, owner: request.owner!, actor: 'system', details: { buildId: request.build_ID!, expiresAt: String(request.expiresAt) } })
  }
}

/** Open requests whose build is gone (the upstream became another chain) can never be submitted: they expire. */
export async function expireOrphanedRequests() {
  const open = await SELECT.from(SigningRequests).columns('ID', 'owner', 'build_ID').where({ status: { in: OPEN_STATES } })
  const builds = new Set((await SELECT.from(TransactionBuilds).columns('ID').where({ ID: { in: open.map(r => r.build_ID) } })).map(b => b.ID))
  for (const request of open.filter(r => !builds.has(r.build_ID))) {
    const failure = { failureCode: 'BUILD_FORGOTTEN', failureReason: 'its build was made on a chain the upstream no longer serves' }
    if (!(await transition(request.ID!, OPEN_STATES, 'expired', failure, ALL_OWNERS))) continue
    audit({ kind: 'expired', signingRequestId: request.ID!, owner: request.owner!, actor: 'system', details: { buildId: request.build_ID!, reason: 'build forgotten: the upstream is another chain' } })
  }
}

/** A build whose request ended without a submission can be signed again (unless it expired or was cancelled meanwhile). */
export async function handBackBuild(buildId: string) {
  await UPDATE.entity(TransactionBuilds).set({ status: 'built', updatedAt: new Date().toISOString() }).where({ ID: buildId, status: 'signing' })
}

/** The request's build, which must still be waiting for its signature. */
export async function buildAwaitingSignature(request: RequestRow) {
  const build = await buildRow(request.build_ID)
  if (build.status !== 'signing') throw invalidBuildState(build, `signing request ${request.ID} can no longer be used`)
  return build
}

export async function senderAddressesOf(build: { ID: string; senderAddress?: string | null; changeAddress?: string | null }): Promise<string[]> {
  const inputs = await SELECT.from(BuildInputs).columns('address').where({ build_ID: build.ID })
  return [...new Set([build.senderAddress, build.changeAddress, ...inputs.map(input => input.address)].filter((a): a is string => !!a))]
}

/** A request of the caller's (any for an operator); another owner's answers 404 like one that does not exist. */
export async function requestRow(id: string): Promise<RequestRow> {
  const request = await SELECT.one.from(SigningRequests).where({ ID: id, ...ownedBy() })
  if (!request) throw notFound('SIGNING_REQUEST_NOT_FOUND', `There is no signing request ${id}`, 'signingRequestId')
  return request as RequestRow
}

/** A build of the caller's (any for an operator); another owner's answers 404 like one that does not exist. */
export async function buildRow(id: string) {
  const build = await SELECT.one.from(TransactionBuilds)
    .columns('ID', 'owner', 'status', 'txHash', 'unsignedTxCbor', 'senderAddress', 'changeAddress', 'expiresAt').where({ ID: id, ...ownedBy() })
  if (!build) throw notFound('BUILD_NOT_FOUND', `There is no build ${id}`, 'buildId')
  return build as typeof build & { ID: string; owner: string; status: string; txHash: string; unsignedTxCbor: string; senderAddress: string }
}

export function parseSignerType(value: unknown): SignerType {
  if (typeof value === 'string' && (SIGNER_TYPES as readonly string[]).includes(value)) return value as SignerType
  throw badInput('UNKNOWN_SIGNER_TYPE', `signerType must be one of ${SIGNER_TYPES.join(', ')}, got '${value}'`, 'signerType')
}

/** A signer type given again with the signer's answer must be the request's. */
export function checkSignerType(request: RequestRow, given: unknown) {
  if (given === undefined || given === null || given === '') return
  if (parseSignerType(given) !== request.signerType) {
    throw badInput('SIGNER_TYPE_MISMATCH', `Signing request ${request.ID} is for signer type ${request.signerType}, not ${given}`, 'signerType')
  }
}

export function requiredId(value: unknown, target: string): string {
  if (typeof value !== 'string' || !value) throw badInput('MISSING_PARAMETER', `${target} is required`, target)
  return value
}

export const actorOf = (req: cds.Request) => String(req.user?.id ?? 'anonymous')

/** The scope of housekeeping, which acts on every owner's requests. */
const ALL_OWNERS = {}

function refusal(req: cds.Request, request: RequestRow, rule: string): ApiError {
  if (request.status === 'expired') {
    // The expiry this request noticed is rolled back with it: record it for good.
    afterRollback(req, () => expireStale())
    return new ApiError(410, 'SIGNING_REQUEST_EXPIRED', `Signing request ${request.ID} expired at ${request.expiresAt}; create a new one`, { target: 'signingRequestId' })
  }
  if (request.status === 'submitted') {
    return new ApiError(409, 'TX_ALREADY_SUBMITTED', `Signing request ${request.ID} was already submitted as ${request.txHash}`, { target: 'signingRequestId' })
  }
  return new ApiError(409, 'INVALID_REQUEST_STATE', `Signing request ${request.ID} is ${request.status}: ${rule}`, { target: 'signingRequestId' })
}

/** The open request of a build (the caller's, checked before): answered again for the same signer type, 409 for another. */
async function openRequestOf(buildId: string, signerType: SignerType): Promise<string> {
  const open = await SELECT.one.from(SigningRequests).columns('ID', 'signerType').where({ build_ID: buildId, status: { in: OPEN_STATES }, ...ownedBy() })
  if (!open) throw new ApiError(409, 'INVALID_BUILD_STATE', `Build ${buildId} is being signed elsewhere`, { target: 'buildId' })
  if (open.signerType === signerType) return open.ID!
  throw new ApiError(409, 'SIGNING_REQUEST_OPEN',
    `Build ${buildId} already has an open signing request ${open.ID} for signer type ${open.signerType}; cancel it to sign with ${signerType}`, { target: 'buildId' })
}

function invalidBuildState(build: { ID: string; status: string }, rule: string) {
  if (build.status === 'submitted' || build.status === 'confirmed') {
    return new ApiError(409, 'TX_ALREADY_SUBMITTED', `Build ${build.ID} was already submitted`, { target: 'buildId' })
  }
  return new ApiError(409, 'INVALID_BUILD_STATE', `Build ${build.ID} is ${build.status}: ${rule}`, { target: 'buildId' })
}

function parseLifetime(value: unknown): number {
  if (value === undefined || value === null) return DEFAULT_EXPIRY_SECONDS
  if (!Number.isInteger(value) || (value as number) <= 0) throw badInput('INVALID_EXPIRY', `expiresInSeconds must be a positive whole number of seconds, got '${value}'`, 'expiresInSeconds')
  return value as number
}

/** What a cardano-cli user runs: the payer's key signs as payment.skey, on this deployment's network. */
async function cliRecipe(unsignedTxCbor: string, senderAddress: string) {
  const genesis = await chainA().genesis()
  return cardanoCliRecipe({ unsignedTxCbor, network: chainA().networkName, networkMagic: genesis.networkMagic, payerKeyHash: paymentKeyHashOf(senderAddress) })
}

function paymentKeyHashOf(address: string): string | undefined {
  try {
    return CSL.Address.from_bech32(address).payment_cred()?.to_keyhash()?.to_hex()
  } catch {
    return undefined
  }
}
