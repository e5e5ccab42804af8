import { ContentError, MAX_SET_MEMBERS, membershipSet, prepareDocument, SLOTS, type FieldKind, type ProofFieldSpec } from '../chains/chain-b/zk/content.ts'
import { ApiError, badInput } from '../lib/errors.ts'
import { jsonValue, scaleParam } from './values.ts'

/** Documents, their proof fields and membership sets as callers give them (documentJson, proofFieldsJson, allowedValuesJson). */

const MAX_SET_ENTRIES = 1024

/** A document to prove about: a JSON object or array. */
export function documentParam(value: unknown, target = 'documentJson'): object {
  const document = jsonValue(value, target)
  if (!document || typeof document !== 'object') throw badInput('INVALID_DOCUMENT', `${target} must be a JSON object or array`, target)
  return document
}

/** The proof field list: paths, or `{ field, kind?, scale? }`; at most 16, each once. */
export function proofFieldsParam(value: unknown, target = 'proofFieldsJson'): ProofFieldSpec[] {
  const raw = jsonValue(value, target)
  if (!Array.isArray(raw) || raw.length === 0) throw badInput('INVALID_PROOF_FIELDS', `${target} must be a JSON array of field paths or { field, kind?, scale? } objects, at least one`, target)
  if (raw.length > SLOTS) throw badInput('TOO_MANY_FIELDS', `a document proves at most ${SLOTS} fields, got ${raw.length}`, target)
  const seen = new Set<string>()
  return raw.map((entry, index) => {
    const spec = (typeof entry === 'string' ? { field: entry } : entry) as { field?: unknown; kind?: unknown; scale?: unknown } | null
    if (!spec || typeof spec !== 'object' || typeof spec.field !== 'string' || spec.field === '' || spec.field.length > 256)
      throw badInput('INVALID_PROOF_FIELDS', `proof field ${index} needs a field path of 1 to 256 characters`, target)
    const { field, kind, scale } = spec as { field: string; kind?: unknown; scale?: unknown }
    if (kind !== undefined && kind !== 'uint' && kind !== 'bytes') throw badInput('INVALID_PROOF_FIELDS', `proof field '${field}': kind must be uint or bytes`, target)
    if (kind === 'bytes' && scale !== undefined) throw badInput('INVALID_PROOF_FIELDS', `proof field '${field}': a bytes field has no scale`, target)
    if (seen.has(field)) throw badInput('DUPLICATE_FIELD', `proof field '${field}' is listed twice`, target)
    seen.add(field)
    return { field, kind: kind as FieldKind | undefined, ...(scale === undefined ? {} : { scale: scaleParam(scale, `scale of ${field}`) }) }
  })
}

/** The document's content root over its fields; a value the fields cannot hold is a 400 naming the document. */
export function preparedDocument(document: object, specs: ProofFieldSpec[], saltSeed: string, target = 'documentJson') {
  try {
    return prepareDocument(document, specs, saltSeed)
  } catch (error) {
    if (error instanceof ContentError) throw badInput(error.code, error.message, target)
    throw error
  }
}

/** The allowed values of a set: texts, at most 1024 entries and 64 distinct ones. */
export function allowedValuesParam(value: unknown, target = 'allowedValuesJson'): string[] {
  const raw = jsonValue(value, target)
  if (!Array.isArray(raw) || raw.length === 0) throw badInput('INVALID_SET', `${target} must be a JSON array of texts, at least one`, target)
  if (raw.length > MAX_SET_ENTRIES) throw badInput('SET_TOO_LARGE', `${target} may list at most ${MAX_SET_ENTRIES} entries`, target)
  if (raw.some(entry => typeof entry !== 'string')) throw badInput('INVALID_SET', 'every allowed value must be a text', target)
  const distinct = new Set(raw).size
  if (distinct > MAX_SET_MEMBERS) throw badInput('SET_TOO_LARGE', `a set has at most ${MAX_SET_MEMBERS} distinct members, got ${distinct}`, target)
  return raw as string[]
}

/** The set of allowed values given as `target`; with a member digest, it must be one of them (422 NOT_A_MEMBER). */
export function allowedValuesSet(value: unknown, memberDigest?: bigint, target = 'allowedValuesJson') {
  const set = membershipSet(allowedValuesParam(value, target), memberDigest)
  if (memberDigest !== undefined && !set.path) throw new ApiError(422, 'NOT_A_MEMBER', 'the value is not one of the allowed values', { target: 'value' })
  return set
}
