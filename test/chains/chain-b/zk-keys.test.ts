import cds from '@sap/cds'
import { spawnSync } from 'node:child_process'
import { availableParallelism } from 'node:os'
import { join, resolve } from 'node:path'
import { chainBOptions, checkZkKeys, MissingSecretError, zkConfig, type ZkConfig } from '../../../srv/chains/chain-b/config.ts'

/**
 * The zero-knowledge keys' settings: the documented variables mapped into zkConfig, and which keys
 * a start may use (production refuses the development ceremony's keys unless told otherwise).
 */

const root = join(__dirname, '..', '..', '..')
const withProfiles = <T>(profiles: string[], fn: () => T): T => {
  const env = cds.env as any
  const saved = env.profiles
  env.profiles = profiles
  try {
    return fn()
  } finally {
    env.profiles = saved
  }
}

const DEVELOPMENT_KEYS = { development: true }
const OPERATOR_KEYS = { development: false }
const config = (allowDevelopmentKeys: boolean): ZkConfig => ({ keysDir: '/keys', allowDevelopmentKeys, provers: 1 })

describe('zkConfig', () => {
  test('defaults: zk/keys in the project, development keys not allowed, one prover per core', () => {
    expect(zkConfig(chainBOptions({}, {}))).toEqual({ keysDir: resolve(cds.root, 'zk/keys'), allowDevelopmentKeys: false, provers: Math.max(1, availableParallelism() - 1) })
  })

  test('CHAIN_B_ZK_KEYS, CHAIN_B_ZK_ALLOW_DEVELOPMENT_KEYS and CHAIN_B_ZK_PROVERS set keysDir (relative to the project), allowDevelopmentKeys and provers', () => {
    const env = { CHAIN_B_ZK_KEYS: 'operator/keys', CHAIN_B_ZK_ALLOW_DEVELOPMENT_KEYS: 'true', CHAIN_B_ZK_PROVERS: '3' }
    expect(zkConfig(chainBOptions({}, env))).toEqual({ keysDir: resolve(cds.root, 'operator/keys'), allowDevelopmentKeys: true, provers: 3 })
  })

  test('an absolute CHAIN_B_ZK_KEYS stays as it is', () => {
    expect(zkConfig(chainBOptions({}, { CHAIN_B_ZK_KEYS: '/srv/keys' })).keysDir).toBe('/srv/keys')
  })

  test('the variables win over cds.requires[chain-b].zk, which applies when they are not set', () => {
    const requires = { 'chain-b': { zk: { keys: 'configured/keys', provers: 2, allowDevelopmentKeys: true } } }
    expect(zkConfig(chainBOptions(requires, {}))).toEqual({ keysDir: resolve(cds.root, 'configured/keys'), allowDevelopmentKeys: true, provers: 2 })
    expect(zkConfig(chainBOptions(requires, { CHAIN_B_ZK_PROVERS: '5', CHAIN_B_ZK_ALLOW_DEVELOPMENT_KEYS: 'false' }))).toMatchObject({ allowDevelopmentKeys: false, provers: 5 })
  })

  test.each(['0', '-1', '1.5'])('CHAIN_B_ZK_PROVERS=%s is refused, naming the variable', provers => {
    expect(() => zkConfig(chainBOptions({}, { CHAIN_B_ZK_PROVERS: provers }))).toThrow(/zk\.provers \(CHAIN_B_ZK_PROVERS\) must be a whole number of threads/)
  })

  test('CHAIN_B_ZK_PROVERS that is no number is refused, naming the variable', () => {
    expect(() => zkConfig(chainBOptions({}, { CHAIN_B_ZK_PROVERS: 'many' }))).toThrow(/CHAIN_B_ZK_PROVERS\) must be a number/)
  })
})

describe('checkZkKeys', () => {
  test('production with development keys: refused, naming both ways out', () => {
    expect(() => withProfiles(['production'], () => checkZkKeys(config(false), DEVELOPMENT_KEYS))).toThrow(MissingSecretError)
    expect(() => withProfiles(['production'], () => checkZkKeys(config(false), DEVELOPMENT_KEYS))).toThrow(/development keys.*CHAIN_B_ZK_KEYS.*CHAIN_B_ZK_ALLOW_DEVELOPMENT_KEYS=true/)
  })

  test('production with development keys and allowDevelopmentKeys: accepted', () => {
    expect(withProfiles(['production'], () => checkZkKeys(config(true), DEVELOPMENT_KEYS))).toBeUndefined()
  })

  test('production with the operator\'s keys: accepted', () => {
    expect(withProfiles(['production'], () => checkZkKeys(config(false), OPERATOR_KEYS))).toBeUndefined()
  })

  test.each([['development'], ['test']])('%s with development keys: accepted', profile => {
    expect(withProfiles([profile], () => checkZkKeys(config(false), DEVELOPMENT_KEYS))).toBeUndefined()
  })
})

/**
 * The bootstrap's chain-B step in a production process of its own (srv/server.ts connectChainB):
 * on the committed development keys it ends the process with one line, unless told to allow them.
 */
describe('a production start on the development keys', () => {
  const PROBE = `
;(async () => {
  const cds = require('@sap/cds')
  const { connectChainB } = await import(require('node:url').pathToFileURL('srv/server.ts').href)
  await connectChainB()
  const chainB = await cds.connect.to('chain-b')
  process.stdout.write('CONNECTED ' + JSON.stringify({ profiles: cds.env.profiles, development: chainB.zk.manifest.development }) + '\\n')
  process.exit(0)
})().catch(error => { console.error(error); process.exit(2) })
`
  const start = (env: Record<string, string>) => {
    const base = { ...process.env }
    for (const name of Object.keys(base)) if (/^(NODE_ENV|CDS_|cds_|CHAIN_B_)/.test(name)) delete base[name]
    return spawnSync(process.execPath, ['-e', PROBE], {
      cwd: root, encoding: 'utf8', timeout: 60_000,
      env: {
        ...base, CDS_TYPESCRIPT: 'true', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON',
        CDS_ENV: 'production', CHAIN_B_ATTESTER_SECRET: 'probe-attester', CHAIN_B_SPONSOR_SEED: 'probe-sponsor', ...env,
      },
    })
  }

  test('ends with exit code 1 and one line naming the variables', () => {
    const run = start({})
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(/development keys; refusing to start in production.*CHAIN_B_ZK_ALLOW_DEVELOPMENT_KEYS=true/)])
    expect(run.stdout).not.toContain('CONNECTED')
    expect(run.status).toBe(1)
  })

  test('with CHAIN_B_ZK_ALLOW_DEVELOPMENT_KEYS=true it connects', () => {
    const run = start({ CHAIN_B_ZK_ALLOW_DEVELOPMENT_KEYS: 'true' })
    expect(JSON.parse(/^CONNECTED (.*)$/m.exec(run.stdout)?.[1] ?? 'null')).toEqual({ profiles: ['production'], development: true })
    expect(run.status).toBe(0)
  })
})
