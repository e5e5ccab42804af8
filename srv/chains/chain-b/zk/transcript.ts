import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { CIRCUIT_IDS, circuitFile, circuitFiles, isCircuitId, type CircuitId, type KeysManifest } from './circuits.ts'

/**
 * The trusted-setup ceremony's records beside the keys, and what can be checked of them without
 * the phase-1 file. `npm run ceremony` (zk/ceremony.ts) writes `transcript.json` (the phase-1 file
 * by name, power and hash; every phase-2 contribution by circuit, index, name and hash; the beacon;
 * the final files' SHA-256) and `npm run ceremony -- verify` writes `verification.json` (the hashes
 * it checked after it verified everything, the phase-1 file included). A production start reads
 * both, hashes the files again and reads each proving key's contribution section, so keys whose
 * ceremony was never verified, or that changed since, are refused.
 */

export const TRANSCRIPT_FILE = 'transcript.json'
export const VERIFICATION_FILE = 'verification.json'
export const TRANSCRIPT_FORMAT = 'chain-access-gateway/zk-ceremony/1'
export const VERIFICATION_FORMAT = 'chain-access-gateway/zk-ceremony-verification/1'

/** Contributions a production ceremony needs per circuit besides the beacon. */
export const MIN_PRODUCTION_CONTRIBUTIONS = 2

/**
 * The published Powers of Tau (the Hermez ceremony over the Perpetual Powers of Tau, 54
 * contributions and a beacon, prepared for phase 2) as the snarkjs README lists them: file name
 * and blake2b-512 of the whole file (`b2sum`), by power. Only the powers a circuit of this
 * project could need are listed; another published file is accepted with its hash given by the
 * operator (`init --ptau-blake2b`), which the transcript records.
 */
export const PUBLISHED_PHASE1: Readonly<Record<number, { name: string; blake2b: string }>> = {
  12: { name: 'powersOfTau28_hez_final_12.ptau', blake2b: 'ded2694169b7b08e898f736d5de95af87c3f1a64594013351b1a796dbee393bd825f88f9468c84505ddd11eb0b1465ac9b43b9064aa8ec97f2b73e04758b8a4a' },
  13: { name: 'powersOfTau28_hez_final_13.ptau', blake2b: '58efc8bf2834d04768a3d7ffcd8e1e23d461561729beaac4e3e7a47829a1c9066d5320241e124a1a8e8aa6c75be0ba66f65bc8239a0542ed38e11276f6fdb4d9' },
  14: { name: 'powersOfTau28_hez_final_14.ptau', blake2b: 'eeefbcf7c3803b523c94112023c7ff89558f9b8e0cf5d6cdcba3ade60f168af4a181c9c21774b94fbae6c90411995f7d854d02ebd93fb66043dbb06f17a831c1' },
  15: { name: 'powersOfTau28_hez_final_15.ptau', blake2b: '982372c867d229c236091f767e703253249a9b432c1710b4f326306bfa2428a17b06240359606cfe4d580b10a5a1f63fbed499527069c18ae17060472969ae6e' },
  16: { name: 'powersOfTau28_hez_final_16.ptau', blake2b: '6a6277a2f74e1073601b4f9fed6e1e55226917efb0f0db8a07d98ab01df1ccf43eb0e8c3159432acd4960e2f29fe84a4198501fa54c8dad9e43297453efec125' },
  17: { name: 'powersOfTau28_hez_final_17.ptau', blake2b: '6247a3433948b35fbfae414fa5a9355bfb45f56efa7ab4929e669264a0258976741dfbe3288bfb49828e5df02c2e633df38d2245e30162ae7e3bcca5b8b49345' },
  18: { name: 'powersOfTau28_hez_final_18.ptau', blake2b: '7e6a9c2e5f05179ddfc923f38f917c9e6831d16922a902b0b4758b8e79c2ab8a81bb5f29952e16ee6c5067ed044d7857b5de120a90704c1d3b637fd94b95b13e' },
  19: { name: 'powersOfTau28_hez_final_19.ptau', blake2b: 'bca9d8b04242f175189872c42ceaa21e2951e0f0f272a0cc54fc37193ff6648600eaf1c555c70cdedfaf9fb74927de7aa1d33dc1e2a7f1a50619484989da0887' },
  20: { name: 'powersOfTau28_hez_final_20.ptau', blake2b: '89a66eb5590a1c94e3f1ee0e72acf49b1669e050bb5f93c73b066b564dca4e0c7556a52b323178269d64af325d8fdddb33da3a27c34409b821de82aa2bf1a27b' },
}

/** Where the published files are downloaded from (the snarkjs README's links); the ceremony never downloads. */
export const PUBLISHED_PHASE1_URL = (name: string) => `https://storage.googleapis.com/zkevm/ptau/${name}`

export interface Phase1Record {
  /** The file's name (the published name, or the development file's). */
  name: string
  /** Its powers of tau: circuits up to 2^power constraints (with their public signals). */
  power: number
  /** blake2b-512 of the whole file, hex (what `b2sum` prints). */
  blake2b: string
  /** published: a hash of PUBLISHED_PHASE1; operator: a published file whose hash the operator gave; development: the deterministic development phase 1. */
  origin: 'published' | 'operator' | 'development'
  /** What the file is, in words. */
  description: string
  /** development: the public beacon it was made from (anyone can make it again). */
  beacon?: { value: string; iterations: number; name: string }
}

export interface ContributionRecord {
  circuit: CircuitId
  /** Its place in the proving key's contributions, from 1 (as snarkjs numbers them). */
  index: number
  name: string
  /** blake2b-512 of the contribution's public key, hex (the hash snarkjs prints). */
  hash: string
  at?: string
}

export interface BeaconRecord {
  /** The public value chosen in advance that the beacon was taken from (say, a block hash of chain A at a height announced before it was reached). */
  source: string
  announcedAt?: string
  /** The beacon's hex value and its 2^iterations SHA-256 rounds; set by finalize. */
  value?: string
  iterations?: number
  /** Per circuit: the beacon's index in the proving key and its contribution hash. */
  contributions?: Partial<Record<CircuitId, { index: number; hash: string }>>
  at?: string
}

export interface CircuitRecord {
  /** SHA-256 of the circuit's source and the shared library (as the manifest's `source`). */
  source: string
  /** SHA-256 of the compiled constraint system and witness generator. */
  r1cs: string
  wasm: string
  constraints: number
  nPublic: number
  /** The proving key's domain: 2^power rows. */
  power: number
  /** The circuit hash the proving keys carry (blake2b-512, hex). */
  csHash: string
  /** SHA-256 of contribution 0, the proving key made from the constraint system and phase 1 alone. */
  initialZkey: string
}

export interface FinalFiles {
  zkey: string
  verificationKey: string
  wasm: string
}

export interface Transcript {
  format: typeof TRANSCRIPT_FORMAT
  /** Development ceremonies run on the development phase 1: never accepted in production. */
  development: boolean
  protocol: 'groth16'
  curve: 'bn128'
  tools: { snarkjs: string; circom: string }
  startedAt: string
  phase1: Phase1Record
  circuits: Partial<Record<CircuitId, CircuitRecord>>
  contributions: ContributionRecord[]
  beacon: BeaconRecord
  /** The keys as finalize wrote them: SHA-256 of each file. */
  keys?: Partial<Record<CircuitId, FinalFiles>>
  finalizedAt?: string
}

/** Written by verify; it holds nothing but what was verified, so verifying the same keys again writes the same file. */
export interface VerificationRecord {
  format: typeof VERIFICATION_FORMAT
  snarkjs: string
  /** SHA-256 of transcript.json as verified. */
  transcript: string
  phase1: { name: string; blake2b: string }
  beacon: string
  circuits: Partial<Record<CircuitId, FinalFiles & { contributions: string[] }>>
}

export const sha256Of = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')
export const blake2bOf = (bytes: Uint8Array) => createHash('blake2b512').update(bytes).digest('hex')

/** The circuits a transcript covers, in CIRCUITS' order. */
export const transcriptCircuits = (transcript: Pick<Transcript, 'circuits'>): CircuitId[] => CIRCUIT_IDS.filter(id => transcript.circuits[id])

/** The contributions of one circuit in their order (the beacon is not one of them). */
export const contributionsOf = (transcript: Pick<Transcript, 'contributions'>, circuit: CircuitId) =>
  transcript.contributions.filter(entry => entry.circuit === circuit).sort((a, b) => a.index - b.index)

// ---------------------------------------------------------------------------------------------
// The contribution section of a Groth16 proving key (.zkey, section 10), read without snarkjs.
// ---------------------------------------------------------------------------------------------

/** BN254's base field: points are kept in Montgomery form (R = 2^256), little-endian. */
const Q = 21888242871839275222246405745257275088696311157297823662689037894645226208583n
const modPow = (base: bigint, exponent: bigint, modulus: bigint) => {
  let result = 1n
  base %= modulus
  for (; exponent > 0n; exponent >>= 1n, base = base * base % modulus) if (exponent & 1n) result = result * base % modulus
  return result
}
const R_INVERSE = modPow((1n << 256n) % Q, Q - 2n, Q)

const littleEndian = (bytes: Uint8Array) => {
  let value = 0n
  for (let i = bytes.length - 1; i >= 0; i--) value = (value << 8n) | BigInt(bytes[i])
  return value
}
const bigEndian32 = (value: bigint) => {
  const out = new Uint8Array(32)
  for (let i = 31; i >= 0; i--, value >>= 8n) out[i] = Number(value & 0xffn)
  return out
}

/** One base-field element of the file (Montgomery, little-endian) as snarkjs hashes it: plain, big-endian. */
const element = (bytes: Uint8Array) => bigEndian32(littleEndian(bytes) * R_INVERSE % Q)

/** An affine point of the file (G1: 2 elements, G2: 4) in the uncompressed form snarkjs hashes (G2's coordinates high part first); the point at infinity is all zeros with the 0x40 flag. */
function uncompressed(bytes: Uint8Array, elements: 2 | 4): Uint8Array {
  const out = new Uint8Array(elements * 32)
  if (bytes.every(byte => byte === 0)) {
    out[0] = 0x40
    return out
  }
  const parts = Array.from({ length: elements }, (_, i) => element(bytes.subarray(i * 32, i * 32 + 32)))
  const ordered = elements === 2 ? parts : [parts[1], parts[0], parts[3], parts[2]]
  ordered.forEach((part, i) => out.set(part, i * 32))
  return out
}

interface ZkeyContribution {
  /** From 1, as snarkjs numbers them. */
  index: number
  name: string
  beacon?: { value: string; iterations: number }
  hash: string
}

interface ZkeyContributions {
  csHash: string
  contributions: ZkeyContribution[]
}

/** The sections of a snarkjs binary file: type → [offset, size]. */
function sections(bytes: Buffer, magic: string): Map<number, [number, number]> {
  if (bytes.length < 12 || bytes.toString('latin1', 0, 4) !== magic) throw new Error(`not a ${magic} file`)
  const found = new Map<number, [number, number]>()
  const count = bytes.readUInt32LE(8)
  let at = 12
  for (let i = 0; i < count; i++) {
    if (at + 12 > bytes.length) throw new Error(`a truncated ${magic} file`)
    const type = bytes.readUInt32LE(at)
    const size = Number(bytes.readBigUInt64LE(at + 4))
    at += 12
    if (at + size > bytes.length) throw new Error(`a truncated ${magic} file`)
    if (found.has(type)) throw new Error(`a ${magic} file with section ${type} twice`)
    found.set(type, [at, size])
    at += size
  }
  return found
}

/**
 * The circuit hash and the contributions a proving key carries, each with the hash snarkjs prints
 * for it: blake2b-512 over the contribution's public key (delta after it, its proof of knowledge)
 * and its transcript hash. It proves nothing about the key's points (`snarkjs zkey verify` does).
 */
export function zkeyContributions(bytes: Buffer): ZkeyContributions {
  const section = sections(bytes, 'zkey').get(10)
  if (!section) throw new Error('a proving key without a contribution section')
  const [start, size] = section
  const end = start + size
  let at = start
  const take = (length: number) => {
    if (at + length > end) throw new Error('a truncated contribution section')
    const part = bytes.subarray(at, at + length)
    at += length
    return part
  }
  const csHash = take(64).toString('hex')
  const count = take(4).readUInt32LE(0)
  const contributions: ZkeyContribution[] = []
  for (let index = 1; index <= count; index++) {
    const deltaAfter = take(64), g1S = take(64), g1Sx = take(64), g2Spx = take(128), transcript = take(64)
    const type = take(4).readUInt32LE(0)
    const params = take(take(4).readUInt32LE(0))
    const contribution: ZkeyContribution = { index, name: '', hash: '' }
    let iterations: number | undefined, value: string | undefined
    for (let p = 0; p < params.length;) {
      const kind = params[p++]
      if (kind === 1 || kind === 3) {
        const length = params[p++]
        const data = params.subarray(p, p + length)
        p += length
        if (kind === 1) contribution.name = Buffer.from(data).toString('utf8')
        else value = Buffer.from(data).toString('hex')
      } else if (kind === 2) iterations = params[p++]
      else throw new Error(`an unknown parameter ${kind} in contribution ${index}`)
    }
    if (type === 1) contribution.beacon = { value: value ?? '', iterations: iterations ?? 0 }
    else if (type !== 0) throw new Error(`contribution ${index} of an unknown type ${type}`)
    const hasher = createHash('blake2b512')
    for (const point of [uncompressed(deltaAfter, 2), uncompressed(g1S, 2), uncompressed(g1Sx, 2), uncompressed(g2Spx, 4), transcript]) hasher.update(point)
    contribution.hash = hasher.digest('hex')
    contributions.push(contribution)
  }
  return { csHash, contributions }
}

// ---------------------------------------------------------------------------------------------
// What a production start checks.
// ---------------------------------------------------------------------------------------------

function readJson<T>(file: string, what: string): T {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T
  } catch (error) {
    throw new Error(`${what} (${file}) cannot be read: ${(error as Error).message}`, { cause: error })
  }
}

/** The manifest's SHA-256 of a circuit's file. */
const manifestHash = (manifest: KeysManifest, id: CircuitId, role: keyof FinalFiles) => manifest.circuits[id]?.files?.[role]?.sha256

/**
 * Why the keys in keysDir may not serve production, or undefined when they may: the transcript
 * names a non-development phase 1 (a published one), has at least two contributions and a beacon
 * per circuit, and lists the files' hashes; a verification record of `npm run ceremony -- verify`
 * matches the transcript; and the files, the manifest and the proving keys' contribution sections
 * match both. Reads and hashes the files (a few tens of MB), without the phase-1 file.
 */
export function ceremonyProblem(keysDir: string, manifest: KeysManifest): string | undefined {
  const transcriptFile = join(keysDir, TRANSCRIPT_FILE)
  if (!existsSync(transcriptFile)) return `there is no ceremony transcript (${TRANSCRIPT_FILE})`
  const transcriptBytes = readFileSync(transcriptFile)
  let transcript: Transcript
  try {
    transcript = JSON.parse(transcriptBytes.toString('utf8')) as Transcript
  } catch {
    return `${TRANSCRIPT_FILE} is not JSON`
  }
  if (transcript.format !== TRANSCRIPT_FORMAT) return `${TRANSCRIPT_FILE} is not a ceremony transcript of this format (${TRANSCRIPT_FORMAT})`
  const phase1 = transcript.phase1
  if (transcript.development || !phase1 || phase1.origin === 'development') return 'its ceremony ran on the development phase 1, whose toxic waste is public'
  if (phase1.origin === 'published' && PUBLISHED_PHASE1[phase1.power]?.blake2b !== phase1.blake2b) return `its phase 1 (${phase1.name}) is not the published file of power ${phase1.power}`
  if (phase1.origin !== 'published' && phase1.origin !== 'operator') return `its phase 1 (${phase1.name}) is not a published Powers of Tau`
  const beacon = transcript.beacon
  if (!beacon?.value || !beacon.source) return 'its ceremony has no beacon from an announced public value'
  if (!transcript.keys) return 'its ceremony was not finalized'

  const verificationFile = join(keysDir, VERIFICATION_FILE)
  if (!existsSync(verificationFile)) return `it was never verified (no ${VERIFICATION_FILE}: run npm run ceremony -- verify --keys ${keysDir})`
  let record: VerificationRecord
  try {
    record = readJson<VerificationRecord>(verificationFile, VERIFICATION_FILE)
  } catch (error) {
    return (error as Error).message
  }
  if (record.format !== VERIFICATION_FORMAT || record.transcript !== sha256Of(transcriptBytes)) return `${VERIFICATION_FILE} is not the verification of this ${TRANSCRIPT_FILE} (verify again)`
  if (record.phase1?.blake2b !== phase1.blake2b || record.beacon !== beacon.value) return `${VERIFICATION_FILE} names another phase 1 or beacon than ${TRANSCRIPT_FILE}`

  const ids = Object.keys(manifest.circuits).filter(isCircuitId)
  const unknown = Object.keys(manifest.circuits).filter(id => !isCircuitId(id))
  if (unknown.length) return `the manifest lists circuits this gateway does not know: ${unknown.join(', ')}`
  for (const id of ids) {
    const circuit = transcript.circuits[id]
    const final = transcript.keys[id]
    const verified = record.circuits?.[id]
    if (!circuit || !final) return `the transcript has no ceremony for ${id}`
    if (!verified) return `${VERIFICATION_FILE} does not cover ${id}`
    const contributions = contributionsOf(transcript, id)
    if (contributions.length < MIN_PRODUCTION_CONTRIBUTIONS) return `${id} has ${contributions.length} contribution${contributions.length === 1 ? '' : 's'}; production needs at least ${MIN_PRODUCTION_CONTRIBUTIONS} besides the beacon`
    const beaconHash = beacon.contributions?.[id]
    if (!beaconHash) return `the beacon was not applied to ${id}`
    const names = circuitFiles(id)
    for (const role of ['zkey', 'verificationKey', 'wasm'] as const) {
      const file = circuitFile(keysDir, id, names[role])
      if (!existsSync(file)) return `${id}/${names[role]} is missing`
      const bytes = readFileSync(file)
      const hash = sha256Of(bytes)
      if (hash !== final[role] || hash !== verified[role] || hash !== manifestHash(manifest, id, role)) return `${id}/${names[role]} is not the file the ceremony made and verify checked (its SHA-256 differs from the transcript, ${VERIFICATION_FILE} or the manifest)`
      if (role !== 'zkey') continue
      let carried: ZkeyContributions
      try {
        carried = zkeyContributions(bytes)
      } catch (error) {
        return `${id}/${names.zkey}: ${(error as Error).message}`
      }
      const expected = [...contributions.map(entry => entry.hash), beaconHash.hash]
      if (carried.csHash !== circuit.csHash) return `${id}/${names.zkey} is not for the circuit in the transcript`
      if (carried.contributions.map(entry => entry.hash).join() !== expected.join() || verified.contributions?.join() !== expected.join()) return `the contributions in ${id}/${names.zkey} are not those of the transcript`
      const last = carried.contributions.at(-1)
      if (last?.beacon?.value !== beacon.value || last.beacon.iterations !== beacon.iterations) return `${id}/${names.zkey} does not end with the transcript's beacon`
    }
  }
  return undefined
}
