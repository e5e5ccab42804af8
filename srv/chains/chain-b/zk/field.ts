import { createHash } from 'node:crypto'
// One module per arity: the package's index loads the constants of all sixteen, a fifth of a second at start.
import { poseidon1 } from 'poseidon-lite/poseidon1'
import { poseidon2 } from 'poseidon-lite/poseidon2'
import { poseidon5 } from 'poseidon-lite/poseidon5'

/**
 * The scalar field of BN254, where the circuits compute, and the hashes over it. Every 32-byte
 * digest (a payload hash, an attester id, a field key, the SHA-256 of a text value) enters a
 * circuit as itself reduced modulo the field's prime; every field element leaves the service as
 * 64 lowercase hex characters (big-endian), and in a proof's public signals as a decimal string.
 */
export const FIELD_PRIME = 21888242871839275222246405745257275088548364400416034343698204186575808495617n

export const sha256Bytes = (data: string | Uint8Array) => createHash('sha256').update(data).digest()

/** A 32-byte digest (64 hex) as a field element. */
export const fieldOfHex = (hex: string): bigint => BigInt('0x' + hex) % FIELD_PRIME

/** The field element of the SHA-256 of a UTF-8 text. */
export const fieldOfText = (text: string): bigint => fieldOfHex(sha256Bytes(text).toString('hex'))

export const fieldHex = (element: bigint): string => element.toString(16).padStart(64, '0')

/** A field element from 64 hex (as the service gives them) or a decimal string (as public signals carry them). */
export function parseField(text: string): bigint | undefined {
  let element: bigint
  if (/^[0-9a-fA-F]{64}$/.test(text)) element = BigInt('0x' + text)
  else if (/^[0-9]{1,78}$/.test(text)) element = BigInt(text)
  else return undefined
  return element < FIELD_PRIME ? element : undefined
}

/** leaf = Poseidon(fieldKey, kind, scale, value, salt) */
export const leafHash = (key: bigint, kind: bigint, scale: bigint, value: bigint, salt: bigint) => poseidon5([key, kind, scale, value, salt])
/** node = Poseidon(left, right) */
const nodeHash = (left: bigint, right: bigint) => poseidon2([left, right])
/** A membership set's leaf: Poseidon(member digest), unsalted. */
export const setLeafHash = (digest: bigint) => poseidon1([digest])

export interface MerklePath {
  siblings: bigint[]
  /** dirs[i]: the node at level i is the left child. */
  dirs: boolean[]
}

/** The levels of a full binary tree over leaves (a power of two): levels[0] the leaves, the last one [root]. */
export function treeLevels(leaves: bigint[]): bigint[][] {
  const levels = [leaves]
  while (levels[levels.length - 1].length > 1) {
    const below = levels[levels.length - 1]
    const level: bigint[] = []
    for (let i = 0; i < below.length; i += 2) level.push(nodeHash(below[i], below[i + 1]))
    levels.push(level)
  }
  return levels
}

export function pathOf(levels: bigint[][], index: number): MerklePath {
  const siblings: bigint[] = []
  const dirs: boolean[] = []
  for (let level = 0; level < levels.length - 1; level++) {
    const position = index >> level
    dirs.push(position % 2 === 0)
    siblings.push(levels[level][position ^ 1])
  }
  return { siblings, dirs }
}

/** The root a leaf reaches by its path. */
export function rootOfPath(leaf: bigint, path: MerklePath): bigint {
  return path.siblings.reduce((node, sibling, level) => (path.dirs[level] ? nodeHash(node, sibling) : nodeHash(sibling, node)), leaf)
}
