import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { tmpdir } from 'node:os'
import { mcpConfiguration } from '../../srv/gateway/key-delivery.ts'

/**
 * The MCP tool servers as an agent's client meets them: spawned over stdio from the configuration
 * the gateway prints with a key (command, args, env), from a folder that is not the project's, and
 * spoken to with the MCP SDK's own client.
 */

export type ToolServer = 'chain-a' | 'chain-b'

export interface ServerConfiguration { command: string; args: string[]; env: Record<string, string> }

export interface ToolSession {
  client: Client
  /** Calls a tool; progress notifications, when asked for, go to `onprogress`. */
  call(name: string, args?: Record<string, unknown>, options?: { onprogress?: (progress: { progress: number; total?: number; message?: string }) => void; timeoutMs?: number }): Promise<CallToolResult>
  /** What the server wrote to stderr (its only log). */
  stderr(): string
  close(): Promise<void>
}

/** The configuration printed with `key` for one of the servers, pointed at `baseUrl`. */
export function printedConfiguration(server: ToolServer, key: string, baseUrl: string): ServerConfiguration {
  return mcpConfiguration(key, baseUrl).mcpServers[server] as ServerConfiguration
}

/** Starts a server from a configuration (as an MCP client does: its env over the default environment) and connects. */
export async function connectToolServer(configuration: ServerConfiguration, extraEnv: Record<string, string> = {}): Promise<ToolSession> {
  const transport = new StdioClientTransport({
    command: configuration.command,
    args: configuration.args,
    env: { ...getDefaultEnvironment(), ...configuration.env, ...extraEnv },
    cwd: tmpdir(),
    stderr: 'pipe',
  })
  let stderr = ''
  transport.stderr?.on('data', chunk => { stderr += chunk })
  const client = new Client({ name: 'chain-access-tests', version: '1.0.0' })
  await client.connect(transport)
  return {
    client,
    call: (name, args = {}, options = {}) => client.callTool({ name, arguments: args }, undefined, {
      timeout: options.timeoutMs ?? 60_000,
      ...(options.onprogress && { onprogress: options.onprogress, resetTimeoutOnProgress: true }),
    }) as Promise<CallToolResult>,
    stderr: () => stderr,
    close: () => client.close(),
  }
}

/** The structured answer of a call that must have worked (the text names the failure otherwise). */
export function answerOf(result: CallToolResult): any {
  if (result.isError) throw new Error(`the tool failed: ${(result.content[0] as { text: string }).text}`)
  const text = (result.content[0] as { text: string }).text
  expect(JSON.parse(text)).toEqual(result.structuredContent)
  return result.structuredContent
}

/** The text of a call that must have failed. */
export function refusalOf(result: CallToolResult): string {
  expect(result.isError).toBe(true)
  expect(result.structuredContent).toBeUndefined()
  return (result.content[0] as { text: string }).text
}
