/**
 * npm run build:zk [-- --keys <folder>] [--ptau <file>] [--production]
 *
 * Compiles the circuits in zk/circuits with circom2 (WebAssembly), runs a local powers-of-tau
 * ceremony (2^15, kept in zk/build for the next run) unless --ptau names one, makes each circuit's
 * Groth16 proving and verification keys with snarkjs, and writes them with a manifest (every file's
 * SHA-256) to zk/keys. The keys it makes are development keys: one party (this machine) knows the
 * ceremony's randomness. Production runs on keys from a ceremony the operator trusts (--ptau with
 * --production), set with CHAIN_B_ZK_KEYS.
 */
import { spawnSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

const CIRCUITS = ['field_predicate', 'field_equality', 'field_membership', 'document_compare'] as const
const POWER = 15

const root = resolve(import.meta.dirname, '..')
const args = process.argv.slice(2)
const option = (name: string) => {
  const at = args.indexOf(name)
  return at >= 0 ? args[at + 1] : undefined
}
const keysDir = resolve(option('--keys') ?? join(root, 'zk/keys'))
const buildDir = join(root, 'zk/build')
const production = args.includes('--production')
const bin = (name: string) => join(root, 'node_modules/.bin', name)

function run(step: string, command: string, commandArgs: string[]): string {
  const started = Date.now()
  process.stdout.write(`  ${step} ... `)
  const result = spawnSync(bin(command), commandArgs, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  if (result.status !== 0) {
    console.log('failed')
    console.error(result.stdout, result.stderr)
    process.exit(1)
  }
  console.log(`${((Date.now() - started) / 1000).toFixed(1)} s`)
  return result.stdout
}

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex')
const entropy = () => randomBytes(32).toString('hex')

function ceremony(): string {
  const given = option('--ptau')
  if (given) return resolve(given)
  const final = join(buildDir, `pot${POWER}_final.ptau`)
  if (existsSync(final)) {
    console.log(`powers of tau: reusing ${final}`)
    return final
  }
  if (production) throw new Error('--production needs --ptau <file> from a ceremony the operator trusts')
  console.log(`powers of tau 2^${POWER} (a local, single-party ceremony: development only; the last step takes several minutes)`)
  const at = (name: string) => join(buildDir, name)
  run('new', 'snarkjs', ['powersoftau', 'new', 'bn128', String(POWER), at('pot_0000.ptau')])
  run('contribute', 'snarkjs', ['powersoftau', 'contribute', at('pot_0000.ptau'), at('pot_0001.ptau'), '--name=development', `-e=${entropy()}`])
  run('beacon', 'snarkjs', ['powersoftau', 'beacon', at('pot_0001.ptau'), at('pot_beacon.ptau'), entropy(), '10', '-n=beacon'])
  run('prepare phase 2', 'snarkjs', ['powersoftau', 'prepare', 'phase2', at('pot_beacon.ptau'), final])
  return final
}

function main() {
  mkdirSync(buildDir, { recursive: true })
  const ptau = ceremony()
  const manifest = { development: !production, ceremony: `powers of tau 2^${POWER}, sha256 ${sha256(ptau)}`, circuits: {} as Record<string, unknown> }
  const library = readFileSync(join(root, 'zk/circuits/content.circom'))
  for (const id of CIRCUITS) {
    console.log(`${id}:`)
    const source = join(root, 'zk/circuits', `${id}.circom`)
    const out = join(buildDir, id)
    mkdirSync(out, { recursive: true })
    run('compile', 'circom2', [source, '--r1cs', '--wasm', '--O2', '-l', join(root, 'node_modules'), '-o', out])
    const info = run('r1cs info', 'snarkjs', ['r1cs', 'info', join(out, `${id}.r1cs`)])
    const constraints = Number(/# of Constraints: (\d+)/.exec(info)?.[1] ?? 0)
    run('groth16 setup', 'snarkjs', ['groth16', 'setup', join(out, `${id}.r1cs`), ptau, join(out, `${id}_0000.zkey`)])
    run('key contribution', 'snarkjs', ['zkey', 'contribute', join(out, `${id}_0000.zkey`), join(out, `${id}.zkey`), '--name=development', `-e=${entropy()}`])
    run('verification key', 'snarkjs', ['zkey', 'export', 'verificationkey', join(out, `${id}.zkey`), join(out, 'verification_key.json')])
    const target = join(keysDir, id)
    mkdirSync(target, { recursive: true })
    const files: Record<string, { name: string; sha256: string; size: number }> = {}
    for (const [role, from, name] of [['wasm', join(out, `${id}_js`, `${id}.wasm`), `${id}.wasm`], ['zkey', join(out, `${id}.zkey`), `${id}.zkey`], ['verificationKey', join(out, 'verification_key.json'), 'verification_key.json']] as const) {
      copyFileSync(from, join(target, name))
      files[role] = { name, sha256: sha256(from), size: statSync(from).size }
    }
    const circuitHash = createHash('sha256').update(readFileSync(source)).update(library).digest('hex')
    const publicSignals = (JSON.parse(readFileSync(join(out, 'verification_key.json'), 'utf8')) as { nPublic: number }).nPublic
    manifest.circuits[id] = { source: circuitHash, constraints, nPublic: publicSignals, files }
    console.log(`  ${constraints} constraints; circuit sha256 ${circuitHash}; proving key ${files.zkey.size} bytes, sha256 ${files.zkey.sha256}`)
  }
  writeFileSync(join(keysDir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n')
  console.log(`${manifest.development ? 'development ' : ''}keys written to ${keysDir}`)
}

main()
