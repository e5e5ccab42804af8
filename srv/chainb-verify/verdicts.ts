import cds from '@sap/cds'
import { Attestations } from '#cds-models/chainb'
import { chainB } from '../chains/chain-b/index.ts'
import { claimKeyOf, type VaultAttestation, type VaultState } from '../chains/chain-b/vault.ts'
import type { CircuitId } from '../chains/chain-b/zk/circuits.ts'
import { scaledValue, scaleOf } from '../chains/chain-b/zk/content.ts'
import { fieldOfHex, fieldOfText } from '../chains/chain-b/zk/field.ts'
import { proofClaimOf, signalsByName, type ProofClaim } from '../chains/chain-b/zk/verifier.ts'
import { badInput, notFound } from '../lib/errors.ts'
import { fieldKeyParam, fieldParam, jsonValue, predicateOf, PREDICATE_NAMES } from '../chains/chain-b/zk/params.ts'
import { hash32, optionalHash32 } from '../lib/hash-inputs.ts'

const { SELECT } = cds.ql

/**
 * The verify lane's answers: each says whether the thing holds (`verified`), a code for why, and
 * where on chain it was recorded. The vault's state on chain is the authority; the service's
 * records only supply what the chain does not carry in its state (an attestation's proof).
 */

type Params = Record<string, unknown>

/** Every document a claim is about still has the content root the claim's public signals name. */
function rootsStillAnchored(state: VaultState, record: Pick<VaultAttestation, 'circuit' | 'publicSignals' | 'payloadHash' | 'payloadHashB'>): boolean {
  const signals = signalsByName(record)
  const documents = record.payloadHashB ? [[record.payloadHash, 'rootA'], [record.payloadHashB, 'rootB']] : [[record.payloadHash, 'root']]
  return documents.every(([payloadHash, rootSignal]) => {
    const root = state.documents[payloadHash]?.contentRoot
    return !!root && BigInt('0x' + root) === signals[rootSignal]
  })
}

const where = (record?: { txHash: string; height: number; attester?: string }) => ({
  txHash: record?.txHash ?? null, blockHeight: record?.height ?? null, attesterId: record?.attester ?? null,
})

export async function verifyAttestation(data: Params) {
  const row = await SELECT.one.from(Attestations).where({ ID: data.attestationId })
  if (!row) throw notFound('ATTESTATION_NOT_FOUND', `no attestation ${String(data.attestationId)}`, 'attestationId')
  const answer = {
    attestationId: row.ID, kind: row.kind, circuitId: row.circuitId, payloadHash: row.payloadHash, payloadHashB: row.payloadHashB ?? null,
    attesterId: row.attesterId, claim: row.claim, proof: row.proof ?? null, publicSignals: row.publicSignals ?? null, txHash: null, blockHeight: null,
  }
  if (!row.proof) return { ...answer, verified: false, code: 'NOT_PROVEN_YET', message: `the attestation is ${row.status}: its proof is not made yet` }
  const chain = await chainB()
  const claim = proofClaimOf(row.circuitId, JSON.parse(row.proof), JSON.parse(row.publicSignals!))
  if (!(await chain.zk.verify(claim))) return { ...answer, verified: false, code: 'INVALID_PROOF', message: 'the proof does not verify for its public signals' }
  const state = await chain.vaultState()
  const record = state.attestations[claimKeyOf(claim.circuit, claim.publicSignals)]
  if (!record) return { ...answer, verified: false, code: 'NOT_RECORDED', message: `the proof verifies, but the vault does not record the claim (the attestation is ${row.status})` }
  if (!rootsStillAnchored(state, record)) return { ...answer, ...where(record), verified: false, code: 'CONTENT_ROOT_MISMATCH', message: "the claim's content root is no longer the one anchored" }
  return { ...answer, ...where(record), verified: true, code: 'VALID', message: 'the proof verifies and the vault records the claim' }
}

export async function verifyAttestationState(data: Params) {
  const payloadHash = hash32(data.payloadHash, 'payloadHash')
  const contentRoot = optionalHash32(data.contentRoot, 'contentRoot')
  const schemaId = optionalHash32(data.schemaId, 'schemaId')
  const document = (await (await chainB()).vaultState()).documents[payloadHash]
  if (!document) return { verified: false, code: 'NOT_ANCHORED', message: `no document ${payloadHash} is anchored on the vault`, attested: false, contentRootOk: false, schemaOk: false, ...where() }
  const contentRootOk = contentRoot === undefined || contentRoot === document.contentRoot
  const schemaOk = schemaId === undefined || schemaId === document.schemaId
  const code = !contentRootOk ? 'CONTENT_ROOT_MISMATCH' : !schemaOk ? 'SCHEMA_MISMATCH' : 'VALID'
  return {
    verified: code === 'VALID', code, message: code === 'VALID' ? 'the document is anchored as given' : `the document is anchored, with another ${code === 'SCHEMA_MISMATCH' ? 'schema id' : 'content root'}`,
    attested: true, contentRootOk, schemaOk, contentRoot: document.contentRoot ?? null, schemaId: document.schemaId ?? null,
    txHash: document.txHash, blockHeight: document.height, attesterId: document.attester,
  }
}

/** The circuit and the public signals (by name) a recorded claim of this kind must carry. */
function expectedSignals(data: Params, payloadHash: string): { circuit: CircuitId; signals: Record<string, bigint>; payloadHashB?: string } {
  const predicate = String(data.predicate ?? '')
  const payload = fieldOfHex(payloadHash)
  const comparison = predicateOf(predicate)
  if (comparison) {
    const scale = scaleOf(data.scale)
    if (data.threshold === undefined || data.threshold === null) throw badInput('MISSING_PARAMETER', 'threshold is required for a field predicate', 'threshold')
    return {
      circuit: 'field_predicate',
      signals: { payload, fieldKey: fieldKeyParam(data.fieldKey), scale, threshold: scaledValue(String(data.threshold), scale, 'threshold'), op: BigInt(comparison.op) },
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
    if (documentHash && !state.documents[documentHash])
      return { verified: false, proven: false, code: 'NOT_ANCHORED', message: `no document ${documentHash} (${target}) is anchored on the vault`, circuitId, ...where() }
  }
  const record = Object.values(state.attestations).find(candidate =>
    candidate.circuit === expected.circuit && candidate.payloadHash === payloadHash && (candidate.payloadHashB ?? undefined) === expected.payloadHashB &&
    (!attesterId || candidate.attester === attesterId) && rootsStillAnchored(state, candidate) &&
    Object.entries(expected.signals).every(([name, value]) => signalsByName(candidate)[name] === value))
  if (!record) return { verified: false, proven: false, code: 'NOT_PROVEN', message: `the vault records no such ${data.predicate} claim about this document${attesterId ? ' by this attester' : ''}`, circuitId, ...where() }
  return { verified: true, proven: true, code: 'VALID', message: 'the vault records the claim about the document as anchored', circuitId, ...where(record) }
}

export async function verifyDocument(data: Params) {
  const payloadHash = hash32(data.sha256, 'sha256')
  const chain = await chainB()
  const document = (await chain.vaultState()).documents[payloadHash]
  if (!document) return { verified: false, code: 'NOT_ANCHORED', message: `no document ${payloadHash} is anchored on the vault`, payloadHash, ...where(), anchoredAt: null }
  const block = await chain.port.block({ height: document.height })
  return {
    verified: true, code: 'VALID', message: 'the document is anchored on the vault', payloadHash, metadataHash: document.metadataHash,
    contentRoot: document.contentRoot ?? null, schemaId: document.schemaId ?? null, ...where({ ...document }), anchoredAt: block ? new Date(block.timestamp * 1000).toISOString() : null,
  }
}

/** The longest proof or public-signal text the lane reads. */
export const MAX_PROOF_JSON = 8 * 1024

export async function verifyProof(data: Params) {
  for (const name of ['proofJson', 'publicSignalsJson'])
    if (typeof data[name] === 'string' && (data[name] as string).length > MAX_PROOF_JSON) throw badInput('REQUEST_TOO_LARGE', `${name} must be at most ${MAX_PROOF_JSON} characters`, name)
  const claim: ProofClaim = proofClaimOf(data.circuitId, jsonValue(data.proofJson, 'proofJson'), jsonValue(data.publicSignalsJson, 'publicSignalsJson'))
  const chain = await chainB()
  if (!(await chain.zk.verify(claim)))
    return { verified: false, code: 'INVALID_PROOF', message: `the proof does not verify for these public signals under the ${claim.circuit} verification key`, circuitId: claim.circuit, recorded: false, ...where() }
  const record = (await chain.vaultState()).attestations[claimKeyOf(claim.circuit, claim.publicSignals)]
  return {
    verified: true, code: 'VALID', message: `the proof verifies${record ? ' and the vault records the claim' : '; the vault does not record this claim'}`,
    circuitId: claim.circuit, recorded: !!record, ...where(record),
  }
}

