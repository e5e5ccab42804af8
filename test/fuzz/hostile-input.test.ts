/**
 * Hostile input against a real `npm start` process (development profile, hosted gateway on), where
 * an uncaught error stops the server as it would in production. The suite learns what to attack
 * from the running server (the services it logs as served, their $metadata, real values from the
 * devnet), so it grows with every new service. It sends deterministic hostile cases first (every
 * action and function, every entity set, HTTP-level abuse, the gateway's own routes), then random
 * requests for FUZZ_SECONDS, and holds every answer to the same rules: no 5xx for bad input, 4xx
 * bodies `{ error: { code, message } }` with a stable code, no stack traces or internal paths, no
 * units charged for an error; at the end the process still runs and the key's ledger is exact.
 *
 * A crash is reported with the request that caused it; the server is then started again (at most
 * FUZZ_RESTARTS times) and that kind of input is not sent to the same operation again.
 *
 * Reproduce a run with its printed seed:
 *   FUZZ_SEED=<seed> FUZZ_SECONDS=<seconds> npx jest test/fuzz        (CDS_ENV=pg for PostgreSQL)
 * Other settings: FUZZ_CONCURRENCY (requests in flight, 6), FUZZ_RESTARTS (12), FUZZ_SERVER_LOG (a file for
 * the server's latest output).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { onPostgres } from '../setup/postgres.ts'
import { entitySetCases, gatewayCases, httpCases, operationCases } from './cases.ts'
import { discoverServices, harvestDevnet, harvestThroughApi, harvestWallets } from './discovery.ts'
import { Findings } from './findings.ts'
import { closeConnections, resentOnFreshConnection, type Probe } from './http.ts'
import type { Service } from './metadata.ts'
import { checkMetering } from './metering.ts'
import { RandomRequests } from './random.ts'
import { Runner } from './runner.ts'
import { Target } from './target.ts'
import { Pools, prng } from './values.ts'

const root = join(__dirname, '..', '..')
const SECONDS = Number(process.env.FUZZ_SECONDS ?? 40)
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31))
const CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY ?? 6)
const RESTARTS = Number(process.env.FUZZ_RESTARTS ?? 12)
const UNITS = 10_000_000
const PROGRESS_MS = 5000

const log = (line: string) => process.stderr.write(`[fuzz] ${line}\n`)

let dataDir: string
let target: Target
let runner: Runner
let services: Service[]
const pools = new Pools()
let harvestFindings: Findings

/** `npm start` as an operator runs it, on a database of its own, with rate limits out of the way. */
function serverEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', GATEWAY_RATE_PER_SECOND: '100000', GATEWAY_BURST: '100000', GATEWAY_TIMEOUT_MS: '10000' }
  delete env.NODE_ENV
  // The devnet's chain is kept with this run's data, never in the project's data folder.
  env.DEVNET_STATE_DIR = join(dataDir, 'devnet-chain-a')
  if (!onPostgres()) {
    env.cds_requires_db_credentials_url = join(dataDir, 'db.sqlite')
    delete env.CDS_ENV
    delete env.CDS_REQUIRES_DB_CREDENTIALS_DATABASE
  }
  return env
}

/** Runs one phase with findings of its own (progress on stderr), and fails with all of them at once. */
async function phase(name: string, send: () => Promise<void>, everyFewSeconds = () => {}) {
  const findings = new Findings(root)
  runner.findings = findings
  const started = Date.now()
  const progress = setInterval(() => {
    log(`${name}, ${Math.round((Date.now() - started) / 1000)} s: ${runner.progress()}`)
    everyFewSeconds()
  }, PROGRESS_MS)
  try {
    await send()
  } finally {
    clearInterval(progress)
  }
  log(`${name} done: ${runner.progress()}; ${resentOnFreshConnection} sent again after the server closed an idle kept-alive connection under them`)
  if (runner.stopped) findings.notes.push(runner.stopped)
  if (findings.count) throw new Error(`seed ${SEED}; ${findings.report()}`)
}

beforeAll(async () => {
  log(`seed ${SEED}: repeat with FUZZ_SEED=${SEED} FUZZ_SECONDS=${SECONDS} ${onPostgres() ? 'CDS_ENV=pg ' : ''}npx jest test/fuzz`)
  dataDir = mkdtempSync(join(tmpdir(), 'chain-access-fuzz-'))
  harvestFindings = new Findings(root)
  target = new Target({ root, env: serverEnv(), units: UNITS, restarts: RESTARTS })
  await Promise.all([target.start(), harvestWallets(target, pools)])
  log(`npm start listens at ${target.url}`)
  services = await discoverServices(target)
  runner = new Runner(target, harvestFindings, () => harvestDevnet(target.output(), pools))
  await harvestDevnet(target.output(), pools)
  await harvestThroughApi(runner, services, pools)
  log(`serving ${services.map(s => `${s.path} (${s.entitySets.length} entity sets, ${s.operations.length} operations)`).join(', ')}; harvested ${pools.summary()}`)
}, 180_000)

afterAll(async () => {
  if (process.env.FUZZ_SERVER_LOG && target) writeFileSync(process.env.FUZZ_SERVER_LOG, target.output())
  await target?.end()
  closeConnections()
  rmSync(dataDir, { recursive: true, force: true })
}, 30_000)

test('the running server serves OData services whose metadata describe entity sets and operations', () => {
  expect(services.length).toBeGreaterThan(0)
  for (const service of services) expect(service.entitySets.length + service.operations.length).toBeGreaterThan(0)
  expect(services.flatMap(s => s.operations).length).toBeGreaterThan(0)
  expect(services.flatMap(s => s.entitySets).length).toBeGreaterThan(0)
})

test('every entity set read and every valid-looking operation call is answered without a 5xx', () => {
  if (harvestFindings.count) throw new Error(`seed ${SEED}; ${harvestFindings.report()}`)
})

test('every action and function answers hostile bodies and parameters with a 4xx', async () => {
  await phase('operations', () => runner.sequence(services.flatMap(s => s.operations).flatMap(op => operationCases(op, pools))))
}, 180_000)

test('every entity set answers hostile query options and keys with a 4xx or a page', async () => {
  await phase('entity sets', () => runner.sequence(services.flatMap(s => s.entitySets).flatMap(set => entitySetCases(set, pools))))
}, 120_000)

test('HTTP-level abuse (headers, request lines, bodies, paths) is answered 4xx', async () => {
  await phase('HTTP', () => runner.sequence(httpCases(services, pools)))
}, 120_000)

test("the gateway's own routes refuse bad parameters and missing keys", async () => {
  await phase('gateway routes', () => runner.sequence(gatewayCases()))
}, 60_000)

test(`random hostile requests for ${SECONDS} s (seed ${SEED})`, async () => {
  const requests = new RandomRequests(services, pools, prng(SEED))
  const started = Date.now()
  const health: Probe = { name: 'GET /health while fuzzing', group: 'health', kinds: [], method: 'GET', target: '/health', anonymous: true, expect: a => (a.status === 200 ? undefined : 'expected 200') }
  const checkHealth = () => {
    if (!runner.stopped) void runner.probe(health)
  }
  await phase('random', () => runner.concurrently(() => requests.next(), CONCURRENCY, () => Date.now() - started < SECONDS * 1000), checkHealth)
}, SECONDS * 1000 + 120_000)

test('the server process survived every request and answers GET /health', async () => {
  const died = [...target.died].length
  expect({ running: target.running(), died: died ? `the process died ${died} time(s): see the crashes reported above` : 'never' }).toEqual({ running: true, died: 'never' })
  const answer = await runner.probe({ name: 'GET /health at the end', group: 'health', kinds: [], method: 'GET', target: '/health', anonymous: true })
  expect(answer?.status).toBe(200)
}, 30_000)

test('the key was charged exactly what the answers said: refused calls free, nothing twice', async () => {
  if (!target.running()) await target.restart(true)
  await phase('metering', async () => {
    log(await checkMetering(target, runner.findings))
  })
}, 120_000)
