import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The circuits (zk/circuits/*.circom) and their keys. A keys folder holds, per circuit,
 * `<id>/<id>.wasm` (the witness generator), `<id>/<id>.zkey` (the Groth16 proving key) and
 * `<id>/verification_key.json`, and a `manifest.json` that the ceremony's finalize writes (`npm run
 * ceremony`, or `npm run build:zk` for development keys): the circuits, the SHA-256 of every file,
 * and whether the keys come from a development ceremony. Beside them lie the ceremony's
 * `transcript.json` and the `verification.json` of its verify (transcript.ts).
 */

export const CIRCUITS = {
  field_predicate: { publicSignals: ['payload', 'root', 'attester', 'fieldKey', 'scale', 'threshold', 'op'], claims: ['field-predicate'] },
  field_equality: { publicSignals: ['payload', 'root', 'attester', 'fieldKey', 'expected'], claims: ['field-equality'] },
  field_membership: { publicSignals: ['payload', 'root', 'attester', 'fieldKey', 'setRoot'], claims: ['field-membership'] },
  document_compare: { publicSignals: ['payloadA', 'rootA', 'payloadB', 'rootB', 'attester', 'mode', 'mask', 'k'], claims: ['document-integrity', 'document-diff'] },
} as const

export type CircuitId = keyof typeof CIRCUITS
export const CIRCUIT_IDS = Object.keys(CIRCUITS) as CircuitId[]
export const isCircuitId = (id: unknown): id is CircuitId => typeof id === 'string' && Object.hasOwn(CIRCUITS, id)

/** The files of a circuit, by their name under /zk-config/<id>/. */
export const circuitFiles = (id: CircuitId) => ({ wasm: `${id}.wasm`, zkey: `${id}.zkey`, verificationKey: 'verification_key.json' })

export interface KeysManifest {
  /** True for keys from a ceremony on the development phase 1 (public toxic waste): fine for development, never for production. */
  development: boolean
  ceremony: string
  circuits: Record<string, { source: string; constraints: number; nPublic: number; files: Record<string, { name: string; sha256: string; size: number }> }>
}

const manifestFile = (keysDir: string) => join(keysDir, 'manifest.json')

export function readManifest(keysDir: string): KeysManifest {
  const file = manifestFile(keysDir)
  if (!existsSync(file)) throw new Error(`No zero-knowledge keys in ${keysDir} (manifest.json missing): run npm run build:zk, or set CHAIN_B_ZK_KEYS to the operator's keys (npm run ceremony)`)
  return JSON.parse(readFileSync(file, 'utf8')) as KeysManifest
}

export const circuitFile = (keysDir: string, id: CircuitId, name: string) => join(keysDir, id, name)

const verificationKeys = new Map<string, unknown>()
export function verificationKey(keysDir: string, id: CircuitId): unknown {
  const file = circuitFile(keysDir, id, circuitFiles(id).verificationKey)
  let key = verificationKeys.get(file)
  if (!key) verificationKeys.set(file, (key = JSON.parse(readFileSync(file, 'utf8'))))
  return key
}
