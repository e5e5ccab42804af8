/**
 * The soak run: the fault harness's load mix on K instances sharing one database for N minutes,
 * with p50/p99 latency, each instance's memory and open file descriptors, and the metering
 * invariants every minute. Exits 1 when any invariant failed. See docs/operations.md#fault-harness-and-soak.
 *
 *   npm run soak -- --minutes 10 --instances 2
 *   CDS_ENV=pg npm run soak -- --minutes 60 --instances 3 --concurrency 16
 */
import { parseArgs } from 'node:util'
import { onPostgres } from '../test/setup/postgres.ts'
import { runSoak } from './harness.ts'

async function main() {
  const { values } = parseArgs({ options: { minutes: { type: 'string', default: '5' }, instances: { type: 'string', default: '2' }, concurrency: { type: 'string', default: '8' } } })
  const started = Date.now()
  const log = (line: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(5)} s] ${line}`)
  const run = await runSoak({ minutes: Number(values.minutes), instances: Number(values.instances), concurrency: Number(values.concurrency), log })
  const all = run.minutes.flatMap(minute => minute.stats.latencies).sort((a, b) => a - b)
  const quantile = (q: number) => all[Math.min(all.length - 1, Math.floor(q * all.length))]?.toFixed(0)
  const last = run.minutes.at(-1)
  console.log(`\nsoak: ${values.instances} instances on ${onPostgres() ? 'PostgreSQL' : 'SQLite'}, ${values.minutes} min, node ${process.version}`)
  console.log(`requests ${all.length} answered, p50 ${quantile(0.5)} ms, p99 ${quantile(0.99)} ms`)
  run.rssStartMb.forEach((rss, i) => console.log(`instance ${i + 1}: RSS ${rss.toFixed(0)} → ${last?.rssMb[i].toFixed(0)} MB, open fds ${run.fdsStart[i]} → ${last?.fds[i]}`))
  console.log(`charges by route class and state: ${[...run.final.chargesByClass].map(([name, n]) => `${name} ${n}`).join(', ')}`)
  console.log(`chain-B write jobs by status and error code: ${[...run.final.jobsByOutcome].map(([name, n]) => `${name} ${n}`).join(', ')}`)
  const { committed, refunded, voided } = run.final.totals
  console.log(`units of the whole run: ${committed} charged, ${refunded} refunded (${voided} of them voided by the sweeper)`)
  console.log(`after the load: ${run.final.pending} charges pending, ${run.final.failures.length ? 'FAIL: ' + run.final.failures.join('; ') : 'invariants OK'}`)
  process.exit(run.minutes.some(minute => minute.failures.length) || run.final.failures.length ? 1 : 0)
}

main().catch(error => {
  console.error(error)
  process.exit(2)
})
