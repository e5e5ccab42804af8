import cds from '@sap/cds'
import { spawn } from 'node:child_process'
import { tmpdir } from 'node:os'
import { revokeKey } from '../../srv/gateway/accounts.ts'
import { foldAll } from '../../srv/analytics/bucket-writer.ts'
import { bury, runningDevnet } from '../support/chain-a.ts'
import { produceBlocks, waitFor } from '../support/chain-b.ts'
import { issueTestKey } from '../support/gateway.ts'
import { answerOf, connectToolServer, printedConfiguration, refusalOf, type ToolServer, type ToolSession } from '../support/mcp.ts'

/**
 * Both tool servers, started from the configuration the gateway prints with a key: their tools are
 * exactly the spec's table, each declared with descriptions, annotations and an output schema; the
 * analytics tools answer; and the gateway's refusals (revoked key, units exhausted, rate limit)
 * come back as tool errors that say what to do.
 */

process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_RATE_PER_SECOND = '100000'
process.env.GATEWAY_BURST = '100000'
// Both followers index, as in development, so the analytics have figures of both chains.
process.env.CHAIN_A_FOLLOWER_ENABLED = 'true'
process.env.CHAIN_A_FOLLOWER_START = 'genesis'
const app: { url: string } = cds.test(__dirname + '/../..') as any

/** Both chains grow a few blocks, both followers index them, and the writer folds them into buckets. */
beforeAll(async () => {
  bury(runningDevnet(), 3)
  produceBlocks(3)
  await waitFor(async () => {
    const synced = await Promise.all(['chaina.SyncState', 'chainb.SyncState'].map(table => cds.ql.SELECT.one.from(table).columns('indexedHeight')))
    return synced.every(sync => (sync?.indexedHeight ?? 0) >= 3)
  }, { timeoutMs: 20_000, message: 'both followers indexed' })
  await foldAll()
}, 30_000)
afterAll(() => {
  for (const name of ['GATEWAY_ENABLED', 'GATEWAY_RATE_PER_SECOND', 'GATEWAY_BURST', 'CHAIN_A_FOLLOWER_ENABLED', 'CHAIN_A_FOLLOWER_START']) delete process.env[name]
})

/** Spec 4.6, with analytics_anomalies on both. */
const SPEC_TOOLS: Record<ToolServer, string[]> = {
  'chain-a': [
    'get_transaction', 'get_utxos', 'get_asset_info', 'query_entity',
    'build_ada_transfer', 'build_mint_transaction', 'build_plutus_spend',
    'create_signing_request', 'verify_signature',
    'submit_signed_transaction', 'get_submission_status',
    'analytics_overview', 'analytics_key_figures', 'analytics_daily', 'analytics_top', 'analytics_anomalies',
  ],
  'chain-b': [
    'verify_attestation', 'verify_predicate', 'verify_document',
    'prove_field_predicate', 'prove_field_equality', 'prove_field_membership',
    'anchor_document', 'attest_agent_output', 'prepare_document_proof',
    'grant_disclosure', 'revoke_disclosure', 'get_job_status',
    'analytics_overview', 'analytics_key_figures', 'analytics_daily', 'analytics_compare', 'analytics_anomalies',
  ],
}

const sessions: ToolSession[] = []
async function started(server: ToolServer, key: string) {
  const session = await connectToolServer(printedConfiguration(server, key, app.url))
  sessions.push(session)
  return session
}
afterAll(() => Promise.all(sessions.map(session => session.close())))

describe.each(['chain-a', 'chain-b'] as ToolServer[])('the %s server', server => {
  let session: ToolSession
  beforeAll(async () => {
    session = await started(server, (await issueTestKey({ units: 1000 })).key)
  }, 60_000)

  test('lists exactly the tools of the spec, each described, annotated and with both schemas', async () => {
    const { tools } = await session.client.listTools()
    expect(tools.map(tool => tool.name).sort()).toEqual([...SPEC_TOOLS[server]].sort())
    for (const tool of tools) {
      expect(tool.description!.length).toBeGreaterThan(40)
      expect(tool.inputSchema.type).toBe('object')
      expect(tool.outputSchema?.type).toBe('object')
      for (const [name, property] of Object.entries(tool.inputSchema.properties ?? {})) {
        expect({ tool: tool.name, argument: name, described: !!(property as { description?: string }).description }).toEqual({ tool: tool.name, argument: name, described: true })
      }
      expect(tool.annotations).toEqual(expect.objectContaining({
        title: expect.any(String), readOnlyHint: expect.any(Boolean), destructiveHint: expect.any(Boolean), idempotentHint: expect.any(Boolean), openWorldHint: expect.any(Boolean),
      }))
    }
  })

  test('introduces itself by name and logs only to stderr', async () => {
    expect(session.client.getServerVersion()?.name).toBe(`chain-access-${server}`)
    expect(session.client.getInstructions()).toMatch(/gateway/)
    expect(session.stderr()).toMatch(new RegExp(`chain-access-${server} .* on stdio: ${app.url}, key cag_`))
  })

  test('analytics_overview keeps its own chain unless asked for both, and says what it cost', async () => {
    const own = answerOf(await session.call('analytics_overview'))
    expect(own.chains.map((chain: { chain: string }) => chain.chain)).toEqual([server])
    expect(own.units).toEqual({ charged: expect.any(Number), left: expect.any(Number) })
    expect(own.units.charged).toBeGreaterThan(0)
    const both = answerOf(await session.call('analytics_overview', { chain: 'both' }))
    expect(both.chains.map((chain: { chain: string }) => chain.chain)).toEqual(['chain-a', 'chain-b'])
    expect(both.units.left).toBe(own.units.left - both.units.charged)
  })

  test('analytics_key_figures, analytics_daily and analytics_anomalies answer for a window, a topic and a metric', async () => {
    const figures = answerOf(await session.call('analytics_key_figures', { window: '1h', metric: 'tx.count' }))
    expect(figures).toMatchObject({ window: '1h', resolution: 'minute', figures: [{ chain: server, metric: 'tx.count' }] })
    const daily = answerOf(await session.call('analytics_daily', { topic: 'fees', days: 3 }))
    expect(daily).toMatchObject({ topic: 'fees', days: 3, metrics: ['fee.total', 'fee.avg', 'fee.min', 'fee.max'] })
    expect(daily.rows.length).toBe(12)
    expect(daily.rows.every((row: { chain: string }) => row.chain === server)).toBe(true)
    const anomalies = answerOf(await session.call('analytics_anomalies', { metric: 'tx.count', window: '24h' }))
    expect(anomalies).toMatchObject({ metric: 'tx.count', window: '24h', resolution: 'hour', points: expect.any(Array), flagged: expect.any(Array) })
  })

  test('a bad argument is refused by its schema, and a wrong metric by the gateway with the valid ones, neither charged', async () => {
    const before = answerOf(await session.call('analytics_overview')).units.left - 0
    expect(refusalOf(await session.call('analytics_daily', { topic: 'weather', days: 3 }))).toMatch(/topic/)
    expect(refusalOf(await session.call('analytics_daily', { topic: 'fees', days: 0 }))).toMatch(/days/)
    const wrong = refusalOf(await session.call('analytics_anomalies', { metric: 'tx.nothing' }))
    expect(wrong).toMatch(/^Refused \(400 UNKNOWN_METRIC: .*tx\.count/)
    expect(answerOf(await session.call('analytics_overview')).units.left).toBe(before - 3)
  })
})

test('analytics_top ranks on chain A and analytics_compare sets both chains side by side on chain B', async () => {
  const { key } = await issueTestKey({ units: 100 })
  const a = await started('chain-a', key)
  const b = await started('chain-b', key)
  const top = answerOf(await a.call('analytics_top', { ranking: 'producers', window: '24h', limit: 3 }))
  expect(top).toMatchObject({ ranking: 'producers', metric: 'producer.blocks', entries: expect.any(Array) })
  expect(top.entries.every((entry: { chain: string; rank: number }) => entry.chain === 'chain-a' && entry.rank <= 3)).toBe(true)
  const compared = answerOf(await b.call('analytics_compare', { metric: 'tx.count', window: '1h' }))
  expect(compared.chains.map((chain: { chain: string }) => chain.chain)).toEqual(['chain-a', 'chain-b'])
}, 60_000)

describe('refusals of the gateway become tool errors that say what to do', () => {
  test('a revoked key: the key is invalid, get a new one', async () => {
    const { id, key } = await issueTestKey({ units: 100 })
    const session = await started('chain-b', key)
    answerOf(await session.call('analytics_overview'))
    await revokeKey(id)
    const text = refusalOf(await session.call('analytics_overview'))
    expect(text).toMatch(/^The key was refused \(KEY_INVALID: .*\)\. The key in CHAIN_ACCESS_API_KEY is missing, unknown, revoked or expired/)
    expect(JSON.parse(text.split('\n')[1])).toMatchObject({ httpStatus: 401, code: 'KEY_INVALID' })
  }, 60_000)

  test('units exhausted: how many are left and what the call costs', async () => {
    const { key } = await issueTestKey({ units: 4 })
    const session = await started('chain-a', key)
    expect(answerOf(await session.call('analytics_overview')).units).toEqual({ charged: 3, left: 1 })
    const text = refusalOf(await session.call('analytics_overview'))
    expect(text).toMatch(/^Units exhausted \(UNITS_EXHAUSTED: .*\)\. Units left: 1; this call costs 3\. Top the key up/)
    expect(JSON.parse(text.split('\n')[1])).toMatchObject({ httpStatus: 402, code: 'UNITS_EXHAUSTED', unitsLeft: 1, price: 3 })
  }, 60_000)

  test('no gateway at the address: it names the address to check', async () => {
    const session = await connectToolServer(printedConfiguration('chain-a', 'cag_nothing', 'http://127.0.0.1:9'))
    sessions.push(session)
    expect(refusalOf(await session.call('analytics_overview'))).toMatch(/^The gateway did not answer \(UNREACHABLE: http:\/\/127\.0\.0\.1:9 cannot be reached .*CHAIN_ACCESS_URL/)
  }, 60_000)
})

test('hostile input on stdin does not stop a server: it answers a proper request afterwards', async () => {
  const { key } = await issueTestKey({ units: 10 })
  const configuration = printedConfiguration('chain-a', key, app.url)
  const child = spawn(configuration.command, configuration.args, { cwd: tmpdir(), env: { ...process.env, ...configuration.env }, stdio: ['pipe', 'pipe', 'pipe'] })
  let stdout = ''
  child.stdout.on('data', chunk => { stdout += chunk })
  const answered = (id: number) => waitFor(() => stdout.split('\n').filter(Boolean).map(line => JSON.parse(line)).find(message => message.id === id), { timeoutMs: 20_000, message: `answer ${id}` })
  try {
    const hostile = [
      'not json at all', '{}', '[]', 'null', '{"jsonrpc":"2.0"}', '{"jsonrpc":"2.0","id":1,"method":"tools/call"}',
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"query_entity","arguments":{"entity":{"a":[1]},"top":"x"}}}',
      `{"jsonrpc":"2.0","id":3,"method":"${'x'.repeat(100_000)}"}`, '\u0000\u0001\u0002', '{"jsonrpc":"2.0","id":4,"method":"tools/list","params":null}',
    ]
    child.stdin.write(hostile.join('\n') + '\n')
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) + '\n')
    expect((await answered(10)).result.serverInfo.name).toBe('chain-access-chain-a')
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n')
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'analytics_overview', arguments: { chain: ['both'] } } }) + '\n')
    expect((await answered(11)).result).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/chain/) }] })
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 12, method: 'tools/call', params: { name: 'analytics_overview', arguments: {} } }) + '\n')
    expect((await answered(12)).result.structuredContent.chains).toHaveLength(1)
    expect(child.exitCode).toBeNull()
  } finally {
    child.kill()
  }
}, 60_000)

describe.each(['chain-a', 'chain-b'] as ToolServer[])('hostile arguments to every tool of the %s server', server => {
  test('null, arrays, objects and oversized text in each argument: a tool error or an answer, never a failure inside the server', async () => {
    const session = await started(server, (await issueTestKey({ units: 1_000_000 })).key)
    const { tools } = await session.client.listTools()
    const hostile: unknown[] = [null, [], {}, { a: [1] }, 'x'.repeat(20_000), -1, 1e308, true]
    const failuresInside: string[] = []
    for (const tool of tools) {
      const names = Object.keys(tool.inputSchema.properties ?? {})
      const cases = [null, [], 'text', ...names.flatMap(name => hostile.map(value => ({ [name]: value })))]
      for (const args of cases) {
        // Arguments that are not an object are refused by the protocol layer itself, as a JSON-RPC error.
        const result = await session.client.callTool({ name: tool.name, arguments: args as never }, undefined, { timeout: 30_000 })
          .catch(error => ({ isError: !/expected record/.test(String(error)), content: [{ text: `protocol error: ${error}` }] }))
        const text = (result.content as { text: string }[])[0]?.text ?? ''
        if (result.isError && /inside the tool server|^(?!Invalid arguments|MCP error|Refused|Not permitted|The key|Units|Rate|The gateway did not answer)/.test(text)) failuresInside.push(`${tool.name} ${JSON.stringify(args).slice(0, 80)}: ${text.slice(0, 200)}`)
      }
    }
    expect(failuresInside).toEqual([])
    expect(answerOf(await session.call('analytics_overview')).chains).toHaveLength(1)
  }, 300_000)
})
