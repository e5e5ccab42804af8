/**
 * npm run ceremony -- <command> [options]: the Groth16 trusted setup of the circuits in zk/circuits,
 * with a transcript anyone can check.
 *
 *   phase1     [--power N]                      make (or find) the development phase 1 in zk/build and print its hash
 *   init       [--ptau <file> [--ptau-blake2b <hex>]] [--power N] [--beacon-from <text>] [--circuits a,b] [--dir <folder>] [--force]
 *              compile the circuits (if needed), groth16 setup from each r1cs and the phase-1 file
 *              (contribution 0), start the transcript
 *   contribute --name <who> [--entropy <text>] [--dir <folder>]
 *              one party's contribution to every circuit; prints each contribution's hash
 *   finalize   --beacon <hex> [--iterations N] [--beacon-from <text>] [--keys <folder>] [--dir <folder>]
 *              the beacon, the verification keys, and the keys, manifest and transcript in --keys
 *   verify     [--keys <folder>] [--ptau <file>] [--beacon <hex>] [--circuits a,b] [--without-phase1] [--no-record]
 *              recompute everything checkable and, when all of it holds, write verification.json
 *   fetch      --url <gateway>/zk-config --keys <folder>
 *              download the served keys and transcript into a folder, for verify
 *
 * Phase 1 is the Powers of Tau: in production a published one (the Hermez files the snarkjs README
 * lists, given with --ptau; the ceremony never downloads), pinned by its blake2b-512 hash. Without
 * --ptau the development phase 1 is used: made only from a public beacon fixed below, so anyone can
 * make the same file and compare its hash, and its toxic waste is public: keys made on it are
 * development keys, which production refuses. It is kept in zk/build/phase1 for later runs, and in
 * ~/.cache/cag-zk/phase1 ($XDG_CACHE_HOME when set) for every checkout on this machine: the file is
 * the same everywhere and its hash is pinned, so a copy is used only when it has that hash. The
 * circuits compiled from the committed sources are kept alike in ~/.cache/cag-zk/circuits, a copy
 * used only with the hashes the committed keys' transcript (zk/keys) records for those sources.
 *
 * Phase 2 is per circuit: init makes contribution 0 in the ceremony folder (--dir, zk/build/ceremony
 * by default); each party runs contribute on that folder in turn and hands it on; finalize applies
 * a beacon taken from a public value announced in advance (say, a chain-A block hash at a height
 * not yet reached when the contributions started) and writes the keys.
 */
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { isDeepStrictEqual, parseArgs } from 'node:util'
import * as snarkjs from 'snarkjs'
import { CIRCUIT_IDS, circuitFiles, isCircuitId, type CircuitId, type KeysManifest } from '../srv/chains/chain-b/zk/circuits.ts'
import {
  blake2bOf, contributionsOf, MIN_PRODUCTION_CONTRIBUTIONS, PUBLISHED_PHASE1, PUBLISHED_PHASE1_URL, sha256Of, TRANSCRIPT_FILE, TRANSCRIPT_FORMAT, transcriptCircuits,
  VERIFICATION_FILE, VERIFICATION_FORMAT, zkeyContributions, type CircuitRecord, type FinalFiles, type Phase1Record, type Transcript, type VerificationRecord,
} from '../srv/chains/chain-b/zk/transcript.ts'

const root = resolve(import.meta.dirname, '..')
const buildDir = join(root, 'zk/build')
const circuitsDir = join(root, 'zk/circuits')
const bin = (name: string) => join(root, 'node_modules/.bin', name)
const packageVersion = (name: string) => (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version

/**
 * The development phase 1: `snarkjs powersoftau new bn128 <power>`, then one beacon contribution
 * from this public value (2^10 SHA-256 rounds, named as below), then `powersoftau prepare phase2`.
 * Nothing in it is secret, which is the point: anyone can make the same file and compare hashes.
 */
export const DEVELOPMENT_PHASE1 = {
  power: 15,
  beacon: '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
  iterations: 10,
  name: 'development phase 1',
} as const

/** The development phase 1's blake2b-512 by power, as made here and with the snarkjs command line alike: a file made again must match. */
export const DEVELOPMENT_PHASE1_BLAKE2B: Readonly<Record<number, string>> = {
  12: '17e997f189047ebd87b038e5acd940ca33f5f81af33ef0c817fcf914c35aa6526c5930aca0401aded4a49b20360cf69b25987feb57083faacbb0988561745850',
  15: '4f7db3b106abedafdc6f3d47f9583a78bad2016fca29f2010ff1dcbcb5d407ce4f8703d8f7bff15cc23884448970c3d76b5f5f34f5e19145c5d54089b6e54cc2',
}

/** The beacon of the development keys' phase 2: as public as the development phase 1. */
export const DEVELOPMENT_BEACON = {
  value: 'fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210',
  iterations: 10,
  source: 'development: a fixed public value (development keys are never accepted in production)',
}

// ---------------------------------------------------------------------------------------------
// Output, options, files.
// ---------------------------------------------------------------------------------------------

export class CeremonyError extends Error {}
const fail = (message: string): never => {
  throw new CeremonyError(message)
}

const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`

/** snarkjs's logger: its info lines as they come, its (many) debug lines at most one per 10 s, as progress. */
function logger(indent = '    ') {
  let lastProgress = 0
  const line = (text: string) => console.log(indent + String(text).replace(/\s+/g, ' ').trim())
  return {
    info: (text: string) => line(text),
    warn: (text: string) => line('warning: ' + text),
    error: (text: string) => line('error: ' + text),
    debug: (text: string) => {
      if (Date.now() - lastProgress < 10_000) return
      lastProgress = Date.now()
      line(text)
    },
  }
}
/** A logger for steps whose info lines say nothing the ceremony does not print itself. */
function quietLogger(indent = '    ') {
  const progress = logger(indent)
  return { ...progress, info: () => undefined }
}

async function step<T>(what: string, work: () => Promise<T>): Promise<T> {
  const started = Date.now()
  console.log(`  ${what} ...`)
  const result = await work()
  console.log(`  ${what}: ${seconds(started)}`)
  return result
}

type Options = Record<string, string | true>

/** The options the commands take: the flags, and the rest taking a value. */
const FLAGS = ['force', 'without-phase1', 'no-record']
const VALUED = ['ptau', 'ptau-blake2b', 'power', 'beacon-from', 'circuits', 'dir', 'name', 'entropy', 'beacon', 'iterations', 'keys', 'url']

function parseArguments(argv: string[]): { command: string; options: Options } {
  const [command = 'help', ...rest] = argv
  const { tokens } = parseArgs({
    args: rest, strict: false, allowPositionals: true, tokens: true,
    options: Object.fromEntries([...FLAGS.map(name => [name, { type: 'boolean' as const }]), ...VALUED.map(name => [name, { type: 'string' as const }])]),
  })
  const options: Options = {}
  for (const token of tokens) {
    if (token.kind === 'option' && !FLAGS.includes(token.name) && !VALUED.includes(token.name)) fail(`unknown option --${token.name}`)
    if (token.kind === 'positional') fail(`unexpected argument '${token.value}'`)
    // An option missing its value (strict parsing off) is caught by text() below, naming it.
    if (token.kind === 'option') options[token.name] = token.value ?? true
  }
  return { command, options }
}

const text = (options: Options, name: string): string | undefined => {
  const value = options[name]
  if (value === true) fail(`--${name} needs a value`)
  return value as string | undefined
}
const flag = (options: Options, name: string) => options[name] === true

function allowOnly(options: Options, names: string[]) {
  const unknown = Object.keys(options).filter(name => !names.includes(name))
  if (unknown.length) fail(`unknown option${unknown.length > 1 ? 's' : ''} ${unknown.map(name => '--' + name).join(', ')}`)
}

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T
const writeJson = (file: string, value: unknown) => {
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, JSON.stringify(value, null, 2) + '\n')
}
const sha256File = (file: string) => sha256Of(readFileSync(file))
const display = (file: string) => (file.startsWith(root + '/') ? relative(root, file) : file)
const now = () => new Date().toISOString()
const HEX = /^(?:[0-9a-f]{2})+$/

function circuitsOption(options: Options): CircuitId[] {
  const given = text(options, 'circuits')
  if (!given) return [...CIRCUIT_IDS]
  const ids = given.split(',').map(id => id.trim()).filter(Boolean)
  const unknown = ids.filter(id => !isCircuitId(id))
  if (unknown.length || !ids.length) fail(`--circuits names circuits of ${CIRCUIT_IDS.join(', ')}, got '${given}'`)
  return CIRCUIT_IDS.filter(id => ids.includes(id))
}

// ---------------------------------------------------------------------------------------------
// Binary headers: the r1cs's sizes, the ptau's power and contributions.
// ---------------------------------------------------------------------------------------------

function binarySections(bytes: Buffer, magic: string): Map<number, [number, number]> {
  if (bytes.toString('latin1', 0, 4) !== magic) fail(`not a ${magic} file`)
  const found = new Map<number, [number, number]>()
  let at = 12
  for (let i = 0, count = bytes.readUInt32LE(8); i < count; i++) {
    const type = bytes.readUInt32LE(at)
    const size = Number(bytes.readBigUInt64LE(at + 4))
    found.set(type, [at + 12, size])
    at += 12 + size
  }
  return found
}

/** The constraint system's size: constraints, public signals (outputs and public inputs), and the proving key's domain power. */
function r1csSize(file: string): { constraints: number; nPublic: number; power: number } {
  const bytes = readFileSync(file)
  const [at] = binarySections(bytes, 'r1cs').get(1) ?? fail(`${file}: no header`)
  const n8 = bytes.readUInt32LE(at)
  const header = at + 4 + n8
  const nOutputs = bytes.readUInt32LE(header + 4)
  const nPubInputs = bytes.readUInt32LE(header + 8)
  const constraints = bytes.readUInt32LE(header + 24)
  const nPublic = nOutputs + nPubInputs
  return { constraints, nPublic, power: Math.ceil(Math.log2(constraints + nPublic + 1)) }
}

interface PtauInfo {
  power: number
  prepared: boolean
  contributions: { name?: string; beacon?: { value: string; iterations: number } }[]
}

/** A Powers of Tau file's power, whether it was prepared for phase 2, and its contributions' names and beacons. */
function ptauInfo(bytes: Buffer): PtauInfo {
  const sections = binarySections(bytes, 'ptau')
  const [header] = sections.get(1) ?? fail('a ptau file without a header')
  const n8 = bytes.readUInt32LE(header)
  const power = bytes.readUInt32LE(header + 4 + n8)
  const [at, size] = sections.get(7) ?? fail('a ptau file without contributions')
  const contributions: PtauInfo['contributions'] = []
  let p = at + 4
  const POINTS = 64 + 128 + 64 + 64 + 128 + (64 * 6 + 128 * 3) + 216 + 64
  for (let i = 0, count = bytes.readUInt32LE(at); i < count; i++) {
    p += POINTS
    const type = bytes.readUInt32LE(p)
    const length = bytes.readUInt32LE(p + 4)
    const params = bytes.subarray(p + 8, p + 8 + length)
    p += 8 + length
    const entry: PtauInfo['contributions'][number] = {}
    let value = '', iterations = 0
    for (let q = 0; q < params.length;) {
      const kind = params[q++]
      if (kind === 2) iterations = params[q++]
      else {
        const data = params.subarray(q + 1, q + 1 + params[q])
        q += 1 + params[q]
        if (kind === 1) entry.name = Buffer.from(data).toString('utf8')
        else value = Buffer.from(data).toString('hex')
      }
    }
    if (type === 1) entry.beacon = { value, iterations }
    contributions.push(entry)
  }
  if (p !== at + size) fail('a ptau file whose contributions section does not parse')
  return { power, prepared: sections.has(12), contributions }
}

// ---------------------------------------------------------------------------------------------
// Phase 1.
// ---------------------------------------------------------------------------------------------

export const developmentPhase1File = (power: number) => join(buildDir, 'phase1', `development_pot${power}.ptau`)

const isDevelopmentPhase1 = (info: PtauInfo) =>
  info.contributions.length === 1 && info.contributions[0].name === DEVELOPMENT_PHASE1.name &&
  info.contributions[0].beacon?.value === DEVELOPMENT_PHASE1.beacon && info.contributions[0].beacon.iterations === DEVELOPMENT_PHASE1.iterations

/** What making the development phase 1 costs, as measured for 2^12 (3) and 2^15 (32): its preparation for phase 2 grows with power · 2^power. */
const cpuMinutes = (power: number) => Math.max(1, Math.round(32 * power * 2 ** power / (15 * 2 ** 15)))

/** The development phase 1 of this power, made (minutes: the preparation for phase 2 is the long part) when it is not in zk/build yet. */
async function developmentPhase1(power: number): Promise<{ file: string; record: Phase1Record }> {
  const file = developmentPhase1File(power)
  let made = false
  if (!existsSync(file) && !copiedFromMachineCache(file, power)) {
    console.log(`development phase 1, 2^${power}: not in ${display(dirname(file))} yet, making it from its public beacon (about ${cpuMinutes(power)} minutes of CPU: ${Math.ceil(cpuMinutes(power) / 2)} or more on two idle cores; kept for later runs)`)
    const work = `${file}.${process.pid}.tmp`
    mkdirSync(work, { recursive: true })
    try {
      const curve = await snarkjs.curves.getCurveFromName('bn128')
      await step('powersoftau new', () => snarkjs.powersOfTau.newAccumulator(curve, power, join(work, 'new.ptau'), quietLogger()))
      await step('powersoftau beacon', () => snarkjs.powersOfTau.beacon(join(work, 'new.ptau'), join(work, 'beacon.ptau'), DEVELOPMENT_PHASE1.name, DEVELOPMENT_PHASE1.beacon, DEVELOPMENT_PHASE1.iterations, quietLogger()))
      await step('powersoftau prepare phase2', () => snarkjs.powersOfTau.preparePhase2(join(work, 'beacon.ptau'), join(work, 'final.ptau'), quietLogger()))
      renameSync(join(work, 'final.ptau'), file)
      made = true
    } finally {
      rmSync(work, { recursive: true, force: true })
    }
  }
  const bytes = readFileSync(file)
  const info = ptauInfo(bytes)
  if (info.power !== power || !info.prepared || !isDevelopmentPhase1(info)) fail(`${display(file)} is not the development phase 1 of power ${power}: delete it to make it again`)
  const blake2b = blake2bOf(bytes)
  const known = DEVELOPMENT_PHASE1_BLAKE2B[power]
  if (known && blake2b !== known) fail(`${display(file)} has blake2b-512 ${blake2b}, the development phase 1 of power ${power} has ${known}: delete it to make it again`)
  if (known && made) keepInMachineCache(file)
  const { beacon, iterations, name } = DEVELOPMENT_PHASE1
  return {
    file,
    record: {
      name: basename(file), power, blake2b, origin: 'development', beacon: { value: beacon, iterations, name },
      description: `development phase 1: snarkjs powersoftau new bn128 ${power}, one beacon contribution '${name}' from the public value ${beacon} (2^${iterations} rounds), prepare phase2; its toxic waste is public`,
    },
  }
}

/** Where development phase-1 files are kept for every checkout on this machine. */
const machineCache = () => join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'cag-zk', 'phase1')

/** The machine's copy of this development phase 1, when it has the pinned hash, copied into zk/build. */
function copiedFromMachineCache(file: string, power: number): boolean {
  const cached = join(machineCache(), basename(file))
  const known = DEVELOPMENT_PHASE1_BLAKE2B[power]
  if (!known || !existsSync(cached) || blake2bOf(readFileSync(cached)) !== known) return false
  copyWhole(cached, file)
  console.log(`development phase 1, 2^${power}: copied from ${cached} (its blake2b-512 is the pinned one)`)
  return true
}

/** A copy of a file just made (and checked) for the machine's other checkouts, in place of a bad one; a home folder that cannot be written to only costs them the time. */
function keepInMachineCache(file: string) {
  const cached = join(machineCache(), basename(file))
  try {
    copyWhole(file, cached)
  } catch {
    // no copy kept
  }
}

/** Copied under a temporary name and renamed: a reader never sees half a file. */
function copyWhole(from: string, to: string) {
  mkdirSync(dirname(to), { recursive: true })
  const partial = `${to}.${process.pid}.tmp`
  copyFileSync(from, partial)
  renameSync(partial, to)
}

/** A phase-1 file given with --ptau: a published one (its hash pinned here, or given by the operator) or the development one. */
function givenPhase1(file: string, expectedBlake2b?: string): { file: string; record: Phase1Record } {
  if (!existsSync(file)) fail(`no phase-1 file ${file}`)
  const bytes = readFileSync(file)
  const info = ptauInfo(bytes)
  if (!info.prepared) fail(`${file} is not prepared for phase 2 (snarkjs powersoftau prepare phase2)`)
  const blake2b = blake2bOf(bytes)
  if (isDevelopmentPhase1(info)) return { file, record: { name: basename(file), power: info.power, blake2b, origin: 'development', description: 'development phase 1 (public toxic waste)', beacon: { value: DEVELOPMENT_PHASE1.beacon, iterations: DEVELOPMENT_PHASE1.iterations, name: DEVELOPMENT_PHASE1.name } } }
  const published = PUBLISHED_PHASE1[info.power]
  if (expectedBlake2b) {
    if (blake2b !== expectedBlake2b.toLowerCase()) fail(`${file}: its blake2b-512 is ${blake2b}, not the expected ${expectedBlake2b}`)
    const pinned = published?.blake2b === blake2b
    return { file, record: { name: pinned ? published.name : basename(file), power: info.power, blake2b, origin: pinned ? 'published' : 'operator', description: pinned ? `${published.name}: the Hermez Powers of Tau (Perpetual Powers of Tau, 54 contributions and a beacon), as the snarkjs README lists it` : `${basename(file)}: a published Powers of Tau with ${info.contributions.length} contributions; its blake2b-512 was given by the operator` } }
  }
  if (published?.blake2b !== blake2b)
    fail(`${file} (power ${info.power}) is not the published ${published?.name ?? 'file of that power'} (its blake2b-512 is ${blake2b}); for another published Powers of Tau pass its published hash with --ptau-blake2b`)
  return { file, record: { name: published.name, power: info.power, blake2b, origin: 'published', description: `${published.name}: the Hermez Powers of Tau (Perpetual Powers of Tau, 54 contributions and a beacon), as the snarkjs README lists it` } }
}

/** The phase-1 file a transcript names: --ptau, the development one (made when missing), or the published file's name in zk/build/phase1. */
async function transcriptPhase1(transcript: Transcript, given?: string): Promise<{ file: string; record: Phase1Record }> {
  const named = transcript.phase1
  if (given) return givenPhase1(resolve(given), named.origin === 'operator' ? named.blake2b : undefined)
  if (named.origin === 'development') return developmentPhase1(named.power)
  const cached = join(buildDir, 'phase1', named.name)
  if (existsSync(cached)) return givenPhase1(cached, named.origin === 'operator' ? named.blake2b : undefined)
  return fail(`the phase-1 file ${named.name} is needed: download it${PUBLISHED_PHASE1[named.power]?.name === named.name ? ` (${PUBLISHED_PHASE1_URL(named.name)})` : ''}, check \`b2sum\` prints ${named.blake2b}, and pass it with --ptau <file> (or put it in ${display(join(buildDir, 'phase1'))})`)
}

// ---------------------------------------------------------------------------------------------
// Circuits.
// ---------------------------------------------------------------------------------------------

/** SHA-256 of the circuit's source and the shared library, as the manifest's `source`. */
const sourceHash = (id: CircuitId) => sha256Of(Buffer.concat([readFileSync(join(circuitsDir, `${id}.circom`)), readFileSync(join(circuitsDir, 'content.circom'))]))

interface Compiled { r1cs: string; wasm: string; source: string }

/** The circuit compiled with circom2 into zk/build/circuits/<id>, again only when its sources changed. */
function compile(id: CircuitId): Compiled {
  const out = join(buildDir, 'circuits', id)
  const source = sourceHash(id)
  const compiled = { r1cs: join(out, `${id}.r1cs`), wasm: join(out, `${id}_js`, `${id}.wasm`), source }
  const stamp = join(out, 'compiled-from')
  const from = `${source} circom2 ${packageVersion('circom2')}`
  const pinned = committedCompilation(id, source)
  const cached = join(machineCircuitCache(), id, `${source}-circom2-${packageVersion('circom2')}`)
  const cachedFiles = { r1cs: join(cached, `${id}.r1cs`), wasm: join(cached, `${id}.wasm`) }
  /** This checkout's compiled circuit kept for the machine's other checkouts, when it is the one the committed transcript pins and the machine has none. */
  const keep = () => {
    if (!pinned || (existsSync(cachedFiles.r1cs) && existsSync(cachedFiles.wasm))) return
    if (sha256File(compiled.r1cs) !== pinned.r1cs || sha256File(compiled.wasm) !== pinned.wasm) return
    try {
      copyWhole(compiled.r1cs, cachedFiles.r1cs)
      copyWhole(compiled.wasm, cachedFiles.wasm)
    } catch {
      // no copy kept: a home folder that cannot be written to only costs the other checkouts the time
    }
  }
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === from && existsSync(compiled.r1cs) && existsSync(compiled.wasm)) {
    keep()
    return compiled
  }
  if (pinned && existsSync(cachedFiles.r1cs) && existsSync(cachedFiles.wasm) && sha256File(cachedFiles.r1cs) === pinned.r1cs && sha256File(cachedFiles.wasm) === pinned.wasm) {
    rmSync(out, { recursive: true, force: true })
    copyWhole(cachedFiles.r1cs, compiled.r1cs)
    copyWhole(cachedFiles.wasm, compiled.wasm)
    writeFileSync(stamp, from)
    console.log(`  ${id}: copied from ${cached} (its hashes are the committed keys' transcript's)`)
    return compiled
  }
  // A copy without the pinned hashes is of no use: made again below.
  if (pinned) rmSync(cached, { recursive: true, force: true })
  const started = Date.now()
  console.log(`  ${id}: compiling ...`)
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })
  const result = spawnSync(bin('circom2'), [join(circuitsDir, `${id}.circom`), '--r1cs', '--wasm', '--O2', '-l', join(root, 'node_modules'), '-o', out], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  if (result.status !== 0) fail(`circom2 could not compile ${id}:\n${result.stdout}\n${result.stderr}`)
  writeFileSync(stamp, from)
  console.log(`  ${id}: compiled, ${seconds(started)}`)
  keep()
  return compiled
}

/**
 * The committed development keys' record of this circuit (zk/keys/transcript.json) when it was
 * compiled from these sources: the SHA-256 of its constraint system and witness generator, which pin
 * a machine's copy as the development phase 1's blake2b-512 pins that file. Sources changed since
 * have no record, and are compiled.
 */
function committedCompilation(id: CircuitId, source: string): { r1cs: string; wasm: string } | undefined {
  const file = join(root, 'zk/keys', TRANSCRIPT_FILE)
  if (!existsSync(file)) return undefined
  const record = readJson<Transcript>(file).circuits?.[id]
  return record?.source === source && record.r1cs && record.wasm ? { r1cs: record.r1cs, wasm: record.wasm } : undefined
}

/** Where the circuits compiled from the committed sources are kept for every checkout on this machine (circom2 takes 4 to 17 s a circuit). */
const machineCircuitCache = () => join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'cag-zk', 'circuits')

// ---------------------------------------------------------------------------------------------
// The ceremony folder: transcript.json and each circuit's latest proving key.
// ---------------------------------------------------------------------------------------------

const ceremonyDir = (options: Options) => resolve(text(options, 'dir') ?? join(buildDir, 'ceremony'))
const zkeyAt = (dir: string, id: CircuitId, index: number) => join(dir, id, `${id}_${String(index).padStart(4, '0')}.zkey`)

function readTranscript(file: string): Transcript {
  if (!existsSync(file)) fail(`no ${basename(file)} in ${display(dirname(file))}${basename(dirname(file)) === 'ceremony' ? ': run npm run ceremony -- init first' : ''}`)
  const transcript = readJson<Transcript>(file)
  if (transcript.format !== TRANSCRIPT_FORMAT) fail(`${display(file)} is not a transcript of format ${TRANSCRIPT_FORMAT}`)
  return transcript
}

/** The circuit's latest proving key in the ceremony folder, checked against the transcript (the same circuit, the same contributions). */
function latestZkey(dir: string, transcript: Transcript, id: CircuitId): string {
  const contributions = contributionsOf(transcript, id)
  const file = zkeyAt(dir, id, contributions.length)
  if (!existsSync(file)) fail(`${display(file)} is missing: the ceremony folder is not the one the transcript describes`)
  const carried = zkeyContributions(readFileSync(file))
  if (carried.csHash !== transcript.circuits[id]!.csHash) fail(`${display(file)} is a proving key of another circuit than the transcript's ${id}`)
  if (carried.contributions.map(entry => entry.hash).join() !== contributions.map(entry => entry.hash).join()) fail(`${display(file)} does not carry the contributions the transcript lists`)
  return file
}

function announcedBeacon(options: Options): string | undefined {
  const source = text(options, 'beacon-from')
  if (source !== undefined && !source.trim()) fail('--beacon-from names the public value the beacon will be taken from')
  return source?.trim()
}

async function init(options: Options) {
  allowOnly(options, ['ptau', 'ptau-blake2b', 'power', 'beacon-from', 'circuits', 'dir', 'force'])
  const dir = ceremonyDir(options)
  const transcriptFile = join(dir, TRANSCRIPT_FILE)
  if (existsSync(transcriptFile) && !flag(options, 'force')) fail(`${display(dir)} already holds a ceremony; --force starts a new one there (the old one is lost)`)
  const ids = circuitsOption(options)
  const ptau = text(options, 'ptau')
  const expected = text(options, 'ptau-blake2b')
  if (expected && !ptau) fail('--ptau-blake2b checks the file given with --ptau')
  const power = Number(text(options, 'power') ?? DEVELOPMENT_PHASE1.power)
  if (!Number.isInteger(power) || power < 8 || power > 20) fail('--power is the development phase 1\'s power, 8 to 20')
  console.log('phase 1:')
  const phase1 = ptau ? givenPhase1(resolve(ptau), expected) : await developmentPhase1(power)
  console.log(`  ${phase1.record.name}: power ${phase1.record.power}, ${phase1.record.origin}, blake2b-512 ${phase1.record.blake2b}`)
  const development = phase1.record.origin === 'development'
  const beaconFrom = announcedBeacon(options)
  if (!development && !beaconFrom) fail('a production ceremony announces where its beacon will come from before anyone contributes: --beacon-from "<a public value not known yet, e.g. the chain-A block hash at height N>"')

  rmSync(transcriptFile, { force: true })
  for (const id of CIRCUIT_IDS) rmSync(join(dir, id), { recursive: true, force: true })
  const transcript: Transcript = {
    format: TRANSCRIPT_FORMAT, development, protocol: 'groth16', curve: 'bn128',
    tools: { snarkjs: packageVersion('snarkjs'), circom: `circom2 ${packageVersion('circom2')}` },
    startedAt: now(), phase1: phase1.record, circuits: {}, contributions: [],
    beacon: beaconFrom ? { source: beaconFrom, announcedAt: now() } : { source: '' },
  }
  for (const id of ids) {
    console.log(`${id}:`)
    const compiled = compile(id)
    const size = r1csSize(compiled.r1cs)
    if (size.power > phase1.record.power) fail(`${id} needs 2^${size.power} powers of tau (${size.constraints} constraints); the phase-1 file has 2^${phase1.record.power}`)
    const initial = zkeyAt(dir, id, 0)
    mkdirSync(dirname(initial), { recursive: true })
    const csHash = await step(`groth16 setup (${size.constraints} constraints, 2^${size.power})`, () => snarkjs.zKey.newZKey(compiled.r1cs, phase1.file, initial, quietLogger()))
    const record: CircuitRecord = { source: compiled.source, r1cs: sha256File(compiled.r1cs), wasm: sha256File(compiled.wasm), ...size, csHash: Buffer.from(csHash).toString('hex'), initialZkey: sha256File(initial) }
    transcript.circuits[id] = record
    console.log(`  circuit hash ${record.csHash}`)
  }
  writeJson(transcriptFile, transcript)
  console.log(`${development ? 'development ' : ''}ceremony started in ${display(dir)}: next, each party runs npm run ceremony -- contribute --name <who>${dir === join(buildDir, 'ceremony') ? '' : ` --dir ${display(dir)}`}`)
}

async function contribute(options: Options) {
  allowOnly(options, ['name', 'entropy', 'dir'])
  const dir = ceremonyDir(options)
  const transcriptFile = join(dir, TRANSCRIPT_FILE)
  const transcript = readTranscript(transcriptFile)
  if (transcript.keys) fail('this ceremony was finalized; it takes no more contributions')
  const name = text(options, 'name')?.trim()
  if (!name) fail('--name <who> names the contributing party (it is recorded in the keys and the transcript)')
  if (Buffer.byteLength(name!) > 64) fail('--name is at most 64 bytes (snarkjs keeps no more)')
  // A party whose run stopped part way resumes where it stopped; otherwise each name contributes once.
  const ids = transcriptCircuits(transcript)
  const done = ids.filter(id => contributionsOf(transcript, id).at(-1)?.name === name)
  if (done.length === ids.length || transcript.contributions.some(entry => entry.name === name && !done.includes(entry.circuit)))
    fail(`'${name}' has contributed already; each party contributes once, under its own name`)
  const entropy = text(options, 'entropy') ?? randomBytes(32).toString('hex')
  console.log(`contribution of '${name}' (snarkjs mixes the entropy with its own random bytes; nothing of it is kept):`)
  for (const id of ids) {
    if (done.includes(id)) {
      console.log(`  ${id}: contributed already, in a run that stopped part way`)
      continue
    }
    const previous = latestZkey(dir, transcript, id)
    const index = contributionsOf(transcript, id).length + 1
    const next = zkeyAt(dir, id, index)
    const hash = Buffer.from(await step(`${id}: contribution #${index}`, () => snarkjs.zKey.contribute(previous, next, name!, entropy, quietLogger()))).toString('hex')
    transcript.contributions.push({ circuit: id, index, name: name!, hash, at: now() })
    writeJson(transcriptFile, transcript)
    rmSync(previous)
    console.log(`  ${id}: contribution #${index} hash ${hash}`)
  }
  console.log(`done: publish the hashes above as yours, and hand ${display(dir)} to the next party (or finalize)`)
}

async function finalize(options: Options) {
  allowOnly(options, ['beacon', 'iterations', 'beacon-from', 'keys', 'dir'])
  const dir = ceremonyDir(options)
  const transcriptFile = join(dir, TRANSCRIPT_FILE)
  const transcript = readTranscript(transcriptFile)
  if (transcript.keys) fail('this ceremony was finalized already')
  const ids = transcriptCircuits(transcript)
  const fewest = Math.min(...ids.map(id => contributionsOf(transcript, id).length))
  const needed = transcript.development ? 1 : MIN_PRODUCTION_CONTRIBUTIONS
  if (fewest < needed) fail(`the ceremony has ${fewest} contribution${fewest === 1 ? '' : 's'}; it needs at least ${needed} before the beacon`)
  const beacon = text(options, 'beacon')?.toLowerCase()
  if (!beacon || !HEX.test(beacon) || beacon.length > 510) fail('--beacon <hex> is the public value announced in advance (whole bytes of hex, at most 255 bytes)')
  const iterations = Number(text(options, 'iterations') ?? 10)
  if (!Number.isInteger(iterations) || iterations < 10 || iterations > 63) fail('--iterations is the beacon\'s 2^N SHA-256 rounds, N from 10 to 63')
  const source = announcedBeacon(options) ?? transcript.beacon.source
  if (!source) fail('--beacon-from names the public value the beacon is (it was not announced at init)')
  if (transcript.beacon.source && source !== transcript.beacon.source) fail(`the beacon was announced as '${transcript.beacon.source}'`)
  const keysDir = resolve(text(options, 'keys') ?? join(root, 'zk/keys'))

  transcript.beacon = { ...transcript.beacon, source, value: beacon, iterations, contributions: {}, at: now() }
  transcript.keys = {}
  const manifest: KeysManifest = { development: transcript.development, ceremony: ceremonySummary(transcript), circuits: {} }
  mkdirSync(keysDir, { recursive: true })
  rmSync(join(keysDir, VERIFICATION_FILE), { force: true })
  for (const id of ids) {
    console.log(`${id}:`)
    const previous = latestZkey(dir, transcript, id)
    const index = contributionsOf(transcript, id).length + 1
    const target = join(keysDir, id)
    const names = circuitFiles(id)
    mkdirSync(target, { recursive: true })
    const hash = Buffer.from(await step(`beacon (contribution #${index}, 2^${iterations} rounds)`, () => snarkjs.zKey.beacon(previous, join(target, names.zkey), 'beacon', beacon!, iterations, quietLogger()))).toString('hex')
    transcript.beacon.contributions![id] = { index, hash }
    console.log(`  beacon hash ${hash}`)
    const verificationKey = await snarkjs.zKey.exportVerificationKey(join(target, names.zkey))
    writeFileSync(join(target, names.verificationKey), JSON.stringify(verificationKey, null, 1) + '\n')
    const compiled = compile(id)
    if (sha256File(compiled.wasm) !== transcript.circuits[id]!.wasm) fail(`the compiled witness generator of ${id} differs from the one the ceremony started with (its sources or the compiler changed)`)
    copyFileSync(compiled.wasm, join(target, names.wasm))
    const files = Object.fromEntries((['wasm', 'zkey', 'verificationKey'] as const).map(role => {
      const file = join(target, names[role])
      return [role, { name: names[role], sha256: sha256File(file), size: statSync(file).size }]
    }))
    transcript.keys[id] = { zkey: files.zkey.sha256, verificationKey: files.verificationKey.sha256, wasm: files.wasm.sha256 }
    const circuit = transcript.circuits[id]!
    manifest.circuits[id] = { source: circuit.source, constraints: circuit.constraints, nPublic: circuit.nPublic, files }
  }
  transcript.finalizedAt = now()
  writeJson(transcriptFile, transcript)
  writeJson(join(keysDir, TRANSCRIPT_FILE), transcript)
  writeJson(join(keysDir, 'manifest.json'), manifest)
  console.log(`${transcript.development ? 'development ' : ''}keys, manifest.json and ${TRANSCRIPT_FILE} written to ${display(keysDir)}: next, npm run ceremony -- verify${keysDir === join(root, 'zk/keys') ? '' : ` --keys ${display(keysDir)}`}`)
}

function ceremonySummary(transcript: Transcript): string {
  const parties = [...new Set(transcript.contributions.map(entry => entry.name))].length
  const { phase1 } = transcript
  const origin = phase1.origin === 'development' ? 'the development phase 1, whose toxic waste is public' : phase1.name
  return `powers of tau 2^${phase1.power}: ${origin} (blake2b-512 ${phase1.blake2b.slice(0, 16)}…); groth16 phase 2: ${parties} contribution${parties === 1 ? '' : 's'} and a beacon; see ${TRANSCRIPT_FILE}`
}

// ---------------------------------------------------------------------------------------------
// verify: everything checkable, from the sources, the phase-1 file and the keys folder.
// ---------------------------------------------------------------------------------------------

/** A manifest as the keys folder has it, or as GET /zk-config publishes it (fetch keeps that one). */
type AnyManifest = KeysManifest | { development: boolean; circuits: { id: string; files: Record<string, { sha256: string }> }[] }
function manifestFiles(manifest: AnyManifest, id: CircuitId): { source?: string; hashes: Partial<Record<keyof FinalFiles, string>> } | undefined {
  const entry = Array.isArray(manifest.circuits) ? manifest.circuits.find(circuit => circuit.id === id) : (manifest as KeysManifest).circuits[id]
  if (!entry) return undefined
  const files = entry.files as Record<string, { sha256: string }>
  return { source: (entry as { source?: string }).source, hashes: { zkey: files.zkey?.sha256, verificationKey: files.verificationKey?.sha256, wasm: files.wasm?.sha256 } }
}

async function verify(options: Options): Promise<boolean> {
  allowOnly(options, ['keys', 'ptau', 'beacon', 'circuits', 'without-phase1', 'no-record'])
  const keysDir = resolve(text(options, 'keys') ?? join(root, 'zk/keys'))
  const transcriptFile = join(keysDir, TRANSCRIPT_FILE)
  const transcriptBytes = existsSync(transcriptFile) ? readFileSync(transcriptFile) : fail(`no ${TRANSCRIPT_FILE} in ${display(keysDir)}: keys without a ceremony transcript cannot be verified`)
  const transcript = readTranscript(transcriptFile)
  const manifestFile = join(keysDir, 'manifest.json')
  const manifest = existsSync(manifestFile) ? readJson<AnyManifest>(manifestFile) : undefined
  const selected = text(options, 'circuits') ? circuitsOption(options) : undefined
  const ids = transcriptCircuits(transcript).filter(id => !selected || selected.includes(id))
  const withoutPhase1 = flag(options, 'without-phase1')
  const problems: string[] = []
  const check = (holds: boolean, problem: string) => {
    if (!holds) {
      problems.push(problem)
      console.log(`  FAILED: ${problem}`)
    }
    return holds
  }
  console.log(`verifying ${display(keysDir)} (${transcript.development ? 'development' : 'production'} ceremony, ${ids.join(', ')}):`)

  // The transcript's own rules.
  check(transcript.development === (transcript.phase1.origin === 'development'), 'the transcript\'s development flag does not follow its phase 1')
  if (manifest) check(manifest.development === transcript.development, 'manifest.json and the transcript disagree on whether these are development keys')
  if (selected) check(selected.every(id => transcript.circuits[id]), `the transcript has no ceremony for ${selected.filter(id => !transcript.circuits[id]).join(', ')}`)
  const beacon = transcript.beacon
  check(Boolean(beacon.value && beacon.source && beacon.iterations), 'the transcript names no beacon and its public source')
  const expectedBeacon = text(options, 'beacon')?.toLowerCase()
  if (expectedBeacon) check(beacon.value === expectedBeacon, `the beacon is ${beacon.value}, not the announced ${expectedBeacon}`)
  check(Boolean(transcript.keys), 'the ceremony was not finalized')
  if (!transcript.development) {
    const first = transcript.contributions.map(entry => entry.at ?? '').sort()[0]
    check(Boolean(beacon.announcedAt && first && beacon.announcedAt <= first && beacon.at && transcript.contributions.every(entry => (entry.at ?? '') <= beacon.at!)),
      'the transcript does not show the beacon\'s source announced before the first contribution and the beacon taken after the last')
  }

  // Phase 1.
  let phase1: { file: string; record: Phase1Record } | undefined
  if (withoutPhase1) console.log('phase 1: not checked (--without-phase1): the proving keys are not verified against it either')
  else {
    console.log('phase 1:')
    phase1 = await transcriptPhase1(transcript, text(options, 'ptau'))
    const { record } = phase1
    console.log(`  ${display(phase1.file)}: power ${record.power}, blake2b-512 ${record.blake2b}`)
    check(record.blake2b === transcript.phase1.blake2b, `the phase-1 file's blake2b-512 is ${record.blake2b}, the transcript names ${transcript.phase1.blake2b}`)
    check(record.power === transcript.phase1.power && record.origin === transcript.phase1.origin, `the phase-1 file is ${record.origin} of power ${record.power}, the transcript names ${transcript.phase1.origin} of power ${transcript.phase1.power}`)
    if (transcript.phase1.origin === 'published') check(PUBLISHED_PHASE1[transcript.phase1.power]?.blake2b === transcript.phase1.blake2b, `the transcript's phase 1 is not the published file of power ${transcript.phase1.power}`)
  }

  const verified: VerificationRecord['circuits'] = {}
  for (const id of ids) {
    console.log(`${id}:`)
    const circuit = transcript.circuits[id]!
    const names = circuitFiles(id)
    const before = problems.length
    const contributions = contributionsOf(transcript, id)
    const needed = transcript.development ? 1 : MIN_PRODUCTION_CONTRIBUTIONS
    check(contributions.length >= needed, `${id}: ${contributions.length} contributions, at least ${needed} needed besides the beacon`)
    check(contributions.every((entry, i) => entry.index === i + 1), `${id}: the transcript's contributions are not numbered 1, 2, 3…`)
    const compiled = compile(id)
    check(compiled.source === circuit.source, `${id}: the circuit's sources are not those of the ceremony`)
    check(sha256File(compiled.r1cs) === circuit.r1cs, `${id}: the compiled constraint system differs from the ceremony's`)
    const listed = manifest ? manifestFiles(manifest, id) : undefined
    if (manifest) check(Boolean(listed) && (!listed!.source || listed!.source === circuit.source), `${id}: manifest.json does not list the circuit, or lists other sources`)
    const hashes: Partial<FinalFiles> = {}
    for (const role of ['wasm', 'zkey', 'verificationKey'] as const) {
      const file = join(keysDir, id, names[role])
      if (!check(existsSync(file), `${id}/${names[role]} is missing`)) continue
      const hash = (hashes[role] = sha256File(file))
      check(hash === transcript.keys?.[id]?.[role], `${id}/${names[role]}: its SHA-256 is not the transcript's`)
      if (manifest) check(hash === listed?.hashes[role], `${id}/${names[role]}: its SHA-256 is not the manifest's`)
    }
    if (hashes.wasm) check(hashes.wasm === circuit.wasm && sha256File(compiled.wasm) === circuit.wasm, `${id}/${names.wasm} is not the witness generator compiled from the sources`)
    if (!hashes.zkey) continue
    const zkeyFile = join(keysDir, id, names.zkey)
    let carried: ReturnType<typeof zkeyContributions> | undefined
    try {
      carried = zkeyContributions(readFileSync(zkeyFile))
    } catch (error) {
      check(false, `${id}/${names.zkey}: ${(error as Error).message}`)
    }
    if (carried) {
      check(carried.csHash === circuit.csHash, `${id}/${names.zkey} is a proving key of another circuit`)
      const expected = [...contributions.map(entry => ({ name: entry.name, hash: entry.hash })), { name: 'beacon', hash: beacon.contributions?.[id]?.hash }]
      check(carried.contributions.length === expected.length, `${id}/${names.zkey} carries ${carried.contributions.length} contributions, the transcript lists ${expected.length} with the beacon`)
      carried.contributions.forEach((entry, i) => {
        if (i >= expected.length) return
        check(entry.hash === expected[i].hash, `${id}: contribution #${i + 1} in the proving key has hash ${entry.hash}, the transcript lists ${expected[i].hash}`)
        check(entry.name === expected[i].name, `${id}: contribution #${i + 1} in the proving key is named '${entry.name}', the transcript says '${expected[i].name}'`)
        check(Boolean(entry.beacon) === (i === expected.length - 1), `${id}: contribution #${i + 1} ${entry.beacon ? 'is' : 'is not'} a beacon`)
      })
      const last = carried.contributions.at(-1)?.beacon
      check(last?.value === beacon.value && last?.iterations === beacon.iterations, `${id}: the proving key's beacon (${last?.value}, 2^${last?.iterations}) is not the transcript's (${beacon.value}, 2^${beacon.iterations})`)
      for (const entry of carried.contributions) console.log(`  #${entry.index} ${entry.beacon ? `beacon ${entry.beacon.value} (2^${entry.beacon.iterations})` : `'${entry.name}'`}: ${entry.hash}`)
    }
    const exported = await snarkjs.zKey.exportVerificationKey(zkeyFile)
    if (hashes.verificationKey) check(isDeepStrictEqual(readJson(join(keysDir, id, names.verificationKey)), exported), `${id}/${names.verificationKey} is not the verification key of ${names.zkey}`)
    if (phase1) {
      if (problems.length) console.log('  snarkjs zkey verify: skipped, the checks above failed')
      else {
        const holds = await step('snarkjs zkey verify (the proving key against the constraint system and phase 1)', () => snarkjs.zKey.verifyFromR1cs(compiled.r1cs, phase1!.file, zkeyFile, quietLogger()).catch(() => false))
        check(holds === true, `${id}/${names.zkey} does not verify against the constraint system and the phase-1 file (snarkjs zkey verify)`)
      }
    }
    if (problems.length === before) verified[id] = { zkey: hashes.zkey!, verificationKey: hashes.verificationKey!, wasm: hashes.wasm!, contributions: carried!.contributions.map(entry => entry.hash) }
  }

  if (problems.length) {
    console.log(`NOT VERIFIED: ${problems.length} problem${problems.length === 1 ? '' : 's'}`)
    return false
  }
  const partial = withoutPhase1 || Boolean(selected && ids.length < transcriptCircuits(transcript).length)
  console.log(partial
    ? `verified, partially: ${withoutPhase1 ? 'without the phase-1 file (the proving keys were not checked against the constraint systems and phase 1)' : `only ${ids.join(', ')}`}; no verification record written`
    : `VERIFIED: phase 1 ${transcript.phase1.name} (blake2b-512 ${transcript.phase1.blake2b.slice(0, 16)}…), ${ids.length} circuits, ${ids.map(id => contributionsOf(transcript, id).length).join('/')} contributions and the beacon ${beacon.value} (${beacon.source})`)
  if (!partial && !flag(options, 'no-record')) {
    const record: VerificationRecord = {
      format: VERIFICATION_FORMAT, snarkjs: packageVersion('snarkjs'), transcript: sha256Of(transcriptBytes),
      phase1: { name: transcript.phase1.name, blake2b: transcript.phase1.blake2b }, beacon: beacon.value!, circuits: verified,
    }
    writeJson(join(keysDir, VERIFICATION_FILE), record)
    console.log(`verification record written: ${display(join(keysDir, VERIFICATION_FILE))}${transcript.development ? '' : ' (a production start requires it)'}`)
  }
  return true
}

// ---------------------------------------------------------------------------------------------
// fetch: the served keys into a folder, for verify.
// ---------------------------------------------------------------------------------------------

async function fetchKeys(options: Options) {
  allowOnly(options, ['url', 'keys'])
  const base = (text(options, 'url') ?? fail('--url <gateway>/zk-config names the served keys')).replace(/\/+$/, '')
  const keysDir = resolve(text(options, 'keys') ?? fail('--keys <folder> names where to put them'))
  const origin = new URL(base).origin
  const get = async (url: string) => {
    const response = await fetch(url)
    if (!response.ok) fail(`GET ${url}: ${response.status}`)
    return Buffer.from(await response.arrayBuffer())
  }
  const manifest = JSON.parse((await get(base)).toString('utf8')) as { development: boolean; circuits: { id: string; files: Record<string, { url: string; sha256: string }> }[] }
  mkdirSync(keysDir, { recursive: true })
  writeFileSync(join(keysDir, TRANSCRIPT_FILE), await get(`${base}/${TRANSCRIPT_FILE}`))
  for (const circuit of manifest.circuits) {
    if (!isCircuitId(circuit.id)) continue
    for (const [role, file] of Object.entries(circuit.files)) {
      const bytes = await get(new URL(file.url, origin).href)
      if (sha256Of(bytes) !== file.sha256) fail(`${file.url}: its SHA-256 is not the manifest's`)
      const name = circuitFiles(circuit.id)[role as keyof FinalFiles]
      mkdirSync(join(keysDir, circuit.id), { recursive: true })
      writeFileSync(join(keysDir, circuit.id, name), bytes)
    }
    console.log(`  ${circuit.id}: ${Object.keys(circuit.files).length} files`)
  }
  writeJson(join(keysDir, 'manifest.json'), manifest)
  console.log(`the served keys are in ${display(keysDir)}: npm run ceremony -- verify --keys ${display(keysDir)}`)
}

// ---------------------------------------------------------------------------------------------

const USAGE = readFileSync(import.meta.filename, 'utf8').split('*/')[0].replace(/^\/\*\*\n/, '').replace(/^ \* ?/gm, '')

export async function runCeremony(argv: string[]): Promise<boolean> {
  const { command, options } = parseArguments(argv)
  const started = Date.now()
  let ok = true
  switch (command) {
    case 'phase1': {
      allowOnly(options, ['power'])
      const { file, record } = await developmentPhase1(Number(text(options, 'power') ?? DEVELOPMENT_PHASE1.power))
      console.log(`${display(file)}: power ${record.power}, blake2b-512 ${record.blake2b}`)
      break
    }
    case 'init': await init(options); break
    case 'contribute': await contribute(options); break
    case 'finalize': await finalize(options); break
    case 'verify': ok = await verify(options); break
    case 'fetch': await fetchKeys(options); break
    case 'help': case '--help': console.log(USAGE); return true
    default: fail(`unknown command '${command}'\n\n${USAGE}`)
  }
  console.log(`(${command}: ${seconds(started)})`)
  return ok
}

/** Ends snarkjs's worker threads, which keep the process alive. */
export async function endCurves() {
  const curve = (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128
  if (curve) await curve.terminate()
}

if (import.meta.main) {
  runCeremony(process.argv.slice(2))
    .then(ok => (process.exitCode = ok ? 0 : 1), error => {
      console.error(error instanceof CeremonyError ? `ceremony: ${error.message}` : error)
      process.exitCode = 1
    })
    .finally(endCurves)
}
