import cds from '@sap/cds'
import { spawnSync } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { chainBOptions, checkZkKeys, defaultProvers, MissingSecretError, zkConfig, type ZkConfig } from '../../../srv/chains/chain-b/config.ts'
import { committedKeys, productionKeys, readJson, removeKeyFixtures, type Spoil } from '../../support/zk-keys.ts'

/**
 * The zero-knowledge keys' settings: the documented variables mapped into zkConfig, and which keys
 * a start may use (production refuses the development ceremony's keys unless told otherwise, and
 * any keys whose ceremony was not verified).
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
const config = (allowDevelopmentKeys: boolean, keysDir = '/keys'): ZkConfig => ({ keysDir, allowDevelopmentKeys, provers: 1 })

describe('zkConfig', () => {
  test('defaults: zk/keys in the project, development keys not allowed, provers as the container holds them', () => {
    expect(zkConfig(chainBOptions({}, {}))).toEqual({ keysDir: resolve(cds.root, 'zk/keys'), allowDevelopmentKeys: false, provers: defaultProvers() })
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

  test('production with keys that say they are not development keys, but have no transcript: refused', () => {
    expect(() => withProfiles(['production'], () => checkZkKeys(config(false), OPERATOR_KEYS))).toThrow(/keys in \/keys are not from a verified ceremony: there is no ceremony transcript \(transcript\.json\); refusing to start in production/)
    expect(() => withProfiles(['production'], () => checkZkKeys(config(true), OPERATOR_KEYS))).toThrow(MissingSecretError)
  })

  test.each([['development'], ['test']])('%s with keys without a transcript: accepted', profile => {
    expect(withProfiles([profile], () => checkZkKeys(config(false), OPERATOR_KEYS))).toBeUndefined()
  })

  test.each([['development'], ['test']])('%s with development keys: accepted', profile => {
    expect(withProfiles([profile], () => checkZkKeys(config(false), DEVELOPMENT_KEYS))).toBeUndefined()
  })
})

afterAll(removeKeyFixtures)

const productionStart = (keysDir: string, allowDevelopmentKeys = false) =>
  withProfiles(['production'], () => checkZkKeys(config(allowDevelopmentKeys, keysDir), readJson(join(keysDir, 'manifest.json'))))

describe('checkZkKeys: keys from a verified ceremony', () => {
  test('a transcript on a published phase 1 with three contributions and a beacon, verified, the files unchanged: accepted', () => {
    expect(productionStart(productionKeys())).toBeUndefined()
  })

  test.each<[string, Spoil, RegExp]>([
    ['never verified', { verified: false }, /it was never verified \(no verification\.json: run npm run ceremony -- verify --keys /],
    ['the transcript changed after verify', { afterVerify: transcript => void (transcript.startedAt = 'later') }, /verification\.json is not the verification of this transcript\.json/],
    ['the development phase 1', { transcript: transcript => Object.assign(transcript.phase1, { origin: 'development' }) }, /its ceremony ran on the development phase 1, whose toxic waste is public/],
    ['a phase 1 said to be published that is not', { transcript: transcript => void (transcript.phase1.blake2b = '00'.repeat(64)) }, /its phase 1 \(powersOfTau28_hez_final_15\.ptau\) is not the published file of power 15/],
    ['one contribution per circuit', { transcript: transcript => void (transcript.contributions = transcript.contributions.filter(entry => entry.index === 1)) }, /field_predicate has 1 contribution; production needs at least 2 besides the beacon/],
    ['no beacon', { transcript: transcript => void (transcript.beacon = { source: '' }) }, /its ceremony has no beacon from an announced public value/],
    ['a proving key swapped', { files: dir => { rmSync(join(dir, 'field_equality/field_equality.zkey')); writeFileSync(join(dir, 'field_equality/field_equality.zkey'), readFileSync(join(committedKeys, 'field_predicate/field_predicate.zkey'))) } },
      /field_equality\/field_equality\.zkey is not the file the ceremony made and verify checked/],
    ['a contribution hash edited in the transcript and the record alike', {
      transcript: (transcript, record) => {
        const first = transcript.contributions.find(entry => entry.circuit === 'field_predicate')!
        first.hash = first.hash.replace(/^./, first.hash.startsWith('0') ? '1' : '0')
        record.circuits.field_predicate!.contributions[0] = first.hash
      },
    }, /the contributions in field_predicate\/field_predicate\.zkey are not those of the transcript/],
  ])('%s: refused, saying why', (_, spoil, reason) => {
    const keysDir = productionKeys(spoil)
    expect(() => productionStart(keysDir)).toThrow(MissingSecretError)
    expect(() => productionStart(keysDir)).toThrow(reason)
    expect(() => productionStart(keysDir, true)).toThrow(reason)
  })

  test('no transcript at all: refused, and CHAIN_B_ZK_ALLOW_DEVELOPMENT_KEYS does not help keys that are not development keys', () => {
    const keysDir = productionKeys({ files: dir => rmSync(join(dir, 'transcript.json')) })
    expect(() => productionStart(keysDir, true)).toThrow(/not from a verified ceremony: there is no ceremony transcript/)
  })
})

/**
 * The bootstrap's chain-B step in a production process of its own (srv/server.ts connectChainB):
 * on the committed development keys it ends the process with one line, unless told to allow them;
 * on other keys, unless their ceremony was verified.
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

  test('on keys whose ceremony was never verified it ends with one line saying so, even with CHAIN_B_ZK_ALLOW_DEVELOPMENT_KEYS=true', () => {
    const run = start({ CHAIN_B_ZK_KEYS: productionKeys({ verified: false }), CHAIN_B_ZK_ALLOW_DEVELOPMENT_KEYS: 'true' })
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(/are not from a verified ceremony: it was never verified.*refusing to start in production/)])
    expect(run.status).toBe(1)
  })

  test('on keys from a verified ceremony it connects', () => {
    const run = start({ CHAIN_B_ZK_KEYS: productionKeys() })
    expect(JSON.parse(/^CONNECTED (.*)$/m.exec(run.stdout)?.[1] ?? 'null')).toEqual({ profiles: ['production'], development: false })
    expect(run.status).toBe(0)
  })
})
