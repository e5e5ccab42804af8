import { onPostgres } from '../setup/postgres.ts'
import { faultTable, runFaults, UPSTREAM_FAULTS, type FaultsRun } from '../../faults/harness.ts'

/**
 * The fault harness's short form (npm run faults, docs/operations.md#fault-harness-and-soak): two gateway instances on one
 * database of their own under the load mix, a few seconds per fault: each upstream failure mode on
 * both chains, on PostgreSQL the database taken away and given back, and an instance killed
 * mid-charge. After each fault every balance equals its ledger, no reservation outlives the
 * sweeper, no request id is charged twice, both instances serve again and no answer was a 5xx other
 * than 502/503/504 with a stable code.
 */

let run: FaultsRun

beforeAll(async () => {
  run = await runFaults({ faultSeconds: 3, databaseOutage: onPostgres() })
}, 600_000)

const failuresOf = (run: FaultsRun) => [
  ...run.results.flatMap(result => result.failures.map(failure => `${result.fault}: ${failure}`)),
  ...run.final.failures.map(failure => `after the load: ${failure}`),
]

test('every fault was met: the upstreams were failed, the database taken away, an instance killed', () => {
  const faults = run.results.map(result => result.fault)
  expect(faults).toEqual([
    'none (baseline)', ...UPSTREAM_FAULTS.map(mode => `upstreams ${mode}`),
    ...(onPostgres() ? ['database taken away and given back'] : []), 'instance SIGKILLed mid-charge and restarted',
  ])
  for (const result of run.results.filter(result => result.fault.startsWith('upstreams'))) expect(result.faultedUpstreamCalls).toBeGreaterThan(0)
  for (const result of run.results) expect(result.stats.requests).toBeGreaterThan(0)
  expect(run.results.at(-1)!.note).toMatch(/^[1-9]\d* calls mid-charge when killed, [1-9]\d* voided by the sweeper$/)
})

test('after every fault the invariants hold', () => {
  const failures = failuresOf(run)
  if (failures.length) console.log([...run.results.map(faultTable), ...run.errorLines.map((lines, i) => `instance ${i + 1}:\n${lines.join('\n')}`)].join('\n\n'))
  expect(failures).toEqual([])
})
