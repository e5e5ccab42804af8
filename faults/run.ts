/**
 * The fault harness: two gateway instances on one database, a load mix, and faults in turn; after
 * each fault the metering and serving invariants. Prints a table per fault; exits 1 when any
 * invariant failed. See docs/operations.md#fault-harness-and-soak.
 *
 *   npm run faults                          SQLite (one shared file), 10 s per fault
 *   CDS_ENV=pg npm run faults               PostgreSQL (a database of its own), the database outage included
 *   npm run faults -- --seconds 30          longer faults
 *   npm run faults -- --instances 3 --concurrency 16
 */
import { parseArgs } from 'node:util'
import { onPostgres } from '../test/setup/postgres.ts'
import { faultTable, runFaults } from './harness.ts'

async function main() {
  const { values } = parseArgs({ options: { seconds: { type: 'string', default: '10' }, instances: { type: 'string', default: '2' }, concurrency: { type: 'string', default: '8' } } })
  const started = Date.now()
  const log = (line: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`)
  const run = await runFaults({
    faultSeconds: Number(values.seconds), instances: Number(values.instances), concurrency: Number(values.concurrency), databaseOutage: onPostgres(), log,
  })
  console.log(`\nfault harness: ${values.instances} instances on ${onPostgres() ? 'PostgreSQL' : 'SQLite'}, ${values.seconds} s per fault, node ${process.version}\n`)
  for (const result of run.results) console.log(faultTable(result) + '\n')
  console.log(`charges by route class and state: ${[...run.final.chargesByClass].map(([name, n]) => `${name} ${n}`).join(', ')}`)
  console.log(`chain-B write jobs by status and error code: ${[...run.final.jobsByOutcome].map(([name, n]) => `${name} ${n}`).join(', ')}`)
  const { committed, refunded, voided } = run.final.totals
  console.log(`units of the whole run: ${committed} charged, ${refunded} refunded (${voided} of them voided by the sweeper)`)
  console.log(`after the load: ${run.final.pending} charges pending, ${run.final.failures.length ? 'FAIL: ' + run.final.failures.join('; ') : 'invariants OK'}`)
  const failed = run.results.filter(result => result.failures.length)
  for (const result of failed) console.log(`FAIL ${result.fault}: ${result.failures.join('; ')}`)
  run.errorLines.forEach((lines, i) => lines.length && console.log(`\nthe last error lines of instance ${i + 1}:\n${lines.join('\n')}`))
  process.exit(failed.length || run.final.failures.length ? 1 : 0)
}

main().catch(error => {
  console.error(error)
  process.exit(2)
})
