import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { productionKeysProblem } from '../srv/chains/chain-b/config.ts'
import type { KeysManifest } from '../srv/chains/chain-b/zk/circuits.ts'

/**
 * The circuits' keys the artefact carries: the operator's (--zk-keys), which must be what a
 * production start accepts (a build never ships keys the start would refuse), or the project's
 * zk/keys: the committed development keys (said so), or the operator's keys put there, checked alike.
 */
export function zkKeysToShip(given: string | undefined, projectKeys: string, log: (line: string) => void = console.log): string {
  const keysDir = resolve(given ?? projectKeys)
  const manifestFile = join(keysDir, 'manifest.json')
  if (!existsSync(manifestFile)) {
    if (given) throw new Error(`--zk-keys ${given}: no manifest.json there (the keys folder of a finalized ceremony)`)
    return keysDir
  }
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as KeysManifest
  const problem = productionKeysProblem({ keysDir, allowDevelopmentKeys: false, provers: 1 }, manifest)
  if (!problem) return keysDir
  if (given || !manifest.development) throw new Error(`${given ? `--zk-keys ${given}` : keysDir}: ${problem}`)
  log(`zkKeys: ${keysDir} holds development keys: production refuses them unless CHAIN_B_ZK_ALLOW_DEVELOPMENT_KEYS=true; ship the operator's keys with --zk-keys <folder> (docs/deployment.md)`)
  return keysDir
}
