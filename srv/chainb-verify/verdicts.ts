import cds from '@sap/cds'
import ChainBAttestationRecords, { Attestations, type Attestation } from '#cds-models/ChainBAttestationRecords'
import { chainB } from '../chains/chain-b/index.ts'
import type { ZkClaim } from '../chains/chain-b/port.ts'
import { anchorOf, anchorsOf, claimKeyOf, type VaultDocument, type VaultState } from '../chains/chain-b/vault.ts'
import { boundAnchors } from '../chains/chain-b/zk/bindings.ts'
import type { CircuitId } from '../chains/chain-b/zk/circuits.ts'
import { fieldOfHex, fieldOfText } from '../chains/chain-b/zk/field.ts'
import { signalsByName, type ProofClaim } from '../chains/chain-b/zk/verifier.ts'
import { badInput, notFound } from '../lib/errors.ts'
import { proofClaimParam } from '../chainb-params/proofs.ts'
import { fieldKeyParam, fieldParam, predicateOf, PREDICATE_NAMES, scaledParam, scaleParam } from '../chainb-params/values.ts'
import { hash32, optionalHash32 } from '../lib/hash-inputs.ts'
import { verifySettings } from './settings.ts'

const { SELECT } = cds.ql

/**
 * The verify lane's answers: each says whether the thing holds (`verified`), a code for why, and
 * where on chain it was recorded. The vault's state on chain is the authority; the service's
 * records only supply what the chain does not carry in its state (an attestation's proof).
 */

type Params = Record<string, unknown>

/** Sponsors whose content roots the lane takes as computed from their documents: this service's own, and the configured ones. */
async function trustedVouchers(): Promise<Set<string>> {
  return new Set([(await chainB()).sponsorKey().id, ...verifySettings().trustedRootVouchers])
}

type Judged = { ok: true; anchors: VaultDocument[] } | { ok: false; code: string; message: string }

/**
 * Whether a verified claim says something true of the documents it names: its signals are bound
 * to its attester's anchors of them (their content roots), its statement keeps the claim rules,
 * and every root was vouched for by a sponsor the lane trusts to have computed it from the
 * document. The same judgement for every verdict about a claim.
 */
function judge(state: VaultState, claim: Pick<ZkClaim, 'circuit' | 'publicSignals' | 'payloadHash' | 'payloadHashB'>, attester: string, vouchers: Set<string>): Judged {
  const bound = boundAnchors(state, claim, attester)
  if ('code' in bound) return { ok: false, code: bound.code === 'DOCUMENT_NOT_ANCHORED' ? 'NOT_ANCHORED' : bound.code, message: bound.message }
  const unvouched = bound.anchors.find(anchor => !anchor.rootVouchedBy || !vouchers.has(anchor.rootVouchedBy))
  if (unvouched) return {
    ok: false, code: 'ROOT_NOT_VOUCHED',
    message: `the content root the claim is about was anchored by sponsor ${unvouched.rootVouchedBy ?? 'unknown'}, which this service does not take as computed from the document: the proof says nothing about the document itself`,
  }
  return { ok: true, anchors: bound.anchors }
}

const where = (record?: { txHash: string; height: number; attester?: string }) => ({
  txHash: record?.txHash ?? null, blockHeight: record?.height ?? null, attesterId: record?.attester ?? null,
})

export async function verifyAttestation(data: Params) {
  const records = await cds.connect.to(ChainBAttestationRecords)
  const row = await records.run(SELECT.one.from(Attestations).where({ ID: data.attestationId })) as Attestation | undefined
  if (!row) throw notFound('ATTESTATION_NOT_FOUND', `no attestation ${String(data.attestationId)}`, 'attestationId')
  const answer = {
    attestationId: row.ID, kind: row.kind, circuitId: row.circuitId, payloadHash: row.payloadHash, payloadHashB: row.payloadHashB ?? null,
    attesterId: row.attesterId, claim: row.claim, proof: row.proof ?? null, publicSignals: row.publicSignals ?? null, txHash: null, blockHeight: null, rootVouchedBy: null,
  }
  if (!row.proof) return { ...answer, verified: false, code: 'NOT_PROVEN_YET', message: `the attestation is ${row.status}: its proof is not made yet` }
  const chain = await chainB()
  const claim = proofClaimParam(row.circuitId, row.proof, row.publicSignals)
  if (!(await chain.zk.verify(claim))) return { ...answer, verified: false, code: 'INVALID_PROOF', message: 'the proof does not verify for its public signals' }
  const state = await chain.vaultState()
  const record = state.attestations[claimKeyOf(claim.circuit, claim.publicSignals)]
  if (!record) return { ...answer, verified: false, code: 'NOT_RECORDED', message: `the proof verifies, but the vault does not record the claim (the attestation is ${row.status})` }
  const judged = judge(state, record, record.attester, await trustedVouchers())
  if (!judged.ok) return { ...answer, ...where(record), verified: false, code: judged.code, message: judged.message }
  return { ...answer, ...where(record), rootVouchedBy: judged.anchors[0].rootVouchedBy, verified: true, code: 'VALID', message: 'the proof verifies, the vault records the claim, and its content roots were computed from the documents by this service' }
}

/** The anchor a question is about: the given attester's, else the one with the given root, else the earliest. */
function anchorAskedAbout(state: VaultState, payloadHash: string, attesterId?: string, contentRoot?: string): VaultDocument | undefined {
  if (attesterId) return anchorOf(state, payloadHash, attesterId)
  const anchors = anchorsOf(state, payloadHash)
  return anchors.find(anchor => contentRoot !== undefined && anchor.contentRoot === contentRoot) ?? anchors[0]
}

export async function verifyAttestationState(data: Params) {
  const payloadHash = hash32(data.payloadHash, 'payloadHash')
  const contentRoot = optionalHash32(data.contentRoot, 'contentRoot')
  const schemaId = optionalHash32(data.schemaId, 'schemaId')
  const attesterId = optionalHash32(data.attesterId, 'attesterId')
  const document = anchorAskedAbout(await (await chainB()).vaultState(), payloadHash, attesterId, contentRoot)
  if (!document) return {
    verified: false, code: 'NOT_ANCHORED', message: `no document ${payloadHash} is anchored on the vault${attesterId ? ' by this attester' : ''}`,
    attested: false, contentRootOk: false, schemaOk: false, rootVouched: false, rootVouchedBy: null, ...where(),
  }
  const contentRootOk = contentRoot === undefined || contentRoot === document.contentRoot
  const schemaOk = schemaId === undefined || schemaId === document.schemaId
  const rootVouched = !!document.rootVouchedBy && (await trustedVouchers()).has(document.rootVouchedBy)
  const code = !contentRootOk ? 'CONTENT_ROOT_MISMATCH' : !schemaOk ? 'SCHEMA_MISMATCH' : contentRoot !== undefined && !rootVouched ? 'ROOT_NOT_VOUCHED' : 'VALID'
  const messages: Record<string, string> = {
    VALID: contentRoot === undefined ? 'the document is anchored' : 'the document is anchored with this content root, computed from the document by this service',
    CONTENT_ROOT_MISMATCH: 'the document is anchored, with another content root',
    SCHEMA_MISMATCH: 'the document is anchored, with another schema id',
    ROOT_NOT_VOUCHED: 'the document is anchored with this content root, but by a sponsor this service does not take as having computed it from the document',
  }
  return {
    verified: code === 'VALID', code, message: messages[code],
    attested: true, contentRootOk, schemaOk, contentRoot: document.contentRoot ?? null, schemaId: document.schemaId ?? null,
    rootVouched, rootVouchedBy: document.rootVouchedBy ?? null, txHash: document.txHash, blockHeight: document.height, attesterId: document.attester,
  }
}

/** The circuit and the public signals (by name) a recorded claim of this kind must carry. */
function expectedSignals(data: Params, payloadHash: string): { circuit: CircuitId; signals: Record<string, bigint>; payloadHashB?: string } {
  const predicate = String(data.predicate ?? '')
  const payload = fieldOfHex(payloadHash)
  const comparison = predicateOf(predicate)
  if (comparison) {
    const scale = scaleParam(data.scale)
    if (data.threshold === undefined || data.threshold === null) throw badInput('MISSING_PARAMETER', 'threshold is required for a field predicate', 'threshold')
    return {
      circuit: 'field_predicate',
      signals: { payload, fieldKey: fieldKeyParam(data.fieldKey), scale, threshold: scaledParam(String(data.threshold), scale, 'threshold'), op: BigInt(comparison.op) },
    }
  }
  if (predicate === 'bytesEquality') {
    const digest = optionalHash32(data.expectedDigest, 'expectedDigest')
    if (!digest && typeof data.expectedValue !== 'string') throw badInput('MISSING_PARAMETER', 'expectedDigest or expectedValue is required for bytesEquality', 'expectedDigest')
    return { circuit: 'field_equality', signals: { payload, fieldKey: fieldKeyParam(data.fieldKey), expected: digest ? fieldOfHex(digest) : fieldOfText(String(data.expectedValue)) } }
  }
  if (predicate === 'setMembership') return { circuit: 'field_membership', signals: { payload, fieldKey: fieldKeyParam(data.fieldKey), setRoot: fieldParam(data.setRoot, 'setRoot') } }
  if (predicate === 'documentIntegrity' || predicate === 'documentDiff') {
    const payloadHashB = hash32(data.payloadHashB, 'payloadHashB')
    const integrity = predicate === 'documentIntegrity'
    const parameter = integrity ? 'allowedMask' : 'k'
    if (data[parameter] === undefined || data[parameter] === null) throw badInput('MISSING_PARAMETER', `${parameter} is required for ${predicate}`, parameter)
    const value = Number(data[parameter])
    if (!Number.isInteger(value) || value < 0) throw badInput(integrity ? 'INVALID_MASK' : 'INVALID_K', `${parameter} must be a whole number, 0 or more`, parameter)
    return {
      circuit: 'document_compare', payloadHashB,
      signals: { payloadA: payload, payloadB: fieldOfHex(payloadHashB), mode: integrity ? 0n : 1n, ...(integrity ? { mask: BigInt(value) } : { k: BigInt(value) }) },
    }
  }
  throw badInput('UNKNOWN_PREDICATE', `predicate must be one of ${[...PREDICATE_NAMES, 'bytesEquality', 'setMembership', 'documentIntegrity', 'documentDiff'].join(', ')}`, 'predicate')
}

export async function verifyPredicateState(data: Params) {
  const payloadHash = hash32(data.payloadHash, 'payloadHash')
  const attesterId = optionalHash32(data.attesterId, 'attesterId')
  const expected = expectedSignals(data, payloadHash)
  const state = await (await chainB()).vaultState()
  const circuitId = expected.circuit
  for (const [documentHash, target] of [[payloadHash, 'payloadHash'], [expected.payloadHashB, 'payloadHashB']]) {
    if (documentHash && !anchorsOf(state, documentHash).length)
      return { verified: false, proven: false, code: 'NOT_ANCHORED', message: `no document ${documentHash} (${target}) is anchored on the vault`, circuitId, rootVouchedBy: null, ...where() }
  }
  const vouchers = await trustedVouchers()
  const candidates = Object.values(state.attestations).filter(candidate =>
    candidate.circuit === expected.circuit && candidate.payloadHash === payloadHash && (candidate.payloadHashB ?? undefined) === expected.payloadHashB &&
    (!attesterId || candidate.attester === attesterId) && Object.entries(expected.signals).every(([name, value]) => signalsByName(candidate)[name] === value))
  let refused: { code: string; message: string } | undefined
  for (const record of candidates) {
    const judged = judge(state, record, record.attester, vouchers)
    if (judged.ok) return { verified: true, proven: true, code: 'VALID', message: `attester ${record.attester} proved the claim about the document, whose content root this service computed from it`, circuitId, rootVouchedBy: judged.anchors[0].rootVouchedBy, ...where(record) }
    refused ??= judged
  }
  if (refused) return { verified: false, proven: true, code: refused.code, message: refused.message, circuitId, rootVouchedBy: null, ...where() }
  return { verified: false, proven: false, code: 'NOT_PROVEN', message: `the vault records no such ${data.predicate} claim about this document${attesterId ? ' by this attester' : ''}`, circuitId, rootVouchedBy: null, ...where() }
}

export async function verifyDocument(data: Params) {
  const payloadHash = hash32(data.sha256, 'sha256')
  const attesterId = optionalHash32(data.attesterId, 'attesterId')
  const chain = await chainB()
  const state = await chain.vaultState()
  const document = anchorAskedAbout(state, payloadHash, attesterId)
  if (!document) return { verified: false, code: 'NOT_ANCHORED', message: `no document ${payloadHash} is anchored on the vault${attesterId ? ' by this attester' : ''}`, payloadHash, ...where(), anchoredAt: null, anchorCount: 0, rootVouchedBy: null }
  const block = await chain.port.block({ height: document.height })
  return {
    verified: true, code: 'VALID', message: attesterId ? 'the attester anchored the document on the vault' : 'the document is anchored on the vault (the earliest anchor is shown)', payloadHash, metadataHash: document.metadataHash,
    contentRoot: document.contentRoot ?? null, schemaId: document.schemaId ?? null, rootVouchedBy: document.rootVouchedBy ?? null, anchorCount: anchorsOf(state, payloadHash).length,
    ...where({ ...document }), anchoredAt: block ? new Date(block.timestamp * 1000).toISOString() : null,
  }
}

/** The longest proof or public-signal text the lane reads. */
const MAX_PROOF_JSON = 8 * 1024

/**
 * A raw proof: VALID only when it verifies and says something true of the documents it names
 * (judged as a recorded claim is: bound to an attester's anchors whose roots this service
 * computed, not vacuous), whether or not the vault records it (`recorded`).
 */
export async function verifyProof(data: Params) {
  for (const name of ['proofJson', 'publicSignalsJson'])
    if (typeof data[name] === 'string' && (data[name] as string).length > MAX_PROOF_JSON) throw badInput('REQUEST_TOO_LARGE', `${name} must be at most ${MAX_PROOF_JSON} characters`, name)
  const proof: ProofClaim = proofClaimParam(data.circuitId, data.proofJson, data.publicSignalsJson)
  const chain = await chainB()
  const answer = { circuitId: proof.circuit, recorded: false, rootVouchedBy: null, ...where() }
  if (!(await chain.zk.verify(proof)))
    return { ...answer, verified: false, code: 'INVALID_PROOF', message: `the proof does not verify for these public signals under the ${proof.circuit} verification key` }
  const state = await chain.vaultState()
  const record = state.attestations[claimKeyOf(proof.circuit, proof.publicSignals)]
  const recorded = { recorded: !!record, ...where(record) }
  const located = locateClaim(state, proof, data)
  if ('code' in located) return { ...answer, ...recorded, verified: false, ...located }
  const judged = judge(state, located.claim, located.attester, await trustedVouchers())
  if (!judged.ok) return { ...answer, ...recorded, attesterId: located.attester, verified: false, code: judged.code, message: `the proof verifies, but ${judged.message}` }
  return {
    ...answer, ...recorded, attesterId: located.attester, rootVouchedBy: judged.anchors[0].rootVouchedBy, verified: true, code: 'VALID',
    message: `the proof verifies and is about the attester's anchored document${located.claim.payloadHashB ? 's' : ''}, whose content roots this service computed${record ? '; the vault records the claim' : '; the vault does not record the claim'}`,
  }
}

/**
 * The documents and attester a raw proof's signals name: the payload hashes given, else the
 * anchored ones whose field element the signals carry; the attester among their anchors'.
 */
function locateClaim(state: VaultState, proof: ProofClaim, data: Params): { claim: ZkClaim; attester: string } | { code: string; message: string } {
  const signals = signalsByName(proof)
  const comparison = proof.circuit === 'document_compare'
  const find = (signal: bigint, given: unknown, target: string) => {
    const hash = optionalHash32(given, target)
    if (hash) return fieldOfHex(hash) === signal ? hash : undefined
    return Object.keys(state.documents).find(candidate => fieldOfHex(candidate) === signal)
  }
  const payloadHash = find(comparison ? signals.payloadA : signals.payload, data.payloadHash, 'payloadHash')
  const payloadHashB = comparison ? find(signals.payloadB, data.payloadHashB, 'payloadHashB') : undefined
  if (!payloadHash || (comparison && !payloadHashB)) return { code: 'NOT_ANCHORED', message: 'the proof verifies, but no document it names is anchored on the vault (or payloadHash is not the one it names)' }
  const attester = Object.keys(state.documents[payloadHash] ?? {}).find(candidate => fieldOfHex(candidate) === signals.attester)
  if (!attester) return { code: 'NOT_ANCHORED', message: 'the proof verifies, but the attester it names has not anchored the document' }
  return { claim: { ...proof, payloadHash, ...(payloadHashB ? { payloadHashB } : {}) }, attester }
}
