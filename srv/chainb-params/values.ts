import { DEFAULT_SCALE, ContentError, fieldKeyOf, MAX_SCALE, scaledValue } from '../chains/chain-b/zk/content.ts'
import { fieldOfHex, parseField, type MerklePath } from '../chains/chain-b/zk/field.ts'
import { badInput } from '../lib/errors.ts'

/**
 * The chain-B services' request parameters as callers give them (the proving operations and the
 * verify lane read them alike), parsed into the connector's values: field keys and elements,
 * Merkle paths, JSON texts (the `...Json` parameters), predicate names, scales and scaled values.
 * A parameter that is not what it must be is a 400 naming it.
 */

/** Predicate names (the reference's and the usual symbols) and the circuit's op. */
export const PREDICATES: Record<string, { op: number; name: string }> = {
  lessOrEqual: { op: 0, name: 'lessOrEqual' }, '<=': { op: 0, name: 'lessOrEqual' }, lte: { op: 0, name: 'lessOrEqual' },
  greaterOrEqual: { op: 1, name: 'greaterOrEqual' }, '>=': { op: 1, name: 'greaterOrEqual' }, gte: { op: 1, name: 'greaterOrEqual' },
  lessThan: { op: 2, name: 'lessThan' }, '<': { op: 2, name: 'lessThan' }, lt: { op: 2, name: 'lessThan' },
  greaterThan: { op: 3, name: 'greaterThan' }, '>': { op: 3, name: 'greaterThan' }, gt: { op: 3, name: 'greaterThan' },
}
export const PREDICATE_NAMES = ['lessOrEqual', 'greaterOrEqual', 'lessThan', 'greaterThan']

/** A predicate by name; own keys only, so a name such as 'toString' is no predicate. */
export const predicateOf = (name: unknown) => (typeof name === 'string' && Object.hasOwn(PREDICATES, name) ? PREDICATES[name] : undefined)

/** A field key: 64 hex as prepareDocumentProof answers it, or the field's path. */
export function fieldKeyParam(value: unknown, target = 'fieldKey'): bigint {
  if (typeof value === 'string' && /^[0-9a-fA-F]{64}$/.test(value)) {
    const key = parseField(value)
    if (key === undefined) throw badInput('INVALID_FIELD_KEY', `${target} must be below the BN254 field's prime`, target)
    return key
  }
  if (typeof value !== 'string' || value === '' || value.length > 256) throw badInput('INVALID_FIELD_KEY', `${target} must be the fieldKey from prepareDocumentProof (64 hex) or the field's path`, target)
  return fieldOfHex(fieldKeyOf(value))
}

/** A field element given as 64 hex (a salt, a root, a sibling). */
export function fieldParam(value: unknown, target: string): bigint {
  const element = typeof value === 'string' && /^[0-9a-fA-F]{64}$/.test(value) ? parseField(value) : undefined
  if (element === undefined) throw badInput('INVALID_FIELD_ELEMENT', `${target} must be 64 hex characters, a BN254 field element (as prepareDocumentProof answers it)`, target)
  return element
}

/** A JSON value given as text (the …Json parameters) or, inside claimsJson, as the value itself. */
export function jsonValue(value: unknown, target: string): unknown {
  if (typeof value !== 'string') return value
  try {
    return JSON.parse(value)
  } catch {
    throw badInput('INVALID_JSON', `${target} must be JSON text`, target)
  }
}

/** A JSON array given as text or as the array itself. */
export function jsonArray(value: unknown, target: string): unknown[] {
  const parsed = jsonValue(value, target)
  if (!Array.isArray(parsed)) throw badInput('INVALID_JSON', `${target} must be a JSON array`, target)
  return parsed
}

/** A Merkle path: `depth` siblings (64 hex) and `depth` directions (true or 1: the node is the left child). */
export function pathParam(siblings: unknown, dirs: unknown, depth: number, names: [string, string]): MerklePath {
  const siblingList = jsonArray(siblings, names[0])
  const dirList = jsonArray(dirs, names[1])
  if (siblingList.length !== depth) throw badInput('INVALID_PATH', `${names[0]} must list ${depth} siblings`, names[0])
  if (dirList.length !== depth || !dirList.every(dir => dir === true || dir === false || dir === 0 || dir === 1))
    throw badInput('INVALID_PATH', `${names[1]} must list ${depth} directions, true or false (1 or 0)`, names[1])
  return { siblings: siblingList.map((sibling, i) => fieldParam(sibling, `${names[0]}[${i}]`)), dirs: dirList.map(dir => dir === true || dir === 1) }
}

/** A scale: a whole number from 1 to 10^18; unset is the default (1000). */
export function scaleParam(value: unknown, target = 'scale'): bigint {
  if (value === undefined || value === null || value === '') return DEFAULT_SCALE
  const text = String(value)
  if (!/^[1-9][0-9]{0,18}$/.test(text) || BigInt(text) > MAX_SCALE) throw badInput('INVALID_SCALE', `${target} must be a whole number from 1 to 10^18`, target)
  return BigInt(text)
}

/** A non-negative decimal in a field's units, times scale: exact and below 2^64 (400 VALUE_OUT_OF_SCALE). */
export function scaledParam(text: string, scale: bigint, target: string): bigint {
  try {
    return scaledValue(text, scale)
  } catch (error) {
    if (error instanceof ContentError) throw badInput(error.code, `${target} ${error.message}`, target)
    throw error
  }
}
