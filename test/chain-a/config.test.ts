import cds from '@sap/cds'
import { join } from 'node:path'
import { BlockfrostAdapter } from '../../srv/chains/chain-a/blockfrost.ts'
import {
  DEFAULT_TTL_SECONDS, ENVIRONMENT, TTL_KINDS, applyChainAEnvironment, chainAConfig, chainAOptions, devnetConfig,
} from '../../srv/chains/chain-a/config.ts'
import { ApiError } from '../../srv/lib/errors.ts'
import { answerFromSchemas, bodyFor } from './support/openapi-server.ts'
import { sendJson, sendUpstreamError, startTestServer, upstreamConfig, type TestServer } from './support/test-server.ts'

/* How the chain-a options are configured, and how the adapter's configuration decides the upstream, its credentials and its retries. */

const CBOR = Uint8Array.from([0x84, 0xa4, 0x00, 0x81])

let server: TestServer
let status = 200

beforeAll(async () => {
  server = await startTestServer((request, response) => {
    if (status !== 200) return sendUpstreamError(response, status, 'An unexpected response was received from the backend.')
    answerFromSchemas(request, response)
  })
})
afterAll(() => server.close())
beforeEach(() => {
  server.requests.splice(0)
  status = 200
})

function constructionError(config: Parameters<typeof upstreamConfig>[0]): ApiError {
  try {
    new BlockfrostAdapter(upstreamConfig(config))
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError)
    return error as ApiError
  }
  throw new Error('the adapter was constructed')
}

describe('choosing the upstream', () => {
  it('without url and project id fails with a clear configuration error', () => {
    const error = constructionError({ network: 'preprod' })
    expect(error.code).toBe('UPSTREAM_NOT_CONFIGURED')
    expect(error.message).toContain('BLOCKFROST_PROJECT_ID')
    expect(error.message).toContain('BLOCKFROST_URL')
  })

  it('hosted Blockfrost serves only preprod, preview and mainnet', () => {
    const error = constructionError({ network: 'devnet', projectId: 'preprodAbc123' })
    expect(error.code).toBe('UPSTREAM_NOT_CONFIGURED')
    expect(error.message).toContain("'devnet'")
  })

  it.each(['preprod', 'preview', 'mainnet'])('a project id with network %s names that network', network => {
    expect(new BlockfrostAdapter(upstreamConfig({ network, projectId: `${network}Abc123` })).networkName).toBe(network)
  })

  it('a url is the upstream, under the configured network name, without a project id', async () => {
    const adapter = new BlockfrostAdapter(upstreamConfig({ url: server.url, network: 'devnet' }))
    expect(adapter.networkName).toBe('devnet')
    expect((await adapter.genesis()).networkMagic).toBe(764824073)
    expect(server.requests.map(r => r.path)).toEqual(['/genesis'])
    expect(server.requests[0].headers.project_id).toBeUndefined()
  })

  it('a url with a project id sends the project id', async () => {
    const adapter = new BlockfrostAdapter(upstreamConfig({ url: server.url, network: 'preprod', projectId: 'preprodAbc123' }))
    expect(adapter.networkName).toBe('preprod')
    await adapter.tip()
    expect(server.requests[0].headers.project_id).toBe('preprodAbc123')
  })

  it('a url with a base path keeps it', async () => {
    const adapter = new BlockfrostAdapter(upstreamConfig({ url: `${server.url}/api/v0` }))
    await expect(adapter.tip()).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' })
    expect(server.requests[0].path).toBe('/api/v0/blocks/latest')
  })
})

describe('retries', () => {
  beforeEach(() => {
    status = 500
  })

  it('0 retries make exactly one request on a 500', async () => {
    await expect(new BlockfrostAdapter(upstreamConfig({ url: server.url, retries: 0 })).tip()).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' })
    expect(server.requests).toHaveLength(1)
  })

  it('1 retry makes two requests on a read', async () => {
    await expect(new BlockfrostAdapter(upstreamConfig({ url: server.url, retries: 1 })).tip()).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' })
    expect(server.requests).toHaveLength(2)
  })

  it('a read that succeeds on the retry answers normally', async () => {
    const flaky = await startTestServer((request, response) => {
      if (flaky.requests.length === 1) return sendUpstreamError(response, 502, 'Bad Gateway')
      sendJson(response, 200, bodyFor(request.path))
    })
    try {
      const tip = await new BlockfrostAdapter(upstreamConfig({ url: flaky.url, retries: 1 })).tip()
      expect(tip.height).toBe(15243593)
      expect(flaky.requests).toHaveLength(2)
    } finally {
      await flaky.close()
    }
  })

  it('submit is never retried', async () => {
    await expect(new BlockfrostAdapter(upstreamConfig({ url: server.url, retries: 1 })).submit(CBOR)).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' })
    expect(server.requests).toHaveLength(1)
    expect(server.requests[0].method).toBe('POST')
  })

  it('a 404 is an answer, not a failure to retry', async () => {
    status = 404
    expect(await new BlockfrostAdapter(upstreamConfig({ url: server.url, retries: 2 })).address('addr_test1x')).toBeNull()
    expect(server.requests).toHaveLength(1)
  })
})

describe('retries when the network fails', () => {
  it('an unreachable upstream answers UPSTREAM_UNAVAILABLE after the retries, without an uncaught error', async () => {
    const uncaught: unknown[] = []
    const record = (error: unknown) => uncaught.push(error)
    process.on('uncaughtException', record)
    try {
      const adapter = new BlockfrostAdapter(upstreamConfig({ url: 'http://127.0.0.1:1', retries: 2 }))
      await expect(adapter.tip()).rejects.toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE' })
      await expect(adapter.transaction('ab'.repeat(32))).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' })
      await new Promise(resolve => setTimeout(resolve, 300))
      expect(uncaught).toEqual([])
    } finally {
      process.off('uncaughtException', record)
    }
  })
})

describe('the options of cds.requires[chain-a]', () => {
  const packageJson = { 'chain-a': { kind: 'blockfrost', network: 'preprod', devnet: true, ttl: { pool: 600 }, devnetOptions: { blockTimeMs: 0 } } }
  const optionsWith = (env: NodeJS.ProcessEnv) => chainAOptions(structuredClone(packageJson), env)

  // Every documented variable (README, Configuration) and what it sets, resolved.
  type Row = [variable: string, value: string, option: string, resolved: (env: NodeJS.ProcessEnv) => unknown, expected: unknown]
  const DOCUMENTED: Row[] = [
    ['CHAIN_A_KIND', 'koios', 'kind', env => chainAConfig(optionsWith(env)).kind, 'koios'],
    ['CHAIN_A_NETWORK', 'mainnet', 'network', env => chainAConfig(optionsWith(env)).network, 'mainnet'],
    ['KOIOS_URL', 'http://127.0.0.1:3001/api/v1', 'credentials.koiosUrl', env => chainAConfig(optionsWith(env)).koiosUrl, 'http://127.0.0.1:3001/api/v1'],
    ['KOIOS_TOKEN', 'eyJ0b2tlbiJ9', 'credentials.koiosToken', env => chainAConfig(optionsWith(env)).koiosToken, 'eyJ0b2tlbiJ9'],
    ['OGMIOS_URL', 'ws://127.0.0.1:1337', 'credentials.ogmiosUrl', env => chainAConfig(optionsWith(env)).ogmiosUrl, 'ws://127.0.0.1:1337'],
    ['KUPO_URL', 'http://127.0.0.1:1442', 'credentials.kupoUrl', env => chainAConfig(optionsWith(env)).kupoUrl, 'http://127.0.0.1:1442'],
    ['OGMIOS_SYNC_FROM', `1234.${'ab'.repeat(32)}`, 'ogmiosSyncFrom', env => chainAConfig(optionsWith(env)).ogmiosSyncFrom, { slot: 1234, id: 'ab'.repeat(32) }],
    ['OGMIOS_INDEX_BLOCKS', '500', 'ogmiosIndexBlocks', env => chainAConfig(optionsWith(env)).ogmiosIndexBlocks, 500],
    ['BLOCKFROST_PROJECT_ID', 'mainnetAbc', 'credentials.projectId', env => chainAConfig(optionsWith(env)).projectId, 'mainnetAbc'],
    ['BLOCKFROST_URL', 'http://127.0.0.1:3001', 'credentials.url', env => chainAConfig(optionsWith(env)).url, 'http://127.0.0.1:3001'],
    ['CHAIN_A_DEVNET', 'false', 'devnet', env => chainAConfig(optionsWith(env)).devnet, false],
    ['CHAIN_A_TIMEOUT_MS', '2500', 'timeoutMs', env => chainAConfig(optionsWith(env)).timeoutMs, 2500],
    ['CHAIN_A_RETRIES', '3', 'retries', env => chainAConfig(optionsWith(env)).retries, 3],
    ['CHAIN_A_CLIENT_RATE_LIMIT', 'true', 'clientRateLimit', env => chainAConfig(optionsWith(env)).clientRateLimit, true],
    ['CHAIN_A_SPEND_LOCK_S', '60', 'spendLockSeconds', env => chainAConfig(optionsWith(env)).spendLockSeconds, 60],
    ['CHAIN_A_EXPIRY_INTERVAL_MS', '250', 'expiryIntervalMs', env => chainAConfig(optionsWith(env)).expiryIntervalMs, 250],
    ['CHAIN_A_BUILDER', 'buildooor', 'builder', env => chainAConfig(optionsWith(env)).builder, 'buildooor'],
    ...TTL_KINDS.map((kind): Row => [
      `CHAIN_A_TTL_${kind.replace(/[A-Z]/g, c => '_' + c).toUpperCase()}`, '7', `ttl.${kind}`, env => chainAConfig(optionsWith(env)).ttlSeconds[kind], 7,
    ]),
    ['DEVNET_SEED', 'other-seed', 'devnetOptions.seed', env => devnetConfig(optionsWith(env)).seed, 'other-seed'],
    ['DEVNET_BLOCK_TIME_MS', '500', 'devnetOptions.blockTimeMs', env => devnetConfig(optionsWith(env)).blockTimeMs, 500],
    ['DEVNET_SLOT_LENGTH_MS', '200', 'devnetOptions.slotLengthMs', env => devnetConfig(optionsWith(env)).slotLengthMs, 200],
    ['DEVNET_EPOCH_LENGTH', '100', 'devnetOptions.epochLength', env => devnetConfig(optionsWith(env)).epochLength, 100],
    ['DEVNET_SECURITY_PARAM', '5', 'devnetOptions.securityParam', env => devnetConfig(optionsWith(env)).securityParam, 5],
    ['DEVNET_ACTIVITY', 'off', 'devnetOptions.activity', env => devnetConfig(optionsWith(env)).activity, false],
    ['DEVNET_WALLETS', '6', 'devnetOptions.wallets', env => devnetConfig(optionsWith(env)).wallets, 6],
    ['DEVNET_LATENCY_MS', '40', 'devnetOptions.latencyMs', env => devnetConfig(optionsWith(env)).latencyMs, 40],
    ['DEVNET_STATE_DIR', 'tmp/chain', 'devnetOptions.stateDir', env => devnetConfig(optionsWith(env)).stateDir, join(cds.root, 'tmp', 'chain')],
  ]

  it('the table covers every documented variable, once', () => {
    expect(DOCUMENTED.map(([variable]) => variable).sort()).toEqual(Object.keys(ENVIRONMENT).sort())
  })

  it.each(DOCUMENTED)('%s=%s sets %s', (variable, value, option, resolved, expected) => {
    const env = { [variable]: value }
    expect(ENVIRONMENT[variable]).toBe(option)
    expect(option.split('.').reduce<any>((node, key) => node?.[key], optionsWith(env))).toBe(value)
    expect(resolved(env)).toEqual(expected)
  })

  it('a variable wins over package.json; unset or empty, package.json counts, then the default', () => {
    expect(chainAConfig(optionsWith({ CHAIN_A_TTL_POOL: '30' })).ttlSeconds.pool).toBe(30)
    expect(chainAConfig(optionsWith({ CHAIN_A_TTL_POOL: '' })).ttlSeconds.pool).toBe(600)
    expect(chainAConfig(optionsWith({})).ttlSeconds).toEqual({ ...DEFAULT_TTL_SECONDS, pool: 600 })
    expect(devnetConfig(optionsWith({})).blockTimeMs).toBe(0)
    expect(optionsWith({ BLOCKFROST_URL: 'http://up' })).toMatchObject({ kind: 'blockfrost', network: 'preprod', credentials: { url: 'http://up' } })
  })

  it('a malformed number names the option and its variable', () => {
    expect(() => chainAConfig(optionsWith({ CHAIN_A_TIMEOUT_MS: 'soon' }))).toThrow("Setting cds.requires['chain-a'].timeoutMs (CHAIN_A_TIMEOUT_MS) must be a number, got 'soon'")
    expect(() => chainAConfig(optionsWith({ CHAIN_A_SPEND_LOCK_S: '0' }))).toThrow("cds.requires['chain-a'].spendLockSeconds (CHAIN_A_SPEND_LOCK_S) must be a positive number of seconds, got '0'")
    expect(() => devnetConfig(optionsWith({ DEVNET_WALLETS: 'many' }))).toThrow('devnetOptions.wallets (DEVNET_WALLETS) must be a number')
  })

  it("CAP's own variables reach chain-a too: CAP files CDS_REQUIRES_CHAIN_A_* under requires.chain.a", () => {
    const saved = { ...process.env }
    try {
      Object.assign(process.env, { CDS_REQUIRES_CHAIN_A_NETWORK: 'preview', cds_requires_chain_a_credentials_url: 'http://127.0.0.1:3999', CHAIN_A_RETRIES: '2' })
      const requires = cds.env.for('cds', cds.root).requires
      expect(chainAConfig(chainAOptions(requires, process.env))).toMatchObject({ network: 'preview', url: 'http://127.0.0.1:3999', retries: 2 })
    } finally {
      for (const name of ['CDS_REQUIRES_CHAIN_A_NETWORK', 'cds_requires_chain_a_credentials_url', 'CHAIN_A_RETRIES']) if (!(name in saved)) delete process.env[name]
    }
  })

  it('at start the variables are mapped into cds.requires[chain-a] itself, for the service to read in its options', () => {
    const requires: Record<string, any> = { ...structuredClone(packageJson), chain: { a: { timeoutMs: 900 } } }
    const block = requires['chain-a']
    expect(applyChainAEnvironment(requires, { CHAIN_A_NETWORK: 'preview', DEVNET_SEED: 's' })).toBe(block)
    expect(block).toMatchObject({ kind: 'blockfrost', network: 'preview', timeoutMs: 900, devnetOptions: { blockTimeMs: 0, seed: 's' } })
    expect(requires.chain).toEqual({})
  })

  it.each([
    ['development', 'blockfrost', true],
    ['test', 'blockfrost', true],
    ['production', 'blockfrost', false],
  ])('the %s profile: kind %s implemented by the chain-a service, devnet %s', (profile, kind, devnet) => {
    const saved = process.env.CDS_ENV
    try {
      process.env.CDS_ENV = profile
      const configured = cds.env.for('cds', cds.root).requires['chain-a']
      expect(configured).toMatchObject({ kind, impl: 'srv/chains/chain-a/service.ts', devnet })
    } finally {
      if (saved === undefined) delete process.env.CDS_ENV
      else process.env.CDS_ENV = saved
    }
  })
})
