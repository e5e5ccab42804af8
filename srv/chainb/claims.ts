import { anchorOf, claimKeyOf, type VaultState } from '../chains/chain-b/vault.ts'
import { claimRuleFailure } from '../chains/chain-b/zk/claim-rules.ts'
import { signalsByName } from '../chains/chain-b/zk/verifier.ts'
import { CIRCUITS, type CircuitId } from '../chains/chain-b/zk/circuits.ts'
import {
  DEPTH, KIND, rootOfOpening, SET_DEPTH, SLOTS, slotSalt, type Opening, type OpenedSlot,
} from '../chains/chain-b/zk/content.ts'
import { FIELD_PRIME, fieldHex, fieldOfHex, leafHash, parseField, rootOfPath, setLeafHash, sha256Bytes, type MerklePath } from '../chains/chain-b/zk/field.ts'
import { ApiError, badInput } from '../lib/errors.ts'
import { hash32, optionalHash32 } from '../lib/hash-inputs.ts'
import { allowedValuesSet } from '../chainb-params/documents.ts'
import { fieldKeyParam, fieldParam, jsonValue, pathParam, predicateOf, PREDICATE_NAMES, scaledParam, scaleParam } from '../chainb-params/values.ts'

/**
 * The claims a caller asks the service to prove, checked before anything is queued: the witness
 * (value, salt, path; or both openings) must lead to the content root anchored on the vault for
 * the document, the statement must hold, and the same claim must not be recorded already. What
 * passes is a circuit's full input (witness included, kept only until the job has proved it) and
 * the public statement recorded with the attestation.
 */

export type ClaimKind = 'field-predicate' | 'field-equality' | 'field-membership' | 'document-integrity' | 'document-diff'

export interface PreparedClaim {
  kind: ClaimKind
  circuit: CircuitId
  payloadHash: string
  payloadHashB?: string
  /** What the claim states (public): kept with the attestation, answered by the verify lane. */
  statement: Record<string, unknown>
  /** The circuit's input, witness included; field elements as decimal strings. */
  input: Record<string, string | string[]>
  publicSignals: string[]
}

export interface ClaimContext {
  state: VaultState
  /** The attester the proof names: the caller's attester id. */
  attesterId: string
}

type Params = Record<string, unknown>

const dec = (value: bigint | number) => String(value)
const claimFalse = (message: string, target?: string) => new ApiError(422, 'CLAIM_FALSE', message, { target })

/** A path as a circuit's inputs: siblings and dirs (setSiblings and setDirs for a set path). */
const pathInput = (path: MerklePath, set = false) => ({ [set ? 'setSiblings' : 'siblings']: path.siblings.map(dec), [set ? 'setDirs' : 'dirs']: path.dirs.map(dir => (dir ? '1' : '0')) })

/** The content root of the caller's anchor of a document; given a contentRoot, it must be that one. */
export function anchoredRoot(context: ClaimContext, payloadHash: string, given: unknown, target = 'payloadHash'): bigint {
  const document = anchorOf(context.state, payloadHash, context.attesterId)
  if (!document) throw new ApiError(409, 'DOCUMENT_NOT_ANCHORED', `you have not anchored a document with payload hash ${payloadHash} on the vault (anchor it first)`, { target })
  if (!document.contentRoot) throw new ApiError(409, 'NO_CONTENT_ROOT', `your anchor of ${payloadHash} has no content root (anchor the document with documentJson, proofFieldsJson and saltSeed)`, { target })
  const root = BigInt('0x' + document.contentRoot)
  if (given !== undefined && given !== null && given !== '' && fieldParam(given, 'contentRoot') !== root)
    throw new ApiError(409, 'CONTENT_ROOT_MISMATCH', `contentRoot is not the content root anchored for ${payloadHash}`, { target: 'contentRoot' })
  return root
}

function reachesRoot(leaf: bigint, path: MerklePath, root: bigint, what: string) {
  if (rootOfPath(leaf, path) !== root)
    throw badInput('WITNESS_MISMATCH', `${what} do not lead to the document's anchored content root: check fieldKey, the value, fieldSalt, siblingsJson and dirsJson (and scale) against prepareDocumentProof`)
}

function finish(claim: Omit<PreparedClaim, 'publicSignals'>, context: ClaimContext): PreparedClaim {
  const publicSignals = CIRCUITS[claim.circuit].publicSignals.map(name => claim.input[name] as string)
  const documents = [claim.payloadHash, claim.payloadHashB].filter((hash): hash is string => !!hash)
  const broken = claimRuleFailure(claim.circuit, signalsByName({ circuit: claim.circuit, publicSignals }), documents.map(hash => anchorOf(context.state, hash, context.attesterId)?.fieldCount))
  if (broken) throw new ApiError(broken.code === 'VACUOUS_CLAIM' ? 422 : 400, broken.code, broken.message)
  if (context.state.attestations[claimKeyOf(claim.circuit, publicSignals)])
    throw new ApiError(409, 'ALREADY_PROVEN', `you have proven this ${claim.kind} claim already; verify it on the verify lane`)
  return { ...claim, publicSignals }
}

const common = (payloadHash: string, root: bigint, context: ClaimContext, key: bigint) => ({
  payload: dec(fieldOfHex(payloadHash)), root: dec(root), attester: dec(fieldOfHex(context.attesterId)), fieldKey: dec(key),
})

/** The field's value compares to a threshold: value and threshold in the field's units, both times scale. */
export function fieldPredicateClaim(params: Params, context: ClaimContext): PreparedClaim {
  const payloadHash = hash32(params.payloadHash, 'payloadHash')
  const key = fieldKeyParam(params.fieldKey)
  const predicate = predicateOf(params.predicate)
  if (!predicate) throw badInput('UNKNOWN_PREDICATE', `predicate must be one of ${PREDICATE_NAMES.join(', ')} (or <=, >=, <, >)`, 'predicate')
  const scale = scaleParam(params.scale)
  const value = scaledParam(textParam(params.value, 'value'), scale, 'value')
  const threshold = scaledParam(textParam(params.threshold, 'threshold'), scale, 'threshold')
  const salt = fieldParam(params.fieldSalt ?? params.salt, 'fieldSalt')
  const path = pathParam(params.siblingsJson ?? params.siblings, params.dirsJson ?? params.dirs, DEPTH, ['siblingsJson', 'dirsJson'])
  const root = anchoredRoot(context, payloadHash, params.contentRoot)
  reachesRoot(leafHash(key, BigInt(KIND.uint), scale, value, salt), path, root, 'fieldKey, value, scale, fieldSalt and the path')
  const holds = [value <= threshold, value >= threshold, value < threshold, value > threshold][predicate.op]
  if (!holds) throw claimFalse(`the field's value is not ${predicate.name} ${textParam(params.threshold, 'threshold')}: nothing to prove`, 'threshold')
  return finish({
    kind: 'field-predicate', circuit: 'field_predicate', payloadHash,
    statement: { fieldKey: fieldHex(key), predicate: predicate.name, threshold: textParam(params.threshold, 'threshold'), scale: dec(scale), scaledThreshold: dec(threshold), ...(params.unit ? { unit: String(params.unit).slice(0, 40) } : {}) },
    input: { ...common(payloadHash, root, context, key), scale: dec(scale), threshold: dec(threshold), op: dec(predicate.op), value: dec(value), salt: dec(salt), ...pathInput(path) },
  }, context)
}

/** The field holds the text whose SHA-256 is expectedDigest (or the text expectedValue). */
export function fieldEqualityClaim(params: Params, context: ClaimContext): PreparedClaim {
  const payloadHash = hash32(params.payloadHash, 'payloadHash')
  const key = fieldKeyParam(params.fieldKey)
  const expectedDigest = digestParam(params.expectedValue, params.expectedDigest, ['expectedValue', 'expectedDigest'])
  const expected = fieldOfHex(expectedDigest)
  const salt = fieldParam(params.fieldSalt ?? params.salt, 'fieldSalt')
  const path = pathParam(params.siblingsJson ?? params.siblings, params.dirsJson ?? params.dirs, DEPTH, ['siblingsJson', 'dirsJson'])
  const root = anchoredRoot(context, payloadHash, params.contentRoot)
  if (rootOfPath(leafHash(key, BigInt(KIND.bytes), 0n, expected, salt), path) !== root)
    throw claimFalse('the field does not hold the expected value (or fieldKey, fieldSalt or the path is not the one prepareDocumentProof answered)', 'expectedDigest')
  return finish({
    kind: 'field-equality', circuit: 'field_equality', payloadHash,
    statement: { fieldKey: fieldHex(key), expectedDigest },
    input: { ...common(payloadHash, root, context, key), expected: dec(expected), salt: dec(salt), ...pathInput(path) },
  }, context)
}

/** The field's text is one of a set (allowedValuesJson, or setRoot with the member's set path). */
export function fieldMembershipClaim(params: Params, context: ClaimContext): PreparedClaim {
  const payloadHash = hash32(params.payloadHash, 'payloadHash')
  const key = fieldKeyParam(params.fieldKey)
  const digest = fieldOfHex(digestParam(params.value, params.valueDigest, ['value', 'valueDigest']))
  let setRoot: bigint
  let setPath: MerklePath
  const allowed = params.allowedValuesJson ?? params.allowedValues
  if (allowed !== undefined && allowed !== null) {
    const set = allowedValuesSet(allowed, digest)
    setRoot = BigInt('0x' + set.setRoot)
    setPath = { siblings: set.path!.siblings.map(hex => BigInt('0x' + hex)), dirs: set.path!.dirs }
  } else {
    setRoot = fieldParam(params.setRoot, 'setRoot')
    setPath = pathParam(params.setSiblingsJson ?? params.setSiblings, params.setDirsJson ?? params.setDirs, SET_DEPTH, ['setSiblingsJson', 'setDirsJson'])
    if (rootOfPath(setLeafHash(digest), setPath) !== setRoot) throw claimFalse('the value is not a member of the set with this root (or the set path is wrong)', 'setRoot')
  }
  const salt = fieldParam(params.fieldSalt ?? params.salt, 'fieldSalt')
  const path = pathParam(params.siblingsJson ?? params.siblings, params.dirsJson ?? params.dirs, DEPTH, ['siblingsJson', 'dirsJson'])
  const root = anchoredRoot(context, payloadHash, params.contentRoot)
  reachesRoot(leafHash(key, BigInt(KIND.bytes), 0n, digest, salt), path, root, 'fieldKey, the value, fieldSalt and the path')
  return finish({
    kind: 'field-membership', circuit: 'field_membership', payloadHash,
    statement: { fieldKey: fieldHex(key), setRoot: fieldHex(setRoot) },
    input: { ...common(payloadHash, root, context, key), setRoot: dec(setRoot), value: dec(digest), salt: dec(salt), ...pathInput(path), ...pathInput(setPath, true) },
  }, context)
}

/**
 * Two anchored documents with the same fields in the same slots: integrity (only the slots in
 * allowedMask may differ) or diff (at least k slots differ). Both openings stay hidden.
 */
export function documentComparisonClaim(mode: 'integrity' | 'diff', params: Params, context: ClaimContext): PreparedClaim {
  const payloadHash = hash32(params.payloadHashA ?? params.payloadHash, 'payloadHashA')
  const payloadHashB = hash32(params.payloadHashB, 'payloadHashB')
  if (payloadHash === payloadHashB) throw badInput('SAME_DOCUMENT', 'payloadHashA and payloadHashB must name two different documents', 'payloadHashB')
  const openingA = openingParam(params.openingAJson ?? params.openingA, 'openingAJson')
  const openingB = openingParam(params.openingBJson ?? params.openingB, 'openingBJson')
  const rootA = anchoredRoot(context, payloadHash, params.contentRootA, 'payloadHashA')
  const rootB = anchoredRoot(context, payloadHashB, params.contentRootB, 'payloadHashB')
  if (rootOfOpening(openingA) !== rootA) throw badInput('WITNESS_MISMATCH', "openingAJson does not lead to document A's anchored content root (use the opening prepareDocumentProof answered)", 'openingAJson')
  if (rootOfOpening(openingB) !== rootB) throw badInput('WITNESS_MISMATCH', "openingBJson does not lead to document B's anchored content root (use the opening prepareDocumentProof answered)", 'openingBJson')
  if (openingA.slots.some((slot, i) => slot.key !== openingB.slots[i].key))
    throw badInput('SCHEMA_MISMATCH', 'the two documents do not hold the same fields in the same slots (prepare both with the same proofFieldsJson)', 'openingBJson')
  const differs = openingA.slots.map((slot, i) => slot.kind !== openingB.slots[i].kind || slot.scale !== openingB.slots[i].scale || slot.value !== openingB.slots[i].value)
  let mask = 0
  let k = 0
  let statement: Record<string, unknown>
  if (mode === 'integrity') {
    mask = maskParam(params.allowedMask)
    const constrained = openingA.slots.some((slot, i) => !(mask & (1 << i)) && BigInt('0x' + slot.key) !== 0n)
    if (!constrained) throw badInput('VACUOUS_MASK', 'allowedMask lets every field differ: leave at least one field of the documents outside it', 'allowedMask')
    const changed = differs.findIndex((differ, i) => differ && !(mask & (1 << i)))
    if (changed >= 0) throw claimFalse(`slot ${changed} differs between the documents but is not in allowedMask`, 'allowedMask')
    statement = { payloadHashB, allowedMask: mask }
  } else {
    k = Number(params.k)
    if (!Number.isInteger(k) || k < 1 || k > SLOTS) throw badInput('INVALID_K', `k must be a whole number from 1 to ${SLOTS}`, 'k')
    const count = differs.filter(Boolean).length
    if (count < k) throw claimFalse(`the documents differ in ${count} slot${count === 1 ? '' : 's'}, fewer than k = ${k}`, 'k')
    statement = { payloadHashB, k }
  }
  const slots = (opening: Opening, field: keyof OpenedSlot) => opening.slots.map(slot => String(field === 'key' ? BigInt('0x' + slot.key) : slot[field]))
  const salts = (opening: Opening) => opening.slots.map((_, i) => dec(slotSalt(opening.saltSeed, i)))
  return finish({
    kind: mode === 'integrity' ? 'document-integrity' : 'document-diff', circuit: 'document_compare', payloadHash, payloadHashB, statement,
    input: {
      payloadA: dec(fieldOfHex(payloadHash)), rootA: dec(rootA), payloadB: dec(fieldOfHex(payloadHashB)), rootB: dec(rootB), attester: dec(fieldOfHex(context.attesterId)),
      mode: mode === 'integrity' ? '0' : '1', mask: dec(mask), k: dec(k),
      keys: slots(openingA, 'key'), kindA: slots(openingA, 'kind'), scaleA: slots(openingA, 'scale'), valueA: slots(openingA, 'value'), saltA: salts(openingA),
      kindB: slots(openingB, 'kind'), scaleB: slots(openingB, 'scale'), valueB: slots(openingB, 'value'), saltB: salts(openingB),
    },
  }, context)
}

function maskParam(value: unknown): number {
  const mask = Number(value)
  if (value === undefined || value === null || value === '' || !Number.isInteger(mask) || mask < 0 || mask >= 1 << SLOTS)
    throw badInput('INVALID_MASK', `allowedMask must be a whole number from 0 to ${(1 << SLOTS) - 1} (bit i: slot i may differ)`, 'allowedMask')
  return mask
}

/** An opening as prepareDocumentProof answers it: the salt seed and every slot's key, kind, scale and value. */
export function openingParam(value: unknown, target: string): Opening {
  const opening = jsonValue(value, target) as Partial<Opening> | null
  const invalid = (why: string) => badInput('INVALID_OPENING', `${target}: ${why} (use the opening prepareDocumentProof answered)`, target)
  if (!opening || typeof opening !== 'object') throw invalid('must be an object { saltSeed, slots }')
  if (typeof opening.saltSeed !== 'string' || !/^[0-9a-f]{64}$/.test(opening.saltSeed)) throw invalid('saltSeed must be 64 lowercase hex')
  if (!Array.isArray(opening.slots) || opening.slots.length !== SLOTS) throw invalid(`slots must list ${SLOTS} slots`)
  const slots = opening.slots.map((slot, i): OpenedSlot => {
    const { key, kind, scale, value: slotValue } = (slot ?? {}) as Partial<OpenedSlot>
    if (typeof key !== 'string' || parseField(key) === undefined || !/^[0-9a-f]{64}$/.test(key)) throw invalid(`slot ${i}: key must be 64 lowercase hex`)
    if (kind !== 0 && kind !== 1 && kind !== 2) throw invalid(`slot ${i}: kind must be 0, 1 or 2`)
    if (typeof scale !== 'string' || !/^[0-9]{1,19}$/.test(scale) || typeof slotValue !== 'string' || !/^[0-9]{1,78}$/.test(slotValue) || BigInt(slotValue) >= FIELD_PRIME)
      throw invalid(`slot ${i}: scale and value must be decimal texts`)
    return { key, kind, scale, value: slotValue }
  })
  return { saltSeed: opening.saltSeed, slots }
}

function textParam(value: unknown, target: string): string {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  if (typeof value !== 'string' || value === '') throw badInput('MISSING_PARAMETER', `${target} is required`, target)
  return value
}

/** A digest given directly (64 hex) or as the text it is the SHA-256 of. */
function digestParam(text: unknown, digest: unknown, [textName, digestName]: [string, string]): string {
  const given = optionalHash32(digest, digestName)
  if (given) return given
  if (typeof text !== 'string') throw badInput('MISSING_PARAMETER', `${textName} (the text) or ${digestName} (its SHA-256, 64 hex) is required`, textName)
  return sha256Bytes(text).toString('hex')
}
