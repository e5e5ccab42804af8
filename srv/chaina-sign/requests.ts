import cds from '@sap/cds'
import { SigningRequests, type SigningRequest } from '#cds-models/chainasign'
import { SigningRequests as RequestsNow, type SigningRequest as RequestNow } from '#cds-models/ChainASignService'
import ChainABuildSigning, { type SigningFacts } from '#cds-models/ChainABuildSigning'
import { paymentKeyHash } from '../chains/chain-a/csl.ts'
import { chainA } from '../chains/chain-a/index.ts'
import { cardanoCliRecipe } from '../chains/chain-a/signing/cardano-cli.ts'
import { policyRefusal } from '../chains/chain-a/signing/policies.ts'
import { ApiError, badInput, notFound } from '../lib/errors.ts'
import { ownedBy } from '../lib/ownership.ts'
import { afterRollback } from './after-rollback.ts'
import { audit } from './audit.ts'
import { now } from '../lib/moment.ts'
import { policyViolation } from './policies.ts'
import { BuildStatus, SignerType, SigningStatus } from './states.ts'

/**
 * Signing requests: one open request per build. Creating one asks the transaction service, which
 * owns the builds, to claim the build for it until the request expires (the build is signing, its
 * outputs stay locked as long); a request that ends without a submission hands the build back, one
 * that runs out lets the claim lapse with it. A request belongs to the owner of its build; a caller
 * finds and moves only its own (all for an operator), so another owner's id answers 404 like one that
 * does not exist. A request is read as it stands (RequestsNow, the service's view: an open request
 * whose time has run out is expired even before the expiry job records it), and every transition is
 * a guarded UPDATE from the states it may start in, at the same moment; only when it does not apply
 * is the reason looked up.
 */

const { SELECT, INSERT, UPDATE } = cds.ql

const SIGNER_TYPES = Object.values(SignerType)
export const OPEN_STATES: SigningStatus[] = [SigningStatus.pending, SigningStatus.signed, SigningStatus.verified]
const DEFAULT_EXPIRY_SECONDS = 1800
/** The failure code of a request whose build the transaction service forgot with the chain it was made on. */
export const BUILD_FORGOTTEN = 'BUILD_FORGOTTEN'

export type RequestRow = RequestNow & {
  ID: string; owner: string; build_ID: string; status: SigningStatus; signerType: SignerType; unsignedTxCbor: string; txHash: string
}
export type BuildFacts = SigningFacts & { ID: string; owner: string; status: BuildStatus; unsignedTxCbor: string; txHash: string }

interface CreateParameters {
  buildId?: string | null
  signerType?: string | null
  signerInfo?: string | null
  expiresInSeconds?: number | null
}

/** The transaction service's side of signing: the builds are its own. */
const builds = () => cds.connect.to(ChainABuildSigning)

/** Creates a signing request for a built build, or answers the open one of the same signer type. */
export async function createSigningRequest(req: cds.Request, p: CreateParameters): Promise<string> {
  const buildId = requiredId(p.buildId, 'buildId')
  const signerType = parseSignerType(p.signerType ?? SignerType['browser-wallet'])
  const lifetime = parseLifetime(p.expiresInSeconds)
  const build = await buildFacts(buildId)
  if (build.status === BuildStatus.signing) return openRequestOf(buildId, signerType)
  if (build.status !== BuildStatus.built) throw invalidBuildState(build, 'only a built build can be signed')

  const id = cds.utils.uuid()
  const createdAt = new Date()
  const expiresAt = new Date(Math.min(createdAt.getTime() + lifetime * 1000, build.expiresAt ? Date.parse(build.expiresAt) : Infinity))
  const expiresInSeconds = Math.max(0, Math.round((expiresAt.getTime() - createdAt.getTime()) / 1000))
  const violation = await policyViolation({ unsignedTxCbor: build.unsignedTxCbor, signerType, senderAddresses: senderAddressesOf(build), expiresInSeconds })
  if (violation) {
    afterRollback(req, async () => audit({
      kind: 'policy-refused', signingRequestId: id, owner: build.owner, actor: actorOf(req),
      details: { stage: 'create', buildId, signerType, policy: violation.policy, rule: violation.rule, message: violation.message },
    }))
    throw policyRefusal(violation)
  }

  const cli = signerType === SignerType['cardano-cli'] ? await cliRecipe(build.unsignedTxCbor, build.senderAddress!) : undefined
  const claimed = await (await builds()).ClaimBuildForSigning({ buildId, signingRequestId: id, until: expiresAt.toISOString() }) as BuildFacts
  if (claimed.status !== BuildStatus.signing || claimed.claimedBy !== id) {
    if (claimed.status === BuildStatus.signing) return openRequestOf(buildId, signerType)
    throw invalidBuildState(claimed, 'only a built build can be signed')
  }
  await INSERT.into(SigningRequests).entries({
    ID: id, owner: build.owner, build_ID: buildId, status: SigningStatus.pending, signerType, signerInfo: p.signerInfo ?? null,
    network: build.network, networkMagic: build.networkMagic, systemStart: build.systemStart,
    senderAddress: build.senderAddress, txHash: build.txHash, unsignedTxCbor: build.unsignedTxCbor,
    cardanoCliCommand: cli?.command ?? null, cardanoCliEnvelope: cli?.envelopeJson ?? null, cardanoCliScript: cli?.script ?? null,
    requestedBy: actorOf(req), createdAt: createdAt.toISOString(), expiresAt: expiresAt.toISOString(), updatedAt: createdAt.toISOString(),
  })
  audit({
    kind: 'created', signingRequestId: id, owner: build.owner, actor: actorOf(req),
    details: { buildId, signerType, txHash: build.txHash, expiresAt: expiresAt.toISOString() },
  })
  return id
}

/** A request that must be in one of `allowed` now; 404, 410 (expired) or 409 otherwise. */
export async function requestIn(idParameter: unknown, allowed: SigningStatus[], rule: string): Promise<RequestRow> {
  const request = await requestRow(requiredId(idParameter, 'signingRequestId'))
  if (!allowed.includes(request.status)) throw refusal(request, rule)
  return request
}

/**
 * Moves a caller's request from one of `from` to `to`; false when it was in none of them (an open
 * request whose time has run out is in none), or is not the caller's. `owner` scopes it to one
 * owner's requests instead of the caller's (work after a rollback, on the request found before).
 */
export async function transition(id: string, from: SigningStatus[], to: SigningStatus, set: Partial<SigningRequest> = {}, scope: { owner?: string } = ownedBy()): Promise<boolean> {
  const moment = now()
  const affected = await UPDATE.entity(SigningRequests).set({ ...set, status: to, updatedAt: moment })
    .where({ ID: id, status: { in: from }, ...scope }).and`(expiresAt is null or expiresAt >= ${moment})`
  return affected === 1
}

/** The answer when a transition did not apply: why, from the request's state now. */
export async function refusedTransition(id: string, rule: string): Promise<ApiError> {
  return refusal(await requestRow(id), rule)
}

export async function cancelSigningRequest(req: cds.Request, idParameter: unknown): Promise<string> {
  const id = requiredId(idParameter, 'signingRequestId')
  if (!(await transition(id, OPEN_STATES, SigningStatus.cancelled))) throw await refusedTransition(id, 'only a pending, signed or verified request can be cancelled')
  const request = await requestRow(id)
  await handBackBuild(request)
  audit({ kind: 'cancelled', signingRequestId: id, owner: request.owner, actor: actorOf(req), details: { buildId: request.build_ID } })
  return id
}

/** A build whose request ended without a submission can be signed again (unless it expired or was cancelled meanwhile). */
export async function handBackBuild(request: Pick<RequestRow, 'ID' | 'build_ID'>) {
  await (await builds()).ReleaseBuild({ buildId: request.build_ID, signingRequestId: request.ID })
}

/** The request's build, which must still be held for it. */
export async function buildAwaitingSignature(request: RequestRow): Promise<BuildFacts> {
  const build = await buildFacts(request.build_ID)
  const heldForIt = build.status === BuildStatus.signing && (!build.claimedBy || build.claimedBy === request.ID)
  if (!heldForIt) throw invalidBuildState(build, `signing request ${request.ID} can no longer be used`)
  return build
}

/** The caller's build (any for an operator) as the transaction service has it now; 404 BUILD_NOT_FOUND otherwise. */
export const buildFacts = async (buildId: string) => (await (await builds()).SigningFactsOf({ buildId })) as BuildFacts

/** Whose keys may sign: the build's sender, change address and the owners of what it spends. */
export function senderAddressesOf(build: BuildFacts): string[] {
  const addresses = [build.senderAddress, build.changeAddress, ...(build.spent ?? []).map(output => output.address)]
  return [...new Set(addresses.filter((a): a is string => !!a))]
}

/** A request of the caller's (any for an operator) as it stands; another owner's answers 404 like one that does not exist. */
export async function requestRow(id: string): Promise<RequestRow> {
  const request = await SELECT.one.from(RequestsNow).where({ ID: id, ...ownedBy() })
  if (!request) throw notFound('SIGNING_REQUEST_NOT_FOUND', `There is no signing request ${id}`, 'signingRequestId')
  return request as RequestRow
}

function parseSignerType(value: unknown): SignerType {
  if (typeof value === 'string' && (SIGNER_TYPES as string[]).includes(value)) return value as SignerType
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

function refusal(request: RequestRow, rule: string): ApiError {
  if (request.status === SigningStatus.expired) {
    const why = request.failureCode === BUILD_FORGOTTEN ? `: ${request.failureReason}` : ` at ${request.expiresAt}`
    return new ApiError(410, 'SIGNING_REQUEST_EXPIRED', `Signing request ${request.ID} expired${why}; create a new one`, { target: 'signingRequestId' })
  }
  if (request.status === SigningStatus.submitted) {
    return new ApiError(409, 'TX_ALREADY_SUBMITTED', `Signing request ${request.ID} was already submitted as ${request.txHash}`, { target: 'signingRequestId' })
  }
  return new ApiError(409, 'INVALID_REQUEST_STATE', `Signing request ${request.ID} is ${request.status}: ${rule}`, { target: 'signingRequestId' })
}

/** The open request of a build (the caller's, checked before): answered again for the same signer type, 409 for another. */
async function openRequestOf(buildId: string, signerType: SignerType): Promise<string> {
  const open = await SELECT.one.from(RequestsNow).columns('ID', 'signerType').where({ build_ID: buildId, status: { in: OPEN_STATES }, ...ownedBy() })
  if (!open) throw new ApiError(409, 'INVALID_BUILD_STATE', `Build ${buildId} is being signed elsewhere`, { target: 'buildId' })
  if (open.signerType === signerType) return open.ID!
  throw new ApiError(409, 'SIGNING_REQUEST_OPEN',
    `Build ${buildId} already has an open signing request ${open.ID} for signer type ${open.signerType}; cancel it to sign with ${signerType}`, { target: 'buildId' })
}

function invalidBuildState(build: { ID?: string | null; status?: BuildStatus | null }, rule: string) {
  if (build.status === BuildStatus.submitted || build.status === BuildStatus.confirmed) {
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
  const chain = await chainA()
  const { networkMagic } = await chain.genesis()
  return cardanoCliRecipe({ unsignedTxCbor, network: chain.networkName, networkMagic, payerKeyHash: paymentKeyHash(senderAddress) ?? undefined })
}
