import { canonicalJson } from '../../../lib/canonical-json.ts'
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
/** The distinct members a set holds at most (a depth-6 tree). */
export const MAX_SET_MEMBERS = 64
export const DEFAULT_SCALE = 1000n
export const MAX_SCALE = 10n ** 18n
const MAX_VALUE = 2n ** 64n - 1n
export const KIND = { uint: 0, bytes: 1, absent: 2 } as const
export type FieldKind = 'uint' | 'bytes'

/** A field to prove about: its path, its kind (else taken from the value) and, for uint, its scale (else DEFAULT_SCALE). */
export interface ProofFieldSpec {
  field: string
  kind?: FieldKind
  scale?: bigint
}

/** A document value that cannot be proven about as its field says (a number out of the field's scale, text in a uint field). */
export class ContentError extends Error {
  readonly code = 'VALUE_OUT_OF_SCALE'
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

/** A non-negative decimal times scale, exact and below 2^64; else a ContentError. */
export function scaledValue(text: string, scale: bigint): bigint {
  const match = /^([0-9]+)(?:\.([0-9]+))?$/.exec(text)
  if (!match) throw new ContentError(`'${text.slice(0, 40)}' is not a non-negative decimal number`)
  const fraction = match[2] ?? ''
  const numerator = BigInt(match[1] + fraction) * scale
  const denominator = 10n ** BigInt(fraction.length)
  if (numerator % denominator !== 0n) throw new ContentError(`${text} has more decimals than scale ${scale} keeps`)
  const scaled = numerator / denominator
  if (scaled > MAX_VALUE) throw new ContentError(`${text} times scale ${scale} does not fit 64 bits`)
  return scaled
}

/** A proof field's value as text: a number as JSON writes it, text as it is, anything else as canonical JSON. */
const textOf = (value: unknown) => (typeof value === 'string' ? value : canonicalJson(value))

/** The content root of a document over its proof fields, with everything a prover needs. */
export function prepareDocument(document: object, specs: ProofFieldSpec[], saltSeed: string): PreparedDocument {
  const canonicalDocument = canonicalJson(document)
  const slots: OpenedSlot[] = []
  const schema: SlotDescriptor[] = []
  const emptyFields: string[] = []
  const present: { spec: ProofFieldSpec; kind: FieldKind; scale: bigint; text: string; value: bigint }[] = []
  specs.forEach(spec => {
    const found = valueAt(document, spec.field)
    const kind: FieldKind = spec.kind ?? (typeof found === 'number' ? 'uint' : 'bytes')
    const scale = kind === 'uint' ? spec.scale ?? DEFAULT_SCALE : 0n
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
      throw new ContentError(`field '${spec.field}' is declared uint but holds ${typeof found === 'string' ? 'text' : typeof found}`)
    const value = kind === 'uint' ? scaledOf(spec.field, text, scale) : fieldOfText(text)
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

/** A field's value times its scale; a ContentError names the field. */
function scaledOf(field: string, text: string, scale: bigint): bigint {
  try {
    return scaledValue(text, scale)
  } catch (error) {
    throw error instanceof ContentError ? new ContentError(`field '${field}' ${error.message}`) : error
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
  /** The member's set path: given a member digest that is in the set. */
  path?: { siblings: string[]; dirs: boolean[] }
}

/** The set of allowed values (texts, at most MAX_SET_MEMBERS distinct), and the path of one member's digest when given and a member. */
export function membershipSet(values: string[], memberDigest?: bigint): MembershipSet {
  const digests = [...new Set(values.map(fieldOfText))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  if (digests.length === 0 || digests.length > MAX_SET_MEMBERS) throw new RangeError(`a set holds 1 to ${MAX_SET_MEMBERS} members, got ${digests.length}`)
  const padded = [...digests, ...Array<bigint>(MAX_SET_MEMBERS - digests.length).fill(digests[digests.length - 1])]
  const levels = treeLevels(padded.map(setLeafHash))
  const answer: MembershipSet = { setRoot: fieldHex(levels[SET_DEPTH][0]), memberCount: digests.length, members: digests.map(fieldHex) }
  const index = memberDigest === undefined ? -1 : digests.indexOf(memberDigest)
  if (index >= 0) answer.path = pathJson(pathOf(levels, index))
  return answer
}
