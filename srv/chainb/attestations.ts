import cds from '@sap/cds'
import { Attestations } from '#cds-models/chainb'
import type { ZkClaim } from '../chains/chain-b/port.ts'
import { claimKeyOf } from '../chains/chain-b/vault.ts'
import { bindingFailure, type BindingFailure } from '../chains/chain-b/zk/bindings.ts'
import { fieldHex } from '../chains/chain-b/zk/field.ts'
import { signalsByName } from '../chains/chain-b/zk/verifier.ts'
import { ApiError, badInput } from '../lib/errors.ts'
import { chainB } from './chain.ts'
import {
  documentComparisonClaim, fieldEqualityClaim, fieldMembershipClaim, fieldPredicateClaim, type ClaimContext, type ClaimKind, type PreparedClaim,
} from './claims.ts'
import { proofClaimParam } from '../chainb-params/proofs.ts'
import { jsonValue, PREDICATE_NAMES } from '../chainb-params/values.ts'
import { vaultState } from './documents.ts'
import { attesterIdOf } from './identity.ts'
import { hash32, idempotencyKeyOf, optionalHash32 } from './inputs.ts'
import type { JobCommand } from './jobs/commands.ts'
import { enqueue } from './jobs/queue.ts'

const { INSERT } = cds.ql

/**
 * Zero-knowledge attestations: each operation checks its claims against the vault's state at once
 * (4xx before anything is queued or charged), then queues one job that proves them in the prover's
 * threads, verifies the proofs, and records them on the vault in one transaction. A caller's own
 * proof (sponsorAttestation) is verified here and recorded the same way, without proving.
 */

const MAX_BATCH_CLAIMS = 8

type Params = Record<string, unknown>

async function claimContext(req: cds.Request): Promise<ClaimContext> {
  return { state: await vaultState(), attesterId: await attesterIdOf(req.user) }
}

const withoutKey = ({ idempotencyKey: _key, ...params }: Params) => params

export async function issueFieldPredicate(req: cds.Request) {
  return single(await issue(req, [fieldPredicateClaim(req.data, await claimContext(req))]))
}

export async function issueFieldEquality(req: cds.Request) {
  return single(await issue(req, [fieldEqualityClaim(req.data, await claimContext(req))]))
}

export async function issueFieldMembership(req: cds.Request) {
  return single(await issue(req, [fieldMembershipClaim(req.data, await claimContext(req))]))
}

export async function issueDocumentIntegrity(req: cds.Request) {
  return single(await issue(req, [documentComparisonClaim('integrity', req.data, await claimContext(req))]))
}

export async function issueDocumentDiff(req: cds.Request) {
  return single(await issue(req, [documentComparisonClaim('diff', req.data, await claimContext(req))]))
}

/**
 * Up to 8 claims of any kind in one job: each entry names its `predicate` (lessOrEqual …,
 * bytesEquality, setMembership, documentIntegrity, documentDiff) with that operation's parameters;
 * `payloadHash` is each entry's default document. Claims given twice are proven once.
 */
export async function issueBatch(req: cds.Request) {
  const entries = jsonValue(req.data.claimsJson, 'claimsJson')
  if (!Array.isArray(entries) || entries.length === 0) throw badInput('INVALID_CLAIMS', 'claimsJson must be a JSON array of claims, at least one', 'claimsJson')
  if (entries.length > MAX_BATCH_CLAIMS) throw badInput('TOO_MANY_CLAIMS', `a batch proves at most ${MAX_BATCH_CLAIMS} claims, got ${entries.length}`, 'claimsJson')
  const payloadHash = optionalHash32(req.data.payloadHash, 'payloadHash')
  const context = await claimContext(req)
  const claims: PreparedClaim[] = []
  const seen = new Set<string>()
  entries.forEach((entry, index) => {
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) throw badInput('INVALID_CLAIMS', `claim ${index} must be an object`, 'claimsJson')
    const claim = withTarget(index, () => batchClaim({ payloadHash, payloadHashA: payloadHash, ...(entry as Params) }, context))
    const key = claimKeyOf(claim.circuit, claim.publicSignals)
    if (seen.has(key)) return
    seen.add(key)
    claims.push(claim)
  })
  const job = await issue(req, claims)
  return {
    jobId: job.jobId, status: job.status, droppedDuplicates: entries.length - claims.length,
    claims: job.attestationIds.map((attestationId, i) => ({ attestationId, kind: job.kinds[i], claim: job.statements[i] })),
  }
}

function batchClaim(entry: Params, context: ClaimContext): PreparedClaim {
  const predicate = String(entry.predicate ?? '')
  if (predicate === 'bytesEquality' || predicate === 'equality') return fieldEqualityClaim(entry, context)
  if (predicate === 'setMembership' || predicate === 'membership') return fieldMembershipClaim(entry, context)
  if (predicate === 'documentIntegrity') return documentComparisonClaim('integrity', entry, context)
  if (predicate === 'documentDiff') return documentComparisonClaim('diff', entry, context)
  if (!predicate) throw badInput('UNKNOWN_PREDICATE', `each claim names its predicate: ${PREDICATE_NAMES.join(', ')}, bytesEquality, setMembership, documentIntegrity or documentDiff`, 'predicate')
  return fieldPredicateClaim(entry, context)
}

/** A batch entry's error names the entry. */
function withTarget<T>(index: number, make: () => T): T {
  try {
    return make()
  } catch (error) {
    if (error instanceof ApiError) throw new ApiError(error.status, error.code, `claim ${index}: ${error.message}`, { target: `claimsJson/${index}${error.target ? '/' + error.target : ''}` })
    throw error
  }
}

const single = (job: IssuedJob) => ({ jobId: job.jobId, status: job.status, attestationId: job.attestationIds[0] })

interface IssuedJob {
  jobId: string
  status: string
  attestationIds: string[]
  kinds: string[]
  statements: string[]
}

/** One job for the claims (proved by the runner), and one attestation record per claim. */
async function issue(req: cds.Request, claims: PreparedClaim[]): Promise<IssuedJob> {
  const attestationIds = claims.map(() => cds.utils.uuid())
  const command: JobCommand = {
    attestationIds,
    prove: claims.map(claim => ({ circuit: claim.circuit, input: claim.input, payloadHash: claim.payloadHash, payloadHashB: claim.payloadHashB })),
  }
  const attesterId = await attesterIdOf(req.user)
  const job = await enqueue(req, { kind: 'proveAttestation', params: withoutKey(req.data), idempotencyKey: idempotencyKeyOf(req.data.idempotencyKey), command }, async jobId => {
    await INSERT.into(Attestations).entries(claims.map((claim, batchIndex) => ({
      ID: attestationIds[batchIndex], kind: claim.kind, circuitId: claim.circuit, payloadHash: claim.payloadHash, payloadHashB: claim.payloadHashB,
      claim: JSON.stringify(claim.statement), publicSignals: JSON.stringify(claim.publicSignals), attesterId, batchIndex, job_ID: jobId,
    })))
  })
  return {
    jobId: job.ID, status: job.status, attestationIds: job.command.attestationIds ?? [],
    kinds: claims.map(claim => claim.kind), statements: claims.map(claim => JSON.stringify(claim.statement)),
  }
}

/** What a public-signal vector states, for a proof the caller made. */
function statementOf(claim: ZkClaim): { kind: ClaimKind; statement: Record<string, unknown> } {
  const signals = signalsByName(claim)
  switch (claim.circuit) {
    case 'field_predicate': {
      const op = Number(signals.op)
      if (!(op >= 0 && op <= 3)) throw badInput('INVALID_PUBLIC_SIGNALS', 'op must be 0 to 3', 'publicSignalsJson')
      return { kind: 'field-predicate', statement: { fieldKey: fieldHex(signals.fieldKey), predicate: PREDICATE_NAMES[op], scale: String(signals.scale), scaledThreshold: String(signals.threshold) } }
    }
    case 'field_equality': return { kind: 'field-equality', statement: { fieldKey: fieldHex(signals.fieldKey), expected: fieldHex(signals.expected) } }
    case 'field_membership': return { kind: 'field-membership', statement: { fieldKey: fieldHex(signals.fieldKey), setRoot: fieldHex(signals.setRoot) } }
    default:
      return signals.mode === 0n
        ? { kind: 'document-integrity', statement: { payloadHashB: claim.payloadHashB, allowedMask: Number(signals.mask) } }
        : { kind: 'document-diff', statement: { payloadHashB: claim.payloadHashB, k: Number(signals.k) } }
  }
}

/**
 * A proof the caller made (snarkjs, the keys from /zk-config): verified here, bound to the
 * caller's attester id and to the anchored content roots of its documents, then recorded by a job.
 * A proof that does not verify is refused (400 INVALID_PROOF) and charges nothing.
 */
export async function sponsorAttestation(req: cds.Request) {
  const { data } = req
  const payloadHash = hash32(data.payloadHash, 'payloadHash')
  const payloadHashB = optionalHash32(data.payloadHashB, 'payloadHashB')
  const parsed = proofClaimParam(data.circuitId, data.proofJson, data.publicSignalsJson)
  if ((parsed.circuit === 'document_compare') !== !!payloadHashB) throw badInput('INVALID_PARAMETERS', 'payloadHashB is given for document_compare proofs, and only for them', 'payloadHashB')
  const claim: ZkClaim = { ...parsed, payloadHash, ...(payloadHashB ? { payloadHashB } : {}) }
  const chain = await chainB()
  if (!(await chain.zk.verify(parsed))) throw badInput('INVALID_PROOF', `the proof does not verify for these public signals under the ${parsed.circuit} verification key`, 'proofJson')
  const { kind, statement } = statementOf(claim)
  const context = await claimContext(req)
  checkBindings(claim, context)
  const attestationId = cds.utils.uuid()
  const command: JobCommand = { attestationIds: [attestationId], call: { circuit: 'recordAttestations', args: { claims: [claim] } } }
  const job = await enqueue(req, { kind: 'sponsorAttestation', params: withoutKey(data), idempotencyKey: idempotencyKeyOf(data.idempotencyKey), command }, async jobId => {
    await INSERT.into(Attestations).entries({
      ID: attestationId, kind, circuitId: claim.circuit, payloadHash, payloadHashB, claim: JSON.stringify(statement),
      proof: JSON.stringify(claim.proof), publicSignals: JSON.stringify(claim.publicSignals), attesterId: context.attesterId, job_ID: jobId,
    })
  })
  return { jobId: job.ID, status: job.status, attestationId: job.command.attestationIds?.[0] }
}

const BINDING_STATUS: Record<BindingFailure['code'], number> = {
  ATTESTER_MISMATCH: 400, SAME_DOCUMENT: 400, PAYLOAD_MISMATCH: 400, INVALID_PUBLIC_SIGNALS: 400, VACUOUS_CLAIM: 422,
  DOCUMENT_NOT_ANCHORED: 409, NO_CONTENT_ROOT: 409, CONTENT_ROOT_MISMATCH: 409, ALREADY_PROVEN: 409,
}

/** The vault's checks of a proof's bindings (the caller is its attester, its roots are the anchored ones, the claim is new), before queueing. */
function checkBindings(claim: ZkClaim, context: ClaimContext) {
  const failure = bindingFailure(context.state, claim, context.attesterId)
  if (failure) throw new ApiError(BINDING_STATUS[failure.code], failure.code, failure.message, { target: 'publicSignalsJson' })
}
