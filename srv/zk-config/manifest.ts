import { CIRCUIT_IDS, CIRCUITS, circuitFiles, isCircuitId, type CircuitId, type KeysManifest } from '../chains/chain-b/zk/circuits.ts'

/**
 * What /zk-config publishes of the keys folder: per circuit its public signals and claims (from
 * CIRCUITS), its constraint count, and its three files with their root-relative URL, SHA-256 and
 * size (from the keys folder's manifest.json, which the ceremony's finalize wrote). Only the files the
 * manifest lists, under the names circuitFiles gives, are ever served.
 */

export const ZK_CONFIG_PATH = '/zk-config'

export type FileRole = keyof ReturnType<typeof circuitFiles>
const FILE_ROLES: readonly FileRole[] = ['wasm', 'zkey', 'verificationKey']

export const CONTENT_TYPES: Readonly<Record<FileRole, string>> = {
  wasm: 'application/wasm',
  zkey: 'application/octet-stream',
  verificationKey: 'application/json',
}

interface PublishedFile {
  url: string
  sha256: string
  size: number
}

interface PublishedCircuit {
  id: CircuitId
  publicSignals: readonly string[]
  claims: readonly string[]
  constraints: number
  files: Record<FileRole, PublishedFile>
}

interface PublishedManifest {
  development: boolean
  ceremony: string
  circuits: PublishedCircuit[]
}

/** A file a request may have: its circuit, its name and role, and the manifest's SHA-256. */
export interface KeyFile {
  circuit: CircuitId
  name: string
  role: FileRole
  sha256: string
}

const fileUrl = (circuit: CircuitId, name: string) => `${ZK_CONFIG_PATH}/${circuit}/${name}`

/** The circuits the code knows and the keys folder has keys for, in CIRCUITS' order. */
export function publishedManifest(keys: KeysManifest): PublishedManifest {
  const circuits = CIRCUIT_IDS.filter(id => hasAllFiles(keys, id)).map(id => publishedCircuit(keys, id))
  return { development: keys.development, ceremony: keys.ceremony, circuits }
}

function hasAllFiles(keys: KeysManifest, id: CircuitId): boolean {
  return FILE_ROLES.every(role => keys.circuits[id]?.files?.[role]?.name === circuitFiles(id)[role])
}

function publishedCircuit(keys: KeysManifest, id: CircuitId): PublishedCircuit {
  const entry = keys.circuits[id]
  const names = circuitFiles(id)
  const files = Object.fromEntries(FILE_ROLES.map(role => {
    const { sha256, size } = entry.files[role]
    return [role, { url: fileUrl(id, names[role]), sha256, size }]
  })) as Record<FileRole, PublishedFile>
  return { id, publicSignals: CIRCUITS[id].publicSignals, claims: CIRCUITS[id].claims, constraints: entry.constraints, files }
}

/** The file `<circuit>/<name>` names, when it is one of the circuit's three and the manifest lists it. */
export function keyFile(keys: KeysManifest, circuit: string, name: string): KeyFile | undefined {
  if (!isCircuitId(circuit) || !hasAllFiles(keys, circuit)) return undefined
  const names = circuitFiles(circuit)
  const role = FILE_ROLES.find(candidate => names[candidate] === name)
  if (!role) return undefined
  return { circuit, name, role, sha256: keys.circuits[circuit].files[role].sha256 }
}
