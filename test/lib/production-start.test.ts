import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { startServer, stopAndWait, type RunningServer } from '../support/server'
import { boundVariables, configuredVariables } from '../../srv/lib/bound-secrets'
import { secretProblem, urlProblem } from '../../srv/lib/production-settings'
import { chainAProductionProblems } from '../../srv/chains/chain-a/config'
import { gatewayConfig } from '../../srv/gateway/config'

/**
 * The production start (cds-serve with NODE_ENV=production, as mta.yaml runs it): every setting is
 * checked before anything is served, and one message without a stack names every problem; a weak
 * secret is refused, naming its setting and never its value; secrets come from a bound
 * `chain-access-secrets` service; a chain turned off answers its routes 503, uncharged; the
 * database's binding and address are named when they fail.
 */

const root = join(__dirname, '..', '..')
const CDS_SERVE = join(root, 'node_modules', '.bin', 'cds-serve')

/** What mta.yaml sets for the service module, and nothing else of the caller's environment. */
function productionEnvironment(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const base = { ...process.env }
  for (const name of Object.keys(base)) if (/^(NODE_ENV|CDS_|cds_|CHAIN_|BLOCKFROST_|GATEWAY_|DEVNET_|VCAP_|QUERY_|HSM_|ANALYTICS_|METRICS_)/.test(name)) delete base[name]
  return {
    ...base, PORT: '0', NODE_ENV: 'production', GATEWAY_ENABLED: 'true', CDS_TYPESCRIPT: 'true', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON',
    ...env,
  }
}

/** A start expected to end: its exit code and everything it printed. */
async function refusedStart(env: Record<string, string>): Promise<{ code: number | string | null; output: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(CDS_SERVE, [], { cwd: root, env: productionEnvironment(env), timeout: 60_000 })
    return { code: 0, output: stdout + stderr, stderr }
  } catch (error) {
    const failed = error as { code: number | string | null; stdout: string; stderr: string }
    return { code: failed.code, output: failed.stdout + failed.stderr, stderr: failed.stderr }
  }
}

const strong = () => randomBytes(32).toString('hex')
const STACK_LINE = /^\s+at .+:\d+:\d+\)?$/m

/** Every setting a production start needs, strong, with both chains' upstreams configured (never asked: the start is refused before). */
const COMPLETE = () => ({
  BLOCKFROST_PROJECT_ID: 'preprodThisProjectIdIsNeverPrinted',
  CHAIN_B_NETWORK: 'preprod',
  CHAIN_B_ATTESTER_SECRET: strong(),
  CHAIN_B_SPONSOR_SEED: strong(),
  CHAIN_B_ZK_ALLOW_DEVELOPMENT_KEYS: 'true',
  GATEWAY_VOUCHER_PEPPER: strong(),
  GATEWAY_LANE_SECRET: strong(),
})

describe('a production start with missing settings', () => {
  test("with only mta.yaml's settings: one message names every missing setting, no stack, exit code 1", async () => {
    const run = await refusedStart({})
    expect(run.code).toBe(1)
    const message = run.stderr.trim()
    expect(message).toMatch(/^Refusing to start in production: 8 settings are missing or invalid:\n/)
    for (const setting of ['cds.requires.db', 'BLOCKFROST_PROJECT_ID or BLOCKFROST_URL', 'CHAIN_B_INDEXER_URL or CHAIN_B_NETWORK', 'CHAIN_B_ATTESTER_SECRET', 'CHAIN_B_SPONSOR_SEED', 'CHAIN_B_ZK_KEYS', 'GATEWAY_VOUCHER_PEPPER', 'GATEWAY_LANE_SECRET'])
      expect(message).toContain(`  - ${setting}`)
    expect(message).toContain('CHAIN_A_ENABLED=false')
    expect(message).toContain('CHAIN_B_ENABLED=false')
    expect(message).toMatch(/bind a postgresql-db service/)
    expect(run.output).not.toMatch(STACK_LINE)
    expect(run.output).not.toContain('server listening')
  })

  test('weak secrets and malformed upstream settings are refused, naming each setting and no secret', async () => {
    const env = {
      ...COMPLETE(), CDS_REQUIRES_DB_CREDENTIALS_HOST: '127.0.0.1',
      CHAIN_B_ATTESTER_SECRET: 's1', CHAIN_B_SPONSOR_SEED: 'ab'.repeat(32), GATEWAY_LANE_SECRET: 'short lane secret', METRICS_TOKEN: 'short metrics token',
      BLOCKFROST_PROJECT_ID: '', BLOCKFROST_URL: 'not-a-url', CHAIN_A_NETWORK: 'mainet', CHAIN_B_INDEXER_URL: 'ftp://indexer.example',
    }
    const run = await refusedStart(env)
    expect(run.code).toBe(1)
    const problems = run.stderr.trim().split('\n').slice(1)
    expect(problems).toEqual([
      "  - BLOCKFROST_URL must be a http or https URL, got 'not-a-url'",
      "  - CHAIN_A_NETWORK must be one of mainnet, preprod, preview (devnet only with BLOCKFROST_URL), got 'mainet'",
      "  - CHAIN_B_INDEXER_URL must be a http or https URL, got 'ftp://indexer.example'",
      expect.stringMatching(/^ {2}- CHAIN_B_ATTESTER_SECRET is too weak: 2 characters, at least 32 needed/),
      expect.stringMatching(/^ {2}- CHAIN_B_SPONSOR_SEED is too weak: only 2 different characters/),
      expect.stringMatching(/^ {2}- GATEWAY_LANE_SECRET is too weak: 17 characters/),
      expect.stringMatching(/^ {2}- METRICS_TOKEN is too weak: 19 characters/),
    ])
    expect(run.output).not.toContain('short lane secret')
    expect(run.output).not.toContain('short metrics token')
    expect(run.output).not.toContain('abab')
    expect(run.output).not.toMatch(STACK_LINE)
  })

  test("the secrets from a bound chain-access-secrets service; the database's missing binding named", async () => {
    const secrets = COMPLETE()
    const VCAP_SERVICES = JSON.stringify({ 'user-provided': [{ name: 'chain-access-secrets', label: 'user-provided', tags: [], credentials: { ...secrets, CHAIN_B_SPONSOR_SEED: 'bound sponsor seed that must never be printed' } }] })
    const run = await refusedStart({ VCAP_SERVICES, CHAIN_B_SPONSOR_SEED: 's1' })
    expect(run.code).toBe(1)
    expect(run.stderr.trim().split('\n')).toEqual([
      'Refusing to start in production: 1 setting is missing or invalid:',
      expect.stringMatching(/^ {2}- cds.requires.db has no PostgreSQL credentials \(no host\): VCAP_SERVICES has no postgresql-db service \(bound: user-provided\); bind a postgresql-db service/),
    ])
    for (const secret of [...Object.values(secrets), 'bound sponsor seed']) expect(run.output).not.toContain(secret)
  })

  test('a database that does not answer is named by host and database, never by its password', async () => {
    const password = 'a database password never printed'
    const run = await refusedStart({
      ...COMPLETE(), CHAIN_A_ENABLED: 'false', CHAIN_B_ENABLED: 'false',
      CDS_REQUIRES_DB_CREDENTIALS_HOST: '127.0.0.1', CDS_REQUIRES_DB_CREDENTIALS_PORT: '9', CDS_REQUIRES_DB_CREDENTIALS_DATABASE: 'cag_absent', CDS_REQUIRES_DB_CREDENTIALS_USER: 'cag', CDS_REQUIRES_DB_CREDENTIALS_PASSWORD: password,
    })
    expect(run.code).toBe(1)
    expect(run.stderr.trim()).toMatch(/^The database does not answer \(cds.requires.db, PostgreSQL at 127.0.0.1:9, database 'cag_absent', user 'cag'\): /)
    expect(run.output).not.toContain(password)
    expect(run.output).not.toContain('server listening')
  })
})

describe('a production deployment with both chains turned off', () => {
  let folder: string
  let server: RunningServer | undefined

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'cag-production-'))
    const { GATEWAY_VOUCHER_PEPPER, GATEWAY_LANE_SECRET } = COMPLETE()
    server = await startServer(CDS_SERVE, [], {
      cwd: root,
      env: productionEnvironment({
        CHAIN_A_ENABLED: 'false', CHAIN_B_ENABLED: 'false', GATEWAY_VOUCHER_PEPPER, GATEWAY_LANE_SECRET,
        // A SQLite file stands in for the PostgreSQL binding.
        CDS_REQUIRES_DB_KIND: 'sqlite', CDS_REQUIRES_DB_IMPL: 'srv/lib/sqlite-file.ts', CDS_REQUIRES_DB_CREDENTIALS_URL: join(folder, 'production.sqlite'),
      }),
    })
  }, 90_000)

  afterAll(async () => {
    if (server) await stopAndWait(server)
    rmSync(folder, { recursive: true, force: true })
  })

  test.each([
    ['/odata/v4/chaina-odata/Blocks', 'CHAIN_A_DISABLED'],
    ['/odata/v4/chaina-transaction/', 'CHAIN_A_DISABLED'],
    ['/odata/v4/chainb-indexer/Blocks', 'CHAIN_B_DISABLED'],
    ['/api/v1/chainb/$metadata', 'CHAIN_B_DISABLED'],
    ['/zk-config', 'CHAIN_B_DISABLED'],
  ])('%s answers 503 %s, uncharged, without a key', async (path, code) => {
    const response = await fetch(server!.url + path)
    expect(response.status).toBe(503)
    expect(response.headers.get('x-access-units-charged')).toBe('0')
    expect((await response.json()).error.code).toBe(code)
  })

  test('the rest is served, and the start asked no upstream', async () => {
    expect((await fetch(server!.url + '/health')).status).toBe(200)
    expect(server!.output()).toMatch(/chain A is turned off/)
    expect(server!.output()).not.toMatch(/could not check which chain|indexer\.preprod/)
  })
})

describe('the settings themselves', () => {
  const saved = { ...process.env }
  afterEach(() => {
    for (const name of ['VCAP_APPLICATION', 'GATEWAY_PUBLIC_URL', 'VCAP_SERVICES']) {
      if (saved[name] === undefined) delete process.env[name]
      else process.env[name] = saved[name]
    }
  })

  test("GATEWAY_PUBLIC_URL defaults to Cloud Foundry's first route, in https; set, it wins", () => {
    process.env.VCAP_APPLICATION = JSON.stringify({ application_uris: ['cag.cfapps.example.com', 'other.example.com'] })
    delete process.env.GATEWAY_PUBLIC_URL
    expect(gatewayConfig().publicUrl).toBe('https://cag.cfapps.example.com')
    process.env.GATEWAY_PUBLIC_URL = 'https://api.example.com/'
    expect(gatewayConfig().publicUrl).toBe('https://api.example.com')
    delete process.env.VCAP_APPLICATION
    delete process.env.GATEWAY_PUBLIC_URL
    expect(gatewayConfig().publicUrl).toMatch(/^http:\/\/localhost:\d+$/)
  })

  test('a bound service named or tagged chain-access-secrets carries variables by name, over the environment', () => {
    const tagged = JSON.stringify({ 'user-provided': [{ name: 'other', tags: ['x'], credentials: { A: '1' } }, { name: 'vault', tags: ['chain-access-secrets'], credentials: { A: '2', N: 3, O: { nested: true } } }] })
    expect(boundVariables({ VCAP_SERVICES: tagged })).toEqual({ A: '2', N: '3' })
    expect(configuredVariables({ VCAP_SERVICES: tagged, A: 'env', B: 'env' })).toMatchObject({ A: '2', B: 'env' })
    expect(boundVariables({ VCAP_SERVICES: 'not json' })).toEqual({})
    expect(boundVariables({})).toEqual({})
  })

  test('secret and URL rules', () => {
    expect(secretProblem('S', undefined, 'why')).toBe('S is not set: why')
    expect(secretProblem('S', 'x'.repeat(40), 'why')).toMatch(/only 1 different characters/)
    expect(secretProblem('S', strong(), 'why')).toBeUndefined()
    expect(urlProblem('U', 'https://user:pw@example.com')).toBeUndefined()
    expect(urlProblem('U', 'nope@host')).toBe('U must be a http or https URL, got its value')
  })

  test('chain A: a project id of another network than CHAIN_A_NETWORK; turned off, nothing is required', () => {
    expect(chainAProductionProblems({ network: 'mainnet', credentials: { projectId: 'preprodX' } })).toEqual(['BLOCKFROST_PROJECT_ID is a project of preprod, but CHAIN_A_NETWORK is mainnet'])
    expect(chainAProductionProblems({ network: 'mainet' }, false)).toEqual([])
    expect(chainAProductionProblems({ network: 'devnet', credentials: { url: 'http://127.0.0.1:3999' } })).toEqual([])
  })

  test('chain A on Koios: the hosted service of a hosted network needs nothing; another network needs KOIOS_URL; an unknown kind is named', () => {
    expect(chainAProductionProblems({ kind: 'koios', network: 'preprod' })).toEqual([])
    expect(chainAProductionProblems({ kind: 'koios', network: 'devnet' })).toEqual([expect.stringMatching(/^KOIOS_URL: CHAIN_A_NETWORK 'devnet' has no hosted Koios/)])
    expect(chainAProductionProblems({ kind: 'koios', network: 'devnet', credentials: { koiosUrl: 'http://127.0.0.1:3999/api/v1' } })).toEqual([])
    expect(chainAProductionProblems({ kind: 'koios', network: 'preprod', credentials: { koiosUrl: 'ftp://koios' } })).toEqual(['KOIOS_URL must be a http or https URL, got \'ftp://koios\''])
    expect(chainAProductionProblems({ kind: 'kupo' })).toEqual(["CHAIN_A_KIND must be one of blockfrost, koios, ogmios, got 'kupo'"])
  })

  test('chain A on Ogmios with Kupo: both URLs (ws(s) for Ogmios), a hosted network, a readable start and index size', () => {
    const credentials = { ogmiosUrl: 'wss://node.example:1337', kupoUrl: 'https://node.example:1442' }
    expect(chainAProductionProblems({ kind: 'ogmios', network: 'mainnet', credentials })).toEqual([])
    expect(chainAProductionProblems({ kind: 'ogmios', network: 'preprod' })).toEqual([
      expect.stringMatching(/^OGMIOS_URL: the ogmios kind needs/), expect.stringMatching(/^KUPO_URL: the ogmios kind needs/),
    ])
    expect(chainAProductionProblems({ kind: 'ogmios', network: 'devnet', credentials: { ogmiosUrl: 'http://node:1337', kupoUrl: 'ws://node' } })).toEqual([
      "OGMIOS_URL must be a ws or wss URL, got 'http://node:1337'", "KUPO_URL must be a http or https URL, got 'ws://node'", expect.stringMatching(/^CHAIN_A_NETWORK must be one of mainnet, preprod, preview with the ogmios kind/),
    ])
    expect(chainAProductionProblems({ kind: 'ogmios', network: 'preview', credentials, ogmiosSyncFrom: 'yesterday', ogmiosIndexBlocks: '-3' })).toEqual([
      expect.stringMatching(/^OGMIOS_SYNC_FROM: .*must be origin, tip or a point <slot>.<block hash>, got 'yesterday'/), expect.stringMatching(/^OGMIOS_INDEX_BLOCKS: .*positive whole number/),
    ])
  })
})
