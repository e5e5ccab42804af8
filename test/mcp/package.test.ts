import cds from '@sap/cds'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { execFile, execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { runningDevnet } from '../support/chain-a.ts'
import { balanceOf, issueTestKey, ledgerOf, rawRequest } from '../support/gateway.ts'
import { answerOf, type ServerConfiguration } from '../support/mcp.ts'
import { connectAsPrinted, nodesUnder, SYSTEM_NODE, systemNodeVersion } from '../support/mcp-package.ts'

/**
 * The tool servers as a customer gets them: `npm run build:mcp` packs them, the gateway serves the
 * tarball free at /mcp, and the configuration printed with a key (here the answer of a rotation)
 * runs `npx --package <that address>`. Run exactly as printed, from an empty folder, on the
 * system's Node (another version than the server's) with npm pointed at a registry that does not
 * answer, the server lists its tools and reads the chain through the gateway with the key.
 */

process.env.GATEWAY_ENABLED = 'true'
const app: { url: string } = cds.test(__dirname + '/../..') as any

const ROOT = join(__dirname, '..', '..')
const VERSION: string = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version
const TARBALL = join(ROOT, 'gen', 'mcp', `chain-access-mcp-${VERSION}.tgz`)

const systemNode = systemNodeVersion('the packed tool servers')
const onSystemNode = systemNode ? test : test.skip

const gatewayOptions = () => cds.env.requires.gateway as Record<string, unknown>
const folders: string[] = []
const freshFolder = (name: string) => {
  const folder = mkdtempSync(join(tmpdir(), `cag-mcp-${name}-`))
  folders.push(folder)
  return folder
}

beforeAll(async () => {
  await promisify(execFile)('npm', ['run', '-s', 'build:mcp'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 })
  // The development and test profiles print the checkout's servers; this test is about the package served.
  gatewayOptions().mcpTarball = true
}, 180_000)
afterAll(() => {
  delete process.env.GATEWAY_ENABLED
  delete gatewayOptions().mcpTarball
  for (const folder of folders) rmSync(folder, { recursive: true, force: true })
})

const sha256Of = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')
const tarballRoute = () => `/mcp/${sha256Of(readFileSync(TARBALL)).slice(0, 16)}/chain-access-mcp-${VERSION}.tgz`

/** A key's configuration as the gateway hands it over: the answer of POST /me/rotate. */
async function deliveredConfiguration() {
  const issued = await issueTestKey({ units: 100 })
  const response = await fetch(app.url + '/me/rotate', { method: 'POST', headers: { authorization: `Bearer ${issued.key}` } })
  expect(response.status).toBe(200)
  const delivered = await response.json()
  return { id: delivered.id as string, key: delivered.key as string, servers: delivered.configuration.mcpServers as Record<string, ServerConfiguration> }
}

test('the package is built: the tool servers compiled, the SDK and zod bundled', () => {
  const listing = execFileSync('tar', ['tzf', TARBALL], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).split('\n')
  expect(listing).toEqual(expect.arrayContaining([
    'package/package.json', 'package/bin/cag-mcp-chain-a.js', 'package/bin/cag-mcp-chain-b.js', 'package/lib/chain-a/server.js', 'package/lib/chain-b/server.js',
    'package/node_modules/@modelcontextprotocol/sdk/package.json', 'package/node_modules/zod/package.json',
  ]))
  expect(listing.some(file => file.endsWith('.ts') && !file.endsWith('.d.ts') && !file.includes('node_modules/'))).toBe(false)
  expect(readdirSync(join(ROOT, 'gen', 'mcp')).filter(file => file.endsWith('.tgz'))).toEqual([`chain-access-mcp-${VERSION}.tgz`])
})

test('the configuration delivered with a key installs the package served here, with the key and this address in its environment', async () => {
  const { key, servers } = await deliveredConfiguration()
  for (const [server, bin] of [['chain-a', 'cag-mcp-chain-a'], ['chain-b', 'cag-mcp-chain-b']]) {
    expect(servers[server]).toEqual({
      command: 'npx',
      args: ['-y', '--package', app.url + tarballRoute(), bin],
      env: { CHAIN_ACCESS_API_KEY: key, CHAIN_ACCESS_URL: app.url },
    })
  }
})

test('GET of the tarball without a key: 200, the file, cached for good by its hash, charged 0', async () => {
  const response = await fetch(app.url + tarballRoute())
  const bytes = Buffer.from(await response.arrayBuffer())
  expect(response.status).toBe(200)
  expect(bytes.equals(readFileSync(TARBALL))).toBe(true)
  expect(Object.fromEntries(['content-type', 'etag', 'cache-control', 'x-content-type-options', 'x-access-units-charged'].map(name => [name, response.headers.get(name)]))).toEqual({
    'content-type': 'application/gzip',
    etag: `"${sha256Of(bytes)}"`,
    'cache-control': 'public, max-age=31536000, immutable',
    'x-content-type-options': 'nosniff',
    'x-access-units-charged': '0',
  })
  const again = await rawRequest(app.url, 'GET', tarballRoute(), { 'if-none-match': `"${sha256Of(bytes)}"` })
  expect(again.status).toBe(304)
})

test('with a key: answered alike, nothing charged and nothing in its ledger', async () => {
  const key = await issueTestKey({ units: 10 })
  const entries = (await ledgerOf(key.id)).length
  const response = await fetch(app.url + tarballRoute(), { headers: { authorization: `Bearer ${key.key}` } })
  expect(Buffer.from(await response.arrayBuffer()).equals(readFileSync(TARBALL))).toBe(true)
  expect(response.headers.get('x-access-units-charged')).toBe('0')
  expect(await balanceOf(key.id)).toBe(10)
  expect(await ledgerOf(key.id)).toHaveLength(entries)
})

test.each([
  ['another file', '/mcp/package.json'],
  ['the tarball without its hash', `/mcp/chain-access-mcp-${VERSION}.tgz`],
  ['the tarball under another hash', `/mcp/0000000000000000/chain-access-mcp-${VERSION}.tgz`],
  ['the folder itself', '/mcp'],
])('%s under /mcp: 404 MCP_PACKAGE_NOT_FOUND naming the package\'s address, charged 0', async (_name, path) => {
  const response = await fetch(app.url + path)
  expect(response.status).toBe(404)
  expect(response.headers.get('x-access-units-charged')).toBe('0')
  const { error } = await response.json()
  expect(error.code).toBe('MCP_PACKAGE_NOT_FOUND')
  expect(error.message).toContain(tarballRoute())
})

test('a write under /mcp is refused 405 by the gateway, charged 0', async () => {
  const response = await fetch(app.url + tarballRoute(), { method: 'POST' })
  expect(response.status).toBe(405)
  expect(response.headers.get('x-access-units-charged')).toBe('0')
})

onSystemNode(`run exactly as printed from an empty folder on the system's Node (${systemNode}), no registry reachable: tools listed, a read answered through the gateway with the key`, async () => {
  expect(systemNode).not.toBe(process.version)
  const { id, servers } = await deliveredConfiguration()
  const printed = servers['chain-a']
  const cwd = freshFolder('client')
  const { client, transport, stderr } = await connectAsPrinted(printed, cwd, freshFolder('npm-cache'))
  try {
    expect(stderr()).toMatch(/chain-access-chain-a .* on stdio: .*, key cag_/)
    expect(readdirSync(cwd)).toEqual([])

    const { tools } = await client.listTools()
    expect(tools.map(tool => tool.name)).toEqual(expect.arrayContaining(['get_utxos', 'get_transaction', 'build_ada_transfer', 'analytics_overview']))

    const wallet = runningDevnet().walletKeys('wallet-1').address
    const utxos = answerOf(await client.callTool({ name: 'get_utxos', arguments: { address: wallet } }) as CallToolResult)
    expect(utxos).toMatchObject({ address: wallet, count: expect.any(Number), units: { charged: 2, left: 98 } })
    expect(utxos.count).toBeGreaterThan(0)
    expect(BigInt(utxos.totalLovelace)).toBeGreaterThan(0n)
    expect(await balanceOf(id)).toBe(98)

    // npx and the server it started run on the system's Node.
    if (existsSync('/proc/self/stat')) expect(new Set(nodesUnder(transport.pid!))).toEqual(new Set([realpathSync(SYSTEM_NODE)]))
  } catch (error) {
    throw new Error(`${(error as Error).message}\nthe server's stderr:\n${stderr()}`, { cause: error })
  } finally {
    await client.close()
  }
}, 240_000)
