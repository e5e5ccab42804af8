import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import cds from '@sap/cds'
import { execFileSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { figures, printLine, printRatio, printValue, sample } from './measure.ts'

/**
 * The MCP tool servers as an agent's client sees them, against the in-process instance
 * (self-hosted, as the mocked user alice): how long from spawning a server to a listed tool set,
 * through npx and the launcher as a key's configuration starts it against `node` on the server file
 * (the baseline); a tool call against the same OData call made directly over HTTP (the baseline);
 * and the server process's resident memory after the calls.
 */

const root = cds.root

function transportFor(command: string, args: string[], url: string) {
  return new StdioClientTransport({ command, args, cwd: tmpdir(), stderr: 'ignore', env: { ...getDefaultEnvironment(), CHAIN_ACCESS_URL: url, CHAIN_ACCESS_USER: 'alice' } })
}

async function connected(transport: StdioClientTransport) {
  const client = new Client({ name: 'bench', version: '1.0.0' })
  await client.connect(transport)
  await client.listTools()
  return client
}

export async function mcpBenchmarks({ url, rounds }: { url: string; rounds: number }) {
  console.log('MCP tool servers (stdio, self-hosted instance in-process)')
  const starts = Math.max(3, Math.min(10, Math.round(rounds / 200)))
  const viaNpx: number[] = []
  const direct: number[] = []
  for (let i = 0; i < starts; i++) {
    let began = performance.now()
    await (await connected(transportFor('npx', ['--prefix', root, 'cag-mcp-chain-a'], url))).close()
    viaNpx.push(performance.now() - began)
    began = performance.now()
    await (await connected(transportFor(process.execPath, ['--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', join(root, 'mcp', 'chain-a', 'server.ts')], url))).close()
    direct.push(performance.now() - began)
  }
  printLine('start to tools listed: npx --prefix (the printed configuration)', figures(viaNpx))
  printLine('start to tools listed: node on the server file (baseline)', figures(direct))
  printRatio('start through npx / node directly', figures(viaNpx), figures(direct))

  const transport = transportFor(process.execPath, ['--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', join(root, 'mcp', 'chain-a', 'server.ts')], url)
  const client = await connected(transport)
  const residentMb = () => (Number(execFileSync('ps', ['-o', 'rss=', '-p', String(transport.pid)], { encoding: 'utf8' }).trim()) / 1024).toFixed(1)
  try {
    const started = residentMb()
    const calls = Math.max(50, Math.min(500, Math.round(rounds / 4)))
    const authorization = `Basic ${Buffer.from('alice:').toString('base64')}`
    const http = await sample(calls, async () => {
      const response = await fetch(`${url}/odata/v4/chaina-odata/Blocks?$orderby=height%20desc&$top=1`, { headers: { authorization } })
      await response.json()
    })
    await sample(calls, () => client.callTool({ name: 'analytics_overview', arguments: {} }))
    const tool = await sample(calls, () => client.callTool({ name: 'query_entity', arguments: { entity: 'Blocks', orderby: 'height desc', top: 1 } }))
    printLine('the newest block over HTTP (baseline)', http)
    printLine('the same through the query_entity tool', tool)
    printRatio('tool call / HTTP call', tool, http)
    printValue(`tool server resident memory: started / after ${calls * 2} calls`, `${started} MB / ${residentMb()} MB`)
  } finally {
    await client.close()
  }
  console.log()
}
