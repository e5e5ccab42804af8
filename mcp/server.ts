import { readFileSync } from 'node:fs'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { GatewayClient } from './gateway-client.ts'
import { MCP_ENV } from './names.ts'
import { SettingsError, settingsFromEnvironment } from './settings.ts'

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }

export interface ServerDescription {
  name: string
  /** What the server is for and how its tools fit together, for the agent (MCP instructions). */
  instructions: string
  register(server: McpServer, client: GatewayClient): void
}

/**
 * Runs a tool server on stdin/stdout. stdout carries the protocol only: everything said to a human
 * goes to stderr. A setting that cannot work ends the process at once with the reason.
 */
export async function serve(description: ServerDescription) {
  let client: GatewayClient
  try {
    client = new GatewayClient(settingsFromEnvironment())
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error
    console.error(`${description.name}: ${error.message}`)
    process.exit(2)
  }
  const server = new McpServer({ name: description.name, version }, { instructions: description.instructions })
  description.register(server, client)
  await server.connect(new StdioServerTransport())
  const { baseUrl, key, user } = client.settings
  const identity = key ? `key ${key.slice(0, key.indexOf('_') + 5)}…` : user ? `user ${user}` : `no key (set ${MCP_ENV.key}): only free calls will work`
  console.error(`${description.name} ${version} on stdio: ${baseUrl}, ${identity}`)
}
