import cds from '@sap/cds'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { chainBConfig, chainBOptions, chainBSecrets, MissingSecretError, NETWORK_INDEXERS } from '../../../srv/chains/chain-b/config.ts'

/** chain-b's options: documented variables over cds.requires, network URLs, finality, secrets per profile, the standalone CLI. */

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

describe('chain-b configuration', () => {
  it('maps the documented variables over cds.requires, the environment winning', () => {
    const options = chainBOptions({ 'chain-b': { kind: 'midnight-indexer', network: 'preprod', finalityDepth: 5 } }, { CHAIN_B_NETWORK: 'preview', CHAIN_B_DEVNET_BLOCK_TIME_MS: '250', CHAIN_B_ATTESTER_SECRET: 's' })
    expect(options).toMatchObject({ kind: 'midnight-indexer', network: 'preview', finalityDepth: 5, attesterSecret: 's', devnetOptions: { blockTimeMs: '250' } })
  })

  it('answers the public indexer of each network, its WebSocket beside it, and no submission API', () => {
    for (const network of ['preprod', 'preview', 'mainnet']) {
      const config = chainBConfig({ network })
      expect(config).toMatchObject({ network, indexerUrl: NETWORK_INDEXERS[network], indexerWsUrl: NETWORK_INDEXERS[network].replace('https', 'wss') + '/ws', submitUrl: undefined, vaultAddress: undefined })
    }
    expect(chainBConfig({ network: 'preprod', vaultAddress: 'AB'.repeat(32) }).vaultAddress).toBe('ab'.repeat(32))
    expect(() => chainBConfig({ network: 'moon' })).toThrow(/must be one of devnet, preprod, preview, mainnet/)
  })

  it('on a standalone devnet: its URLs, and its seed (whose deployment gives the vault address when none is set)', () => {
    const config = chainBConfig({ network: 'devnet', indexerUrl: 'http://127.0.0.1:8088/api/v4/graphql', devnetOptions: { seed: 'x' } })
    expect(config).toMatchObject({ submitUrl: 'http://127.0.0.1:8088/api/v4/submit', indexerWsUrl: 'ws://127.0.0.1:8088/api/v4/graphql/ws', vaultAddress: undefined, devnetSeed: 'x' })
  })

  it('finality depth: 1 in tests, 3 otherwise, whole numbers only', () => {
    expect(withProfiles(['test'], () => chainBConfig({}).finalityDepth)).toBe(1)
    expect(withProfiles(['development'], () => chainBConfig({}).finalityDepth)).toBe(3)
    expect(() => chainBConfig({ finalityDepth: '-1' })).toThrow(/finalityDepth \(CHAIN_B_FINALITY_DEPTH\) must be a whole number/)
  })

  it('secrets: fixed in tests, required in production (naming the variable)', () => {
    expect(withProfiles(['test'], () => chainBSecrets({}))).toEqual(withProfiles(['test'], () => chainBSecrets({})))
    expect(() => withProfiles(['production'], () => chainBSecrets({ sponsorSeed: 's' }))).toThrow(MissingSecretError)
    expect(() => withProfiles(['production'], () => chainBSecrets({ sponsorSeed: 's' }))).toThrow(/CHAIN_B_ATTESTER_SECRET/)
    expect(() => withProfiles(['production'], () => chainBSecrets({ attesterSecret: 'a' }))).toThrow(/CHAIN_B_SPONSOR_SEED/)
    expect(withProfiles(['production'], () => chainBSecrets({ attesterSecret: 'a', sponsorSeed: 's' }))).toEqual({ attesterSecret: 'a', sponsorSeed: 's' })
  })
})

describe('npm run devnet -- --chain b', () => {
  const run = (args: string[], env: Record<string, string> = {}) => spawnSync(process.execPath, ['devnet/cli.ts', ...args], {
    cwd: root, encoding: 'utf8', timeout: 30_000, env: { ...process.env, NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', ...env },
  })

  it('prints its commands, and refuses production', () => {
    expect(run(['--chain', 'b', 'help']).stdout).toMatch(/--chain b <command>[\s\S]*reset/)
    const refused = run(['--chain=b', 'serve'], { NODE_ENV: 'production' })
    expect(refused.status).toBe(1)
    expect(refused.stderr).toMatch(/chain-B devnet refuses to run in production/)
    expect(run(['--chain', 'c', 'help']).status).toBe(2)
  })
})
