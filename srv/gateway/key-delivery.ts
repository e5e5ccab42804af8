import cds from '@sap/cds'
import { MCP_ENV, MCP_SERVERS } from '../../mcp/names.ts'
import { mcpTarball } from '../mcp-package/index.ts'
import { gatewayConfig } from './config.ts'

/**
 * A key is shown exactly once, by whichever lane issued it (the command line, wallet sign-in, a
 * voucher, a purchase, a rotation), and always with what it takes to use it at once: an MCP client
 * configuration for both tool servers and a curl example. Only the key's hash is stored, so this
 * answer cannot be given again; a lost key is replaced by rotation.
 */

/**
 * How npx finds a tool server's bin: in the package configured (GATEWAY_MCP_PACKAGE), else in the
 * package this server serves (installed from its address, with everything it needs bundled), else,
 * in a checkout that has not built it, in this installation, from any folder.
 */
function npxArguments(bin: string, baseUrl: string): string[] {
  const { mcpPackage, mcpTarball: servesTarball } = gatewayConfig()
  if (mcpPackage) return ['-y', '--package', mcpPackage, bin]
  const tarball = servesTarball ? mcpTarball() : undefined
  if (tarball) return ['-y', '--package', baseUrl + tarball.route, bin]
  return ['--prefix', cds.root, bin]
}

interface KeyToDeliver {
  id: string
  key: string
  plan?: string
  unitsLeft?: number
  validUntil?: string
  boundAddress?: string | null
}

/** The configuration an MCP client (`mcpServers` in its settings file) needs to reach both tool servers with this key. */
export function mcpConfiguration(key: string, baseUrl: string) {
  const env = { [MCP_ENV.key]: key, [MCP_ENV.url]: baseUrl }
  return {
    mcpServers: Object.fromEntries(Object.entries(MCP_SERVERS).map(([name, bin]) => [name, { command: 'npx', args: npxArguments(bin, baseUrl), env }])),
  }
}

const curlExample = (key: string, baseUrl: string) => `curl -H "Authorization: Bearer ${key}" ${baseUrl}/me`

/** The body that hands the key over: the key, its account, the client configuration and an example; `extra` adds what the lane tells besides. */
export function deliverKey(issued: KeyToDeliver, extra: object = {}) {
  const baseUrl = gatewayConfig().publicUrl
  return {
    id: issued.id,
    key: issued.key,
    plan: issued.plan,
    unitsLeft: issued.unitsLeft,
    validUntil: issued.validUntil,
    boundAddress: issued.boundAddress ?? null,
    ...extra,
    shownOnce: 'This key is shown once and stored only as a hash: save it now. A lost key is replaced by rotation.',
    configuration: mcpConfiguration(issued.key, baseUrl),
    curl: curlExample(issued.key, baseUrl),
  }
}

/** The same for a terminal: the key, then how to use it. */
export function keyPrintout(issued: KeyToDeliver): string {
  const baseUrl = gatewayConfig().publicUrl
  return [
    `API key (shown once, store it now):\n\n  ${issued.key}\n`,
    `id ${issued.id}  plan ${issued.plan}  units ${issued.unitsLeft}  valid until ${issued.validUntil}\n`,
    `Send it as Authorization: Bearer <key> (or x-agent-token: <key>) to ${baseUrl}, for example:\n\n  ${curlExample(issued.key, baseUrl)}\n`,
    'MCP client configuration (mcpServers) for the chain-A and chain-B tool servers:\n',
    JSON.stringify(mcpConfiguration(issued.key, baseUrl), null, 2),
  ].join('\n')
}
