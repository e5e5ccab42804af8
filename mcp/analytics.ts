import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import type { GatewayClient } from './gateway-client.ts'
import { READS, register } from './tools.ts'

/**
 * The analytics tools both servers carry: the analytics route answers for both chains at once, and
 * each server keeps its own chain's part unless `chain` asks for the other one or both.
 */

type Chain = 'chain-a' | 'chain-b'

const SERVICE = 'analytics'

const window = z.enum(['1h', '24h', '7d', '30d']).default('24h')
  .describe('The window: the last 1h (by minute), 24h (by hour), 7d or 30d (by day) of complete buckets, compared with the window before it')
const metric = z.string().regex(/^[a-z]+\.[a-z_]+$/, 'a metric is named <group>.<name>, e.g. tx.count')
  .describe('A metric named <group>.<name>: tx.count, tx.tps, tx.failed, tx.script, tx.shielded (chain B), fee.total, fee.avg, chain.blocks, address.active, producer.count, contract.calls (chain B), asset.active (chain A)… A wrong name is answered with the list of valid ones')

const row = z.looseObject({ chain: z.string() })
const span = {
  window: z.string(),
  resolution: z.string().describe('minute, hour or day: the resolution of the series'),
  windowStart: z.string(),
  windowEnd: z.string(),
  previousStart: z.string(),
  previousEnd: z.string(),
}

function chainChoice(own: Chain) {
  return z.enum(['chain-a', 'chain-b', 'both']).default(own).describe(`Whose figures: ${own} (this server's chain, the default), the other chain, or both`)
}

const keep = (chosen: string) => (entry: { chain?: unknown }) => chosen === 'both' || entry.chain === chosen

type Rows = { chain?: unknown }[]

/** Registers analytics_overview, analytics_key_figures, analytics_daily and analytics_anomalies, plus `extra` (the server's fifth). */
export function registerAnalytics(server: McpServer, client: GatewayClient, own: Chain) {
  register(server, client, {
    name: 'analytics_overview',
    title: 'Chain overview',
    description: `The chain at a glance: tip and indexed height, sync status and lag, epoch, transactions per second over the last hour, and the last 24 hours' blocks, transactions, fees, active addresses, producers and reorgs.`,
    input: { chain: chainChoice(own) },
    output: { generatedAt: z.string(), chains: z.array(row) },
    annotations: READS,
    async run({ chain }, calls) {
      const overview = await calls.call<{ generatedAt: string; chains: Rows }>(SERVICE, 'overview')
      return { generatedAt: overview.generatedAt, chains: overview.chains.filter(keep(chain)) }
    },
  })

  register(server, client, {
    name: 'analytics_key_figures',
    title: 'Key figures over a window',
    description: 'The key figures (blocks, transactions, tps, fees, active addresses, producers…) over a window, each with the previous window, the change in percent and its series. `metric` keeps one figure.',
    input: { window, metric: metric.optional(), chain: chainChoice(own) },
    output: { ...span, figures: z.array(row) },
    annotations: READS,
    async run({ window, metric, chain }, calls) {
      const { figures, ...rest } = await calls.call<{ figures: (Rows[number] & { metric?: string })[] }>(SERVICE, 'keyFigures', { window })
      return { ...rest, figures: figures.filter(keep(chain)).filter(figure => !metric || figure.metric === metric) }
    },
  })

  register(server, client, {
    name: 'analytics_daily',
    title: 'Daily table',
    description: 'A row per UTC day, chain and metric for the last `days` days (today last, marked incomplete): topic blocks (blocks, block interval, producers), transactions (count, failed, script, shielded, system, tps), fees (total, avg, min, max) or tokens (mint events, active assets).',
    input: {
      topic: z.enum(['blocks', 'transactions', 'fees', 'tokens']).describe('What the table is about'),
      days: z.number().int().min(1).max(90).default(7).describe('How many days, today included (1 to 90)'),
      chain: chainChoice(own),
    },
    output: { topic: z.string(), days: z.number(), metrics: z.array(z.string()), rows: z.array(row) },
    annotations: READS,
    async run({ topic, days, chain }, calls) {
      const table = await calls.call<{ topic: string; days: number; metrics: string[]; rows: Rows }>(SERVICE, 'daily', { topic, days })
      return { ...table, rows: table.rows.filter(keep(chain)) }
    },
  })

  register(server, client, {
    name: 'analytics_anomalies',
    title: 'Anomalies of a metric',
    description: 'Scores each bucket of a metric in the window with a robust z-score against a baseline (the same hour of previous weeks or days, else the previous 30 days) and flags the outliers. Bucketed metrics only (counts and fees such as tx.count, fee.total); a wrong one is answered with the list.',
    input: { metric, window, chain: chainChoice(own) },
    output: { ...span, metric: z.string(), method: z.string(), threshold: z.number(), points: z.array(row), flagged: z.array(row) },
    annotations: READS,
    async run({ metric, window, chain }, calls) {
      const answer = await calls.call<{ points: Rows; flagged: Rows }>(SERVICE, 'anomalies', { metric, window })
      return { ...answer, points: answer.points.filter(keep(chain)), flagged: answer.flagged.filter(keep(chain)) }
    },
  })

  if (own === 'chain-a') {
    register(server, client, {
      name: 'analytics_top',
      title: 'Top entities',
      description: 'The top entities over a window with their value and share of the total: tokens (chain A, by transactions), addresses (chain A, by ADA received), producers (pools on chain A, block producers on chain B) or contracts (chain B, by calls).',
      input: {
        ranking: z.enum(['tokens', 'addresses', 'producers', 'contracts']).describe('What to rank'),
        window,
        limit: z.number().int().min(1).max(100).default(10).describe('How many entries per chain (1 to 100)'),
        chain: chainChoice(own),
      },
      output: { ...span, ranking: z.string(), metric: z.string(), unit: z.string(), notes: z.array(z.string()), entries: z.array(row) },
      annotations: READS,
      async run({ ranking, window, limit, chain }, calls) {
        const answer = await calls.call<{ entries: Rows }>(SERVICE, 'rankings', { ranking, window, top: limit })
        return { ...answer, entries: answer.entries.filter(keep(chain)) }
      },
    })
  } else {
    register(server, client, {
      name: 'analytics_compare',
      title: 'Compare both chains',
      description: 'One metric on both chains over the same window, each with its previous window, change in percent and series; a chain without the metric says why (`available` false, `note`).',
      input: { metric, window },
      output: { ...span, metric: z.string(), description: z.string(), chains: z.array(row) },
      annotations: READS,
      async run({ metric, window }, calls) {
        return await calls.call(SERVICE, 'compare', { metric, window })
      },
    })
  }
}
