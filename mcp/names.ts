/**
 * What an MCP client configuration names: the two tool servers (bins of this package) and the
 * environment variables they read. The gateway prints these with every key it hands out.
 */
export const MCP_SERVERS = { 'chain-a': 'cag-mcp-chain-a', 'chain-b': 'cag-mcp-chain-b' } as const

export const MCP_ENV = {
  /** The key, unchanged: a gateway key (`cag_…`) or, self-hosted, a product grant token (`cga_…`, `cgb_…`). */
  key: 'CHAIN_ACCESS_API_KEY',
  /** The base address: the hosted gateway, or a self-hosted instance. */
  url: 'CHAIN_ACCESS_URL',
  /** Self-hosted: basic credentials (a mocked user in development, e.g. alice). */
  user: 'CHAIN_ACCESS_USER',
  password: 'CHAIN_ACCESS_PASSWORD',
  /** How long one HTTP call may take, in milliseconds. */
  timeout: 'CHAIN_ACCESS_TIMEOUT_MS',
} as const

export const DEFAULT_URL = 'http://localhost:4004'

/** The tool servers' own npm package, made by `npm run build:mcp` (mcp/pack.ts) and served by the gateway. */
export const MCP_PACKAGE = 'chain-access-mcp'

/** The file `npm pack` makes of the package at a version. */
export const mcpTarballName = (version: string) => `${MCP_PACKAGE}-${version}.tgz`
