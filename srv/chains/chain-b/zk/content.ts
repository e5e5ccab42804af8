import { canonicalJson } from '../../../lib/canonical-json.ts'
import { ApiError, badInput } from '../../../lib/errors.ts'
import { fieldHex, fieldOfHex, fieldOfText, leafHash, pathOf, setLeafHash, sha256Bytes, treeLevels, type MerklePath } from './field.ts'

/**
 * Salted content roots (the README's "Content roots" section is the specification, so a third
 * party can recompute every value here):
 * - payloadHash = SHA-256 of the canonical document (keys sorted, no spaces);
 * - 16 slots, one per proof field in the order given, the rest padding; slot i's salt is the field
 *   element of SHA-256(saltSeed ‖ byte i);
 * - leaf = Poseidon(fieldKey, kind, scale, value, salt), fieldKey = the field element of SHA-256 of
 *   the field's path; kind 0 a whole number (value = the field's value × scale, below 2^64),
 *   1 text (value = the field element of SHA-256 of the text), 2 absent or padding (value and scale 0);
 * - contentRoot = the Poseidon Merkle root of the 16 leaves (node = Poseidon(left, right)).
 * Membership sets: the field elements of the members' SHA-256, without repeats, sorted ascending,
 * padded to 64 with the largest, leaf = Poseidon(digest), a depth-6 tree.
 */

export const SLOTS = 16
export const DEPTH = 4
export const SET_DEPTH = 6
const MAX_SET_MEMBERS = 64
const MAX_SET_ENTRIES = 1024
const DEFAULT_SCALE = 1000n
const MAX_SCALE = 10n ** 18n
const MAX_VALUE = 2n ** 64n - 1n
export const KIND = { uint: 0, bytes: 1, absent: 2 } as const
type FieldKind = 'uint' | 'bytes'

interface ProofFieldSpec {
  field: string
  kind?: FieldKind
  scale?: number | string
}

/** What a slot holds, as a circuit sees it (field elements as decimal strings, the key as hex). */
export interface OpenedSlot {
  key: string
  kind: 0 | 1 | 2
  scale: string
  value: string
}

export interface Opening {
  saltSeed: string
  slots: OpenedSlot[]
}

export interface SlotDescriptor {
  fieldKey: string
  kind: 0 | 1 | 2
  scale: string
}

export interface PreparedField {
  field: string
  slot: number
  fieldKey: string
  kind: FieldKind
  scale: string
  /** The value as the document holds it, as text. */
  value: string
  /** kind uint: value × scale. */
  scaledValue?: string
  /** kind bytes: SHA-256 of the text, hex. */
  valueDigest?: string
  salt: string
  leaf: string
  siblings: string[]
  dirs: boolean[]
}

export interface PreparedDocument {
  payloadHash: string
  canonicalDocument: string
  contentRoot: string
  schemaId: string
  fields: PreparedField[]
  emptyFields: string[]
  schema: SlotDescriptor[]
  leaves: string[]
  opening: Opening
}

const PADDING_KEY = 0n

export const fieldKeyOf = (path: string) => fieldHex(fieldOfText(path))

/** A 32-byte salt seed as hex; slot i's salt is the field element of SHA-256(seed ‖ byte i). */
export function slotSalt(saltSeed: string, slot: number): bigint {
  return fieldOfHex(sha256Bytes(Buffer.concat([Buffer.from(saltSeed, 'hex'), Buffer.from([slot])])).toString('hex'))
}

const schemaIdOf = (schema: SlotDescriptor[]) => sha256Bytes(canonicalJson(schema)).toString('hex')

const payloadHashOf = (canonicalDocument: string) => sha256Bytes(canonicalDocument).toString('hex')

/** A value the document holds at a path: a literal key (dots and all) first, else dot-separated steps, numbers indexing arrays. */
function valueAt(document: unknown, path: string): unknown {
  if (isObject(document) && Object.hasOwn(document, path)) return document[path]
  let current: unknown = document
  for (const step of path.split('.')) {
    if (Array.isArray(current) && /^(0|[1-9][0-9]*)$/.test(step)) current = current[Number(step)]
    else if (isObject(current) && Object.hasOwn(current, step)) current = current[step]
    else return undefined
  }
  return current
}

const isObject = (value: unknown): value is Record<string, unknown> => !!value && typeof value === 'object' && !Array.isArray(value)

/** A non-negative decimal times scale, exact and below 2^64; else VALUE_OUT_OF_SCALE. */
export function scaledValue(text: string, scale: bigint, target = 'value'): bigint {
  const match = /^([0-9]+)(?:\.([0-9]+))?$/.exec(text)
  if (!match) throw badInput('VALUE_OUT_OF_SCALE', `${target} '${text.slice(0, 40)}' is not a non-negative decimal number`, target)
  const fraction = match[2] ?? ''
  const numerator = BigInt(match[1] + fraction) * scale
  const denominator = 10n ** BigInt(fraction.length)
  if (numerator % denominator !== 0n) throw badInput('VALUE_OUT_OF_SCALE', `${target} ${text} has more decimals than scale ${scale} keeps`, target)
  const scaled = numerator / denominator
  if (scaled > MAX_VALUE) throw badInput('VALUE_OUT_OF_SCALE', `${target} ${text} times scale ${scale} does not fit 64 bits`, target)
  return scaled
}

export function scaleOf(value: unknown, target = 'scale'): bigint {
  if (value === undefined || value === null || value === '') return DEFAULT_SCALE
  const text = String(value)
  if (!/^[1-9][0-9]{0,18}$/.test(text) || BigInt(text) > MAX_SCALE) throw badInput('INVALID_SCALE', `${target} must be a whole number from 1 to 10^18`, target)
  return BigInt(text)
}

/** A proof field's value as text: a number as JSON writes it, text as it is, anything else as canonical JSON. */
const textOf = (value: unknown) => (typeof value === 'string' ? value : canonicalJson(value))

/** The proof field list: paths, or `{ field, kind?, scale? }`; at most 16, each once. */
export function proofFieldSpecs(raw: unknown): ProofFieldSpec[] {
  if (!Array.isArray(raw) || raw.length === 0) throw badInput('INVALID_PROOF_FIELDS', 'proofFieldsJson must be a JSON array of field paths or { field, kind?, scale? } objects, at least one', 'proofFieldsJson')
  if (raw.length > SLOTS) throw badInput('TOO_MANY_FIELDS', `a document proves at most ${SLOTS} fields, got ${raw.length}`, 'proofFieldsJson')
  const seen = new Set<string>()
  return raw.map((entry, index) => {
    const spec: ProofFieldSpec = typeof entry === 'string' ? { field: entry } : (entry as ProofFieldSpec)
    if (!spec || typeof spec.field !== 'string' || spec.field === '' || spec.field.length > 256)
      throw badInput('INVALID_PROOF_FIELDS', `proof field ${index} needs a field path of 1 to 256 characters`, 'proofFieldsJson')
    if (spec.kind !== undefined && spec.kind !== 'uint' && spec.kind !== 'bytes') throw badInput('INVALID_PROOF_FIELDS', `proof field '${spec.field}': kind must be uint or bytes`, 'proofFieldsJson')
    if (spec.kind === 'bytes' && spec.scale !== undefined) throw badInput('INVALID_PROOF_FIELDS', `proof field '${spec.field}': a bytes field has no scale`, 'proofFieldsJson')
    if (seen.has(spec.field)) throw badInput('DUPLICATE_FIELD', `proof field '${spec.field}' is listed twice`, 'proofFieldsJson')
    seen.add(spec.field)
    return { field: spec.field, kind: spec.kind, scale: spec.scale }
  })
}

/** The content root of a document over its proof fields, with everything a prover needs. */
export function prepareDocument(document: unknown, specs: ProofFieldSpec[], saltSeed: string): PreparedDocument {
  if (!document || typeof document !== 'object') throw badInput('INVALID_DOCUMENT', 'documentJson must be a JSON object or array', 'documentJson')
  const canonicalDocument = canonicalJson(document)
  const slots: OpenedSlot[] = []
  const schema: SlotDescriptor[] = []
  const emptyFields: string[] = []
  const present: { spec: ProofFieldSpec; kind: FieldKind; scale: bigint; text: string; value: bigint }[] = []
  specs.forEach(spec => {
    const found = valueAt(document, spec.field)
    const kind: FieldKind = spec.kind ?? (typeof found === 'number' ? 'uint' : 'bytes')
    const scale = kind === 'uint' ? scaleOf(spec.scale, `scale of ${spec.field}`) : 0n
    const key = fieldKeyOf(spec.field)
    schema.push({ fieldKey: key, kind: KIND[kind], scale: String(scale) })
    if (found === undefined || found === null) {
      emptyFields.push(spec.field)
      slots.push({ key, kind: KIND.absent, scale: '0', value: '0' })
      present.push({ spec, kind, scale, text: '', value: -1n })
      return
    }
    const text = textOf(found)
    if (kind === 'uint' && typeof found !== 'number' && !(typeof found === 'string' && /^[0-9]+(\.[0-9]+)?$/.test(found)))
      throw badInput('VALUE_OUT_OF_SCALE', `field '${spec.field}' is declared uint but holds ${typeof found === 'string' ? 'text' : typeof found}`, 'proofFieldsJson')
    const value = kind === 'uint' ? scaledValue(text, scale, `field '${spec.field}'`) : fieldOfText(text)
    slots.push({ key, kind: KIND[kind], scale: String(scale), value: String(value) })
    present.push({ spec, kind, scale, text, value })
  })
  while (slots.length < SLOTS) {
    slots.push({ key: fieldHex(PADDING_KEY), kind: KIND.absent, scale: '0', value: '0' })
    schema.push({ fieldKey: fieldHex(PADDING_KEY), kind: KIND.absent, scale: '0' })
  }
  const opening: Opening = { saltSeed, slots }
  const leaves = leavesOf(opening)
  const levels = treeLevels(leaves)
  const fields: PreparedField[] = []
  present.forEach((entry, slot) => {
    if (entry.value < 0n) return
    const path = pathOf(levels, slot)
    fields.push({
      field: entry.spec.field, slot, fieldKey: slots[slot].key, kind: entry.kind, scale: String(entry.scale), value: entry.text,
      ...(entry.kind === 'uint' ? { scaledValue: String(entry.value) } : { valueDigest: sha256Bytes(entry.text).toString('hex') }),
      salt: fieldHex(slotSalt(saltSeed, slot)), leaf: fieldHex(leaves[slot]), ...pathJson(path),
    })
  })
  return {
    payloadHash: payloadHashOf(canonicalDocument), canonicalDocument, contentRoot: fieldHex(levels[DEPTH][0]), schemaId: schemaIdOf(schema),
    fields, emptyFields, schema, leaves: leaves.map(fieldHex), opening,
  }
}

/** The 16 leaves an opening makes. */
function leavesOf(opening: Opening): bigint[] {
  return opening.slots.map((slot, index) => leafHash(fieldOfHex(slot.key), BigInt(slot.kind), BigInt(slot.scale), BigInt(slot.value), slotSalt(opening.saltSeed, index)))
}

export const rootOfOpening = (opening: Opening) => treeLevels(leavesOf(opening))[DEPTH][0]

/** A path as the service answers it: siblings as hex, dirs as booleans. */
const pathJson = (path: MerklePath) => ({ siblings: path.siblings.map(fieldHex), dirs: path.dirs })

interface MembershipSet {
  setRoot: string
  memberCount: number
  /** The members' digests (field elements, hex), ascending. */
  members: string[]
  path?: { siblings: string[]; dirs: boolean[] }
}

/** The set of allowed values (text), and the path of one member's digest when given. */
export function membershipSet(raw: unknown, memberDigest?: bigint): MembershipSet {
  if (!Array.isArray(raw) || raw.length === 0) throw badInput('INVALID_SET', 'allowedValuesJson must be a JSON array of texts, at least one', 'allowedValuesJson')
  if (raw.length > MAX_SET_ENTRIES) throw badInput('SET_TOO_LARGE', `allowedValuesJson may list at most ${MAX_SET_ENTRIES} entries`, 'allowedValuesJson')
  if (raw.some(value => typeof value !== 'string')) throw badInput('INVALID_SET', 'every allowed value must be a text', 'allowedValuesJson')
  const digests = [...new Set((raw as string[]).map(fieldOfText))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  if (digests.length > MAX_SET_MEMBERS) throw badInput('SET_TOO_LARGE', `a set has at most ${MAX_SET_MEMBERS} distinct members, got ${digests.length}`, 'allowedValuesJson')
  const padded = [...digests, ...Array<bigint>(MAX_SET_MEMBERS - digests.length).fill(digests[digests.length - 1])]
  const levels = treeLevels(padded.map(setLeafHash))
  const answer: MembershipSet = { setRoot: fieldHex(levels[SET_DEPTH][0]), memberCount: digests.length, members: digests.map(fieldHex) }
  if (memberDigest !== undefined) {
    const index = digests.indexOf(memberDigest)
    if (index < 0) throw new ApiError(422, 'NOT_A_MEMBER', 'the value is not one of the allowed values', { target: 'value' })
    answer.path = pathJson(pathOf(levels, index))
  }
  return answer
}
