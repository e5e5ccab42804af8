import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import type { ServerConfiguration } from './mcp.ts'

/**
 * The tool servers as a customer runs them: the configuration printed with a key, run exactly as
 * printed from an empty folder on the system's Node (another version than the server's), with npm
 * pointed at a registry that does not answer, so nothing but the gateway's own package is fetched.
 */

/** Debian's Node and npx (nodejs, npm), another Node than the one the server runs on. */
export const SYSTEM_NODE = '/usr/bin/node'
const SYSTEM_NPX = '/usr/bin/npx'

/** The system Node's version; where it is missing, one printed line (a failure with REQUIRE_SYSTEM_PACKAGES=1). */
export function systemNodeVersion(what: string): string | undefined {
  if (existsSync(SYSTEM_NODE) && existsSync(SYSTEM_NPX)) return execFileSync(SYSTEM_NODE, ['--version'], { encoding: 'utf8' }).trim()
  if (process.env.REQUIRE_SYSTEM_PACKAGES === '1') throw new Error(`REQUIRE_SYSTEM_PACKAGES=1 but ${SYSTEM_NODE} or ${SYSTEM_NPX} is missing (apt-get install nodejs npm)`)
  process.stderr.write(`skipping ${what} on the system's Node: install Debian's nodejs and npm (apt-get install nodejs npm) to run it\n`)
  return undefined
}

/** The executables of the Node processes in the tree of `pid` (Linux: /proc). */
export function nodesUnder(pid: number): string[] {
  const parents = new Map<number, number>()
  for (const entry of readdirSync('/proc').filter(name => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
    } catch { /* ended meanwhile */ }
  }
  const tree = [pid]
  for (let i = 0; i < tree.length; i++) for (const [child, parent] of parents) if (parent === tree[i]) tree.push(child)
  return tree.flatMap(each => {
    try {
      const exe = readlinkSync(`/proc/${each}/exe`)
      return /\/node[^/]*$/.test(exe) ? [exe] : []
    } catch {
      return []
    }
  })
}

export interface PrintedServer {
  client: Client
  transport: StdioClientTransport
  /** What the server wrote to stderr so far. */
  stderr(): string
}

/** Connects an MCP client to the server the printed configuration starts, from `cwd`, with npm's cache in `npmCache`. */
export async function connectAsPrinted(printed: ServerConfiguration, cwd: string, npmCache: string): Promise<PrintedServer> {
  const transport = new StdioClientTransport({
    command: printed.command,
    args: printed.args,
    env: {
      ...getDefaultEnvironment(),
      ...printed.env,
      PATH: `/usr/bin:${process.env.PATH}`,
      npm_config_registry: 'http://127.0.0.1:9',
      npm_config_cache: npmCache,
      npm_config_update_notifier: 'false',
      npm_config_fund: 'false',
      npm_config_audit: 'false',
    },
    cwd,
    stderr: 'pipe',
  })
  let stderr = ''
  transport.stderr?.on('data', chunk => { stderr += chunk })
  const client = new Client({ name: 'chain-access-package-test', version: '1.0.0' })
  try {
    // npx installs the package before the server can answer initialize.
    await client.connect(transport, { timeout: 150_000 })
  } catch (error) {
    await client.close()
    throw new Error(`${(error as Error).message}\nthe server's stderr:\n${stderr}`, { cause: error })
  }
  return { client, transport, stderr: () => stderr }
}
