import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readManifest } from '../../srv/chains/chain-b/zk/circuits.ts'
import { zkeyContributions, type Transcript } from '../../srv/chains/chain-b/zk/transcript.ts'
import { publishedManifest } from '../../srv/zk-config/manifest.ts'

/**
 * The trusted-setup ceremony end to end (`npm run ceremony`, zk/ceremony.ts), as separate processes
 * the way the parties run it: init, three contributions, the beacon, verify; then verify on keys
 * changed in each way that matters. It runs on the three small circuits and the development phase 1
 * of 2^12, made once into zk/build/phase1 when it is not there (about 3 minutes of CPU; later runs
 * reuse it). document_compare needs the 2^15 phase 1 (about 30 minutes of CPU to make), too much for
 * every run: its committed key is checked against its transcript, manifest and sources without it
 * (`verify --without-phase1`); `npm run ceremony -- verify` checks it in full.
 */

const root = join(__dirname, '..', '..')
const SMALL_CIRCUITS = ['field_predicate', 'field_equality', 'field_membership']
const PARTIES = ['alice', 'bob', 'carol']
const BEACON = 'c0ffee00112233445566778899aabbccddeeff00112233445566778899aabbcc'
const MINUTES = 60_000

interface Run { code: number | null; out: string }
function ceremony(...args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', 'zk/ceremony.ts', ...args], { cwd: root, env: { ...process.env, NODE_OPTIONS: '' } })
    let out = ''
    child.stdout.on('data', chunk => (out += chunk))
    child.stderr.on('data', chunk => (out += chunk))
    child.on('error', reject)
    child.on('close', code => resolve({ code, out }))
  })
}
const passed = (run: Run) => {
  if (run.code !== 0) throw new Error(`the ceremony command failed (${run.code}):\n${run.out.slice(-4000)}`)
  return run.out
}

const work = mkdtempSync(join(tmpdir(), 'zk-ceremony-'))
const dir = join(work, 'ceremony')
const keys = join(work, 'keys')
const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'))
const writeJson = (file: string, value: unknown) => writeFileSync(file, JSON.stringify(value, null, 2) + '\n')
const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex')
const printed: string[] = []

/** A copy of the finalized keys to spoil. */
let copies = 0
function copyOfKeys(): string {
  const copy = join(work, `spoiled-${++copies}`)
  cpSync(keys, copy, { recursive: true })
  rmSync(join(copy, 'verification.json'), { force: true })
  return copy
}

beforeAll(async () => {
  passed(await ceremony('init', '--power', '12', '--circuits', SMALL_CIRCUITS.join(','), '--dir', dir, '--beacon-from', 'the test\'s beacon, fixed in advance'))
  for (const name of PARTIES) printed.push(passed(await ceremony('contribute', '--dir', dir, '--name', name)))
  passed(await ceremony('finalize', '--dir', dir, '--keys', keys, '--beacon', BEACON, '--iterations', '10'))
}, 45 * MINUTES)

afterAll(() => rmSync(work, { recursive: true, force: true }))

describe('three parties and a beacon', () => {
  test('the transcript lists each party\'s contribution to each circuit with the hash contribute printed, and the beacon', () => {
    const transcript: Transcript = readJson(join(keys, 'transcript.json'))
    expect(transcript).toMatchObject({ development: true, phase1: { origin: 'development', power: 12, name: 'development_pot12.ptau' }, beacon: { value: BEACON, iterations: 10, source: 'the test\'s beacon, fixed in advance' } })
    expect(Object.keys(transcript.circuits)).toEqual(SMALL_CIRCUITS)
    for (const [i, name] of PARTIES.entries()) {
      const hashes = [...printed[i].matchAll(/ (\w+): contribution #(\d) hash ([0-9a-f]{128})$/gm)].map(([, circuit, index, hash]) => ({ circuit, index: Number(index), name, hash }))
      expect(hashes).toHaveLength(SMALL_CIRCUITS.length)
      expect(transcript.contributions.filter(entry => entry.name === name).map(({ circuit, index, hash }) => ({ circuit, index, name, hash }))).toEqual(hashes)
    }
    for (const circuit of SMALL_CIRCUITS) {
      const carried = zkeyContributions(readFileSync(join(keys, circuit, `${circuit}.zkey`)))
      expect(carried.contributions.map(entry => entry.name)).toEqual([...PARTIES, 'beacon'])
      expect(carried.contributions.at(-1)).toMatchObject({ beacon: { value: BEACON, iterations: 10 }, hash: (transcript.beacon.contributions as any)[circuit].hash })
      expect((transcript.keys as any)[circuit].zkey).toBe(sha256(join(keys, circuit, `${circuit}.zkey`)))
    }
  })

  test('verify passes and writes the verification record', async () => {
    const out = passed(await ceremony('verify', '--keys', keys, '--beacon', BEACON))
    expect(out).toMatch(/^VERIFIED: /m)
    expect(out.match(/snarkjs zkey verify \(the proving key against the constraint system and phase 1\): /g)).toHaveLength(3)
    const record = readJson(join(keys, 'verification.json'))
    expect(record).toMatchObject({ transcript: sha256(join(keys, 'transcript.json')), beacon: BEACON })
    expect(Object.keys(record.circuits)).toEqual(SMALL_CIRCUITS)
  }, 30 * MINUTES)

  test('a further contribution after finalize is refused', async () => {
    const run = await ceremony('contribute', '--dir', dir, '--name', 'mallory')
    expect(run.out).toMatch(/finalized; it takes no more contributions/)
    expect(run.code).toBe(1)
  }, 5 * MINUTES)
})

describe('verify fails on spoiled keys', () => {
  const failed = async (...args: string[]) => {
    const run = await ceremony('verify', '--no-record', ...args)
    expect(run.out).toMatch(/^NOT VERIFIED: /m)
    expect(run.code).toBe(1)
    return run.out
  }

  test('a proving key swapped for the one before the beacon', async () => {
    const copy = copyOfKeys()
    cpSync(join(dir, 'field_equality', 'field_equality_0003.zkey'), join(copy, 'field_equality', 'field_equality.zkey'))
    const out = await failed('--keys', copy, '--circuits', 'field_equality')
    expect(out).toMatch(/field_equality\/field_equality\.zkey: its SHA-256 is not the transcript's/)
    expect(out).toMatch(/carries 3 contributions, the transcript lists 4/)
    expect(existsSync(join(copy, 'verification.json'))).toBe(false)
  }, 10 * MINUTES)

  test('a proving key from another circuit', async () => {
    const copy = copyOfKeys()
    cpSync(join(keys, 'field_predicate', 'field_predicate.zkey'), join(copy, 'field_equality', 'field_equality.zkey'))
    expect(await failed('--keys', copy, '--circuits', 'field_equality')).toMatch(/field_equality\.zkey is a proving key of another circuit/)
  }, 10 * MINUTES)

  test('a contribution hash edited in the transcript', async () => {
    const copy = copyOfKeys()
    const transcript: Transcript = readJson(join(copy, 'transcript.json'))
    const edited = transcript.contributions.find(entry => entry.circuit === 'field_membership' && entry.index === 2)!
    edited.hash = edited.hash.slice(0, -1) + (edited.hash.endsWith('0') ? '1' : '0')
    writeJson(join(copy, 'transcript.json'), transcript)
    expect(await failed('--keys', copy, '--circuits', 'field_membership')).toMatch(/field_membership: contribution #2 in the proving key has hash [0-9a-f]{128}, the transcript lists/)
  }, 10 * MINUTES)

  test('a beacon other than the announced one', async () => {
    expect(await failed('--keys', keys, '--circuits', 'field_predicate', '--beacon', 'c0ffee')).toMatch(/the beacon is c0ffee0011.*, not the announced c0ffee$/m)
  }, 10 * MINUTES)

  test('a transcript naming another beacon than the keys carry', async () => {
    const copy = copyOfKeys()
    const transcript: Transcript = readJson(join(copy, 'transcript.json'))
    transcript.beacon.value = 'c0ffee'
    writeJson(join(copy, 'transcript.json'), transcript)
    expect(await failed('--keys', copy, '--circuits', 'field_predicate')).toMatch(/field_predicate: the proving key's beacon \(c0ffee0011[0-9a-f]*, 2\^10\) is not the transcript's \(c0ffee, 2\^10\)/)
  }, 10 * MINUTES)

  test('a verification key that is not the proving key\'s', async () => {
    const copy = copyOfKeys()
    cpSync(join(keys, 'field_equality', 'verification_key.json'), join(copy, 'field_predicate', 'verification_key.json'))
    expect(await failed('--keys', copy, '--circuits', 'field_predicate')).toMatch(/field_predicate\/verification_key\.json is not the verification key of field_predicate\.zkey/)
  }, 10 * MINUTES)

  test('proving-key points changed, with every file hash made to match: only snarkjs zkey verify sees it', async () => {
    const copy = copyOfKeys()
    const file = join(copy, 'field_predicate', 'field_predicate.zkey')
    const bytes = readFileSync(file)
    const [h] = sectionOf(bytes, 9)
    const first = Buffer.from(bytes.subarray(h, h + 64))
    bytes.copy(bytes, h, h + 64, h + 128)
    first.copy(bytes, h + 64)
    writeFileSync(file, bytes)
    const hash = sha256(file)
    const transcript = readJson(join(copy, 'transcript.json'))
    transcript.keys.field_predicate.zkey = hash
    writeJson(join(copy, 'transcript.json'), transcript)
    const manifest = readJson(join(copy, 'manifest.json'))
    manifest.circuits.field_predicate.files.zkey.sha256 = hash
    writeJson(join(copy, 'manifest.json'), manifest)
    const out = await failed('--keys', copy, '--circuits', 'field_predicate')
    expect(out).toMatch(/field_predicate\/field_predicate\.zkey does not verify against the constraint system and the phase-1 file \(snarkjs zkey verify\)/)
    expect(out.match(/FAILED/g)).toHaveLength(1)
  }, 15 * MINUTES)
})

/** A section of a snarkjs binary file: [offset, size]. */
function sectionOf(bytes: Buffer, type: number): [number, number] {
  for (let at = 12, i = 0; i < bytes.readUInt32LE(8); i++) {
    const size = Number(bytes.readBigUInt64LE(at + 4))
    if (bytes.readUInt32LE(at) === type) return [at + 12, size]
    at += 12 + size
  }
  throw new Error(`no section ${type}`)
}

describe('the served keys', () => {
  let server: Server
  let url: string
  beforeAll(async () => {
    const manifest = publishedManifest(readManifest(keys))
    server = createServer((req, res) => {
      const path = (req.url ?? '').replace(/^\/zk-config/, '')
      const file = path === '/transcript.json' || /^\/\w+\/[\w.]+$/.test(path) ? join(keys, path) : undefined
      if (path === '') return res.end(JSON.stringify(manifest))
      if (!file || !existsSync(file)) return res.writeHead(404).end()
      res.end(readFileSync(file))
    })
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/zk-config`
  })
  afterAll(() => new Promise(resolve => server.close(resolve)))

  test('fetch downloads them with the transcript, and verify passes on what it fetched', async () => {
    const fetched = join(work, 'fetched')
    passed(await ceremony('fetch', '--url', url, '--keys', fetched))
    for (const circuit of SMALL_CIRCUITS) expect(sha256(join(fetched, circuit, `${circuit}.zkey`))).toBe(sha256(join(keys, circuit, `${circuit}.zkey`)))
    expect(passed(await ceremony('verify', '--keys', fetched, '--circuits', 'field_predicate', '--no-record'))).toMatch(/^verified, partially: only field_predicate/m)
  }, 15 * MINUTES)
})

describe('the committed development keys (zk/keys)', () => {
  test('match their transcript, manifest and the circuits\' sources (without the 2^15 phase 1)', async () => {
    const out = passed(await ceremony('verify', '--keys', 'zk/keys', '--without-phase1'))
    expect(out).toMatch(/^verified, partially: without the phase-1 file/m)
    expect(out).not.toMatch(/FAILED/)
    const transcript: Transcript = readJson(join(root, 'zk/keys/transcript.json'))
    expect(transcript.phase1).toMatchObject({ origin: 'development', power: 15 })
    expect(new Set(transcript.contributions.filter(entry => entry.circuit === 'document_compare').map(entry => entry.name)).size).toBe(3)
  }, 15 * MINUTES)
})
