/**
 * Benchmarks, printed as figures and ratios against baselines measured in the same run.
 * Runs the application in-process on the test profile (SQLite in memory, the embedded devnet with
 * blocks on request) so the devnet's request counter tells how often the upstream was called.
 *
 *   npm run bench                      all benchmarks
 *   BENCH_ROUNDS=5000 npm run bench    more samples per latency figure
 *   BENCH_SECONDS=10 npm run bench     longer throughput runs (default 5 s each)
 *   BENCH_ONLY=chain-b npm run bench   one group: chain-a, chain-a-backends, chain-b, zk, analytics, portal, mcp, gateway, read-budget, cli
 *                                      vault-state or chain-b-devnet
 *   BENCH_ONLY=gateway-cost npm run bench  what a charged call costs: statements per call, CPU self time
 *                                      per call against the gateway off (only when asked for)
 *   BENCH_ONLY=analytics npm run bench follower lag, bucket writer and analytics reads over 30 days of
 *                                      synthetic history (BENCH_ANALYTICS_DAYS=7 for a shorter one)
 */
import cds from '@sap/cds'
import { BlockFrostAPI } from '@blockfrost/blockfrost-js'
import { readBenchmarks } from './read-service.ts'
import { chainABackendBenchmarks } from './chain-a-backends.ts'
import { gatewayBenchmarks } from './gateway.ts'
import { transactionBenchmarks } from './transactions.ts'
import { chainBBenchmarks, devnetSubmissionBenchmarks } from './chain-b.ts'
import { zkBenchmarks } from './zk.ts'
import { analyticsBenchmarks } from './analytics.ts'
import { portalBenchmarks } from './portal.ts'
import { mcpBenchmarks } from './mcp.ts'
import { readBudgetBenchmarks } from './read-budget.ts'
import { gatewayCostBenchmarks } from './gateway-cost.ts'
import { cliBenchmarks } from './cli.ts'
import { vaultStateBenchmarks, vaultStateUnderWritesBenchmarks } from './vault-state.ts'

const rounds = Number(process.env.BENCH_ROUNDS ?? 2000)
const runs = (group: string) => !process.env.BENCH_ONLY || process.env.BENCH_ONLY === group

async function main() {
  // Request logging would measure the console, not the service.
  ;(cds as any).log('odata', 'warn')
  ;(cds as any).log('cds', 'warn')
  ;(cds as any).log('access', 'warn')
  const { server, url } = await (cds as any).exec('--in-memory?', '--port', '0')
  const { embeddedDevnet } = await import('../devnet/chain-a/embedded.ts')
  const devnet = embeddedDevnet()
  if (!devnet) throw new Error('the benchmark needs the embedded devnet (test profile)')

  const direct = new BlockFrostAPI({
    customBackend: devnet.url,
    rateLimiter: false,
    retrySettings: { limit: 0, methods: [], statusCodes: [], errorCodes: [], calculateDelay: () => 0 } as any,
  })

  console.log(`chain-access-gateway benchmarks (${rounds} samples per figure, node ${process.version}, ${cds.env.requires.db.kind})\n`)
  if (runs('chain-a')) {
    await readBenchmarks({ url, devnet, direct, rounds })
    await transactionBenchmarks({ url, devnet, direct, rounds })
  }
  if (runs('chain-a-backends')) await chainABackendBenchmarks({ url, devnet, rounds })
  if (runs('chain-b') || runs('zk')) {
    const { embeddedDevnet: embeddedChainB } = await import('../devnet/chain-b/embedded.ts')
    const chainB = embeddedChainB()
    if (!chainB) throw new Error('the benchmark needs the embedded chain-B devnet (test profile)')
    if (runs('chain-b')) await chainBBenchmarks({ url, devnet: chainB, rounds })
    if (runs('zk')) await zkBenchmarks({ url, devnet: chainB, rounds })
  }
  if (runs('portal')) await portalBenchmarks({ url, rounds })
  if (runs('mcp')) await mcpBenchmarks({ url, rounds })
  // Last of the in-process groups: it stops the followers and empties the chain indexes.
  if (runs('analytics')) await analyticsBenchmarks({ url, rounds })
  server.close()
  await devnet.stop()

  if (runs('gateway')) await gatewayBenchmarks({ seconds: Number(process.env.BENCH_SECONDS ?? 5) })
  if (runs('read-budget')) await readBudgetBenchmarks({ seconds: Number(process.env.BENCH_SECONDS ?? 5) })
  if (runs('cli')) await cliBenchmarks({ runs: Number(process.env.BENCH_CLI_RUNS ?? 5) })
  if (runs('chain-b-devnet')) await devnetSubmissionBenchmarks()
  if (runs('vault-state')) {
    await vaultStateBenchmarks()
    await vaultStateUnderWritesBenchmarks()
  }
  if (process.env.BENCH_ONLY === 'gateway-cost') await gatewayCostBenchmarks({ seconds: Number(process.env.BENCH_SECONDS ?? 5) })
  process.exit(0)
}

main().catch(error => {
  console.error(error)
  process.exit(1)
})
