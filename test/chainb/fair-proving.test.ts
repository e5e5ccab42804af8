import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { RunningServer } from '../support/server.ts'
import { CHAINB, client, type Answer } from './attest.ts'
import { onPostgres, ROOT, startAppServer, startStandaloneChainB, vaultCallsOn, waitFor, type StandaloneChainB } from './support.ts'

/**
 * Fair shares in the proving queue, for real: a hosted server process (gateway on, one prover
 * thread) on a standalone chain-B devnet whose blocks come when the test asks. One key asks for 30
 * proofs at once, then a second key asks for one. Asserted by order on the chain, never by time.
 */

const BOUND = 20
const execute = promisify(execFile)

const settings: NodeJS.ProcessEnv = {
  GATEWAY_ENABLED: 'true', GATEWAY_RATE_PER_SECOND: '100000', GATEWAY_BURST: '100000',
  CHAIN_B_ZK_PROVERS: '1', CHAIN_B_JOBS_MAX_QUEUED_PER_OWNER: String(BOUND), CHAIN_B_JOBS_LEASE_MS: '30000',
}
let devnet: StandaloneChainB
let server: RunningServer | undefined
let folder: string | undefined
const keys: string[] = []

/** A key issued with the operator's command line, on the server's database. */
async function issueKey(units: number): Promise<string> {
  const { stdout } = await execute(process.execPath, ['srv/cli.ts', 'keys', 'issue', '--units', String(units), '--quiet'], {
    cwd: ROOT, env: { ...process.env, ...settings, CDS_TYPESCRIPT: 'true', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON' },
  })
  return /cag_\S+/.exec(stdout)![0]
}

/** A key's client that adds up what the gateway said it charged. */
function meteredClient(key: string) {
  const caller = client(server!.url, key)
  let charged = 0
  const counted = (answer: Answer) => {
    charged += Number(answer.charged ?? 0)
    return answer
  }
  return {
    post: async (path: string, body: object) => counted(await caller.post(path, body)),
    get: async (path: string) => counted(await caller.get(path)),
    charged: () => charged,
    unitsLeft: async () => Number((await caller.get('/me')).data.unitsLeft),
  }
}
type Metered = ReturnType<typeof meteredClient>

interface JobRow { ID: string; status: string; txHash: string | null }

const jobsOf = async (caller: Metered): Promise<JobRow[]> => (await caller.get(`${CHAINB}/Jobs?$select=ID,status,txHash&$top=1000`)).data.value

/** Produces a block whenever a job of the callers waits on one, until `done` says so. */
async function driveChain<T>(what: string, callers: Metered[], done: (jobs: JobRow[]) => T | undefined | false): Promise<T> {
  return waitFor(what, async () => {
    const jobs = (await Promise.all(callers.map(jobsOf))).flat()
    const result = done(jobs)
    if (result) return result
    if (jobs.some(job => job.status === 'submitted')) await devnet.produce(1)
    await new Promise(resolve => setTimeout(resolve, 100))
    return undefined
  }, 180_000)
}

/** A document with a provable `total`, anchored with its content root and confirmed. */
async function anchoredInvoice(caller: Metered, id: string) {
  const content = { documentJson: JSON.stringify({ id, total: 1234.5 }), proofFieldsJson: JSON.stringify(['total']) }
  const prepared = (await caller.post(`${CHAINB}/prepareDocumentProof`, content)).data
  const anchored = await caller.post(`${CHAINB}/anchorDocument`, { sha256: prepared.payloadHash, ...content, saltSeed: prepared.opening.saltSeed })
  expect(anchored.status).toBe(200)
  await driveChain(`the anchor of ${id}`, [caller], jobs => jobs.find(job => job.ID === anchored.data.jobId && job.status === 'confirmed'))
  const [total] = prepared.fields
  return { payloadHash: prepared.payloadHash, fieldKey: total.fieldKey, fieldSalt: total.salt, siblingsJson: JSON.stringify(total.siblings), dirsJson: JSON.stringify(total.dirs), value: total.value, scale: total.scale }
}

const proveAtLeast = (caller: Metered, witness: object, threshold: number) =>
  caller.post(`${CHAINB}/issueFieldPredicateAttestation`, { ...witness, predicate: 'greaterOrEqual', threshold: String(threshold) })

beforeAll(async () => {
  if (!onPostgres()) {
    folder = mkdtempSync(join(tmpdir(), 'cag-chainb-fair-'))
    settings.CDS_REQUIRES_DB_CREDENTIALS_URL = join(folder, 'fair.sqlite')
  }
  // Before the server starts: on SQLite the command line makes the database file the server then opens.
  keys.push(await issueKey(5000), await issueKey(1000))
  devnet = await startStandaloneChainB()
  server = await startAppServer(devnet, settings)
}, 90_000)
afterAll(async () => {
  if (server?.running()) {
    server.stop()
    await server.exited
  }
  await devnet?.stop()
  if (folder) rmSync(folder, { recursive: true, force: true })
})

test('one key asks for 30 proofs, then another for one: the 10 beyond the bound are refused uncharged, and the second key\'s proof waits for about one of the first key\'s, not for its burst', async () => {
  const [first, second] = keys.map(meteredClient)
  const unitsBefore = await Promise.all([first.unitsLeft(), second.unitsLeft()])
  const [firstWitness, secondWitness] = await Promise.all([anchoredInvoice(first, 'first'), anchoredInvoice(second, 'second')])

  // 30 proofs of distinct claims, five requests at a time (fewer than a key may have in flight);
  // no block comes meanwhile, so no job ends.
  const answers: Answer[] = []
  for (let batch = 0; batch < 6; batch++)
    answers.push(...await Promise.all(Array.from({ length: 5 }, (_, i) => proveAtLeast(first, firstWitness, 1 + batch * 5 + i))))
  const accepted = answers.filter(answer => answer.status === 200)
  const refused = answers.filter(answer => answer.status !== 200)
  expect(accepted.length).toBe(BOUND)
  for (const answer of accepted) expect(answer.charged).toBe('50')
  expect(refused.length).toBe(30 - BOUND)
  for (const answer of refused) {
    expect(answer.data.error.code).toBe('TOO_MANY_QUEUED_JOBS')
    expect(answer.status).toBe(429)
    expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0)
    expect(answer.charged).toBe('0')
  }

  const asked = await proveAtLeast(second, secondWitness, 1000)
  expect(asked.status).toBe(200)
  const waitingWhenAsked = (await jobsOf(first)).filter(job => job.status === 'queued').map(job => job.ID)
  const firstIds = accepted.map(answer => answer.data.jobId as string)
  const firstJobs = await driveChain('every proof confirmed', [first, second], jobs => {
    const mine = jobs.filter(job => [...firstIds, asked.data.jobId].includes(job.ID))
    return mine.length === BOUND + 1 && mine.every(job => job.status === 'confirmed') && jobs.filter(job => firstIds.includes(job.ID))
  })

  // The order on the chain: blocks by height, transactions in each block as submitted.
  const onChain = await vaultCallsOn(devnet)
  const place = (txHash: string | null) => onChain.indexOf(txHash!)
  const secondPlace = place((await jobsOf(second)).find(job => job.ID === asked.data.jobId)!.txHash)
  const firstAhead = firstJobs.filter(job => place(job.txHash) < secondPlace)
  expect(firstJobs.every(job => place(job.txHash) >= 0)).toBe(true)
  expect(firstAhead.length).toBeLessThan(BOUND - 4)
  expect(firstAhead.filter(job => waitingWhenAsked.includes(job.ID)).length).toBeLessThanOrEqual(1)

  // Its queue drained, the first key may ask again.
  expect((await proveAtLeast(first, firstWitness, 30)).status).toBe(200)

  // The units left are what the answers said they charged: nothing for the refusals.
  await waitFor('charges settled', async () => (await first.unitsLeft()) === unitsBefore[0] - first.charged() && (await second.unitsLeft()) === unitsBefore[1] - second.charged(), 30_000)
}, 300_000)
