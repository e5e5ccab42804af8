/**
 * npm run build:zk [-- --keys <folder>]
 *
 * Compile and the development ceremony in one go, with the code of `npm run ceremony`
 * (zk/ceremony.ts): init on the development phase 1 (made in zk/build/phase1 when it is not there
 * yet), three development contributions, the development beacon, finalize into the keys folder
 * (zk/keys by default: the keys, manifest.json and transcript.json), then verify, which writes
 * verification.json. The keys are development keys: the development phase 1's toxic waste is
 * public, so anyone can forge proofs under them, and production refuses them. Production keys come
 * from a ceremony with several parties on a published phase 1 (docs/security.md, Ceremony).
 */
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { CeremonyError, DEVELOPMENT_BEACON, endCurves, runCeremony } from './ceremony.ts'

const root = resolve(import.meta.dirname, '..')

async function main(): Promise<boolean> {
  const { values: args } = parseArgs({ options: { keys: { type: 'string' }, production: { type: 'boolean' }, ptau: { type: 'string' } } })
  if (args.production || args.ptau !== undefined)
    throw new CeremonyError('build:zk makes development keys only; production keys come from a ceremony with several parties: npm run ceremony -- init --ptau <published phase 1> --beacon-from <text>, then contribute, finalize and verify (docs/security.md, Ceremony); the production build ships them: npm run build:cf -- --zk-keys <the ceremony\'s keys folder> (docs/deployment.md)')
  const keys = resolve(args.keys ?? join(root, 'zk/keys'))
  const dir = join(root, 'zk/build/ceremony-development')
  const started = Date.now()
  const steps: string[][] = [
    ['init', '--dir', dir, '--force', '--beacon-from', DEVELOPMENT_BEACON.source],
    ...[1, 2, 3].map(n => ['contribute', '--dir', dir, '--name', `development ${n}`]),
    ['finalize', '--dir', dir, '--keys', keys, '--beacon', DEVELOPMENT_BEACON.value, '--iterations', String(DEVELOPMENT_BEACON.iterations)],
    ['verify', '--keys', keys],
  ]
  for (const step of steps) {
    console.log(`\n== npm run ceremony -- ${step[0]}`)
    if (!(await runCeremony(step))) return false
  }
  console.log(`\nbuild:zk: ${((Date.now() - started) / 1000).toFixed(0)} s`)
  return true
}

main()
  .then(ok => (process.exitCode = ok ? 0 : 1), error => {
    console.error(error instanceof CeremonyError ? `build:zk: ${error.message}` : error)
    process.exitCode = 1
  })
  .finally(endCurves)
