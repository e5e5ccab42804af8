import cds from '@sap/cds'
import { jobSettings } from '../../srv/chainb/jobs/config.ts'
import { JobRunner } from '../../srv/chainb/jobs/runner.ts'
import { CHAINB, grantCaller, produce, randomHash, waitFor } from './support.ts'

/**
 * Fair shares in the chain-B job queue, self-hosted (each caller a product grant, so each test has
 * owners of its own): a bound on one owner's open jobs, owners served in turn, and proving jobs
 * claimed only while the runner has a prover thread for them. The server's own runner is off; the
 * tests take jobs with runners of their own, one tick at a time, so every claim is one they made.
 */

process.env.CHAIN_B_JOBS_RUNNER = 'false'
process.env.CHAIN_B_JOBS_MAX_QUEUED_PER_OWNER = '4'
process.env.CHAIN_B_ZK_PROVERS = '1'
const { POST, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true

afterAll(() => {
  for (const name of ['CHAIN_B_JOBS_RUNNER', 'CHAIN_B_JOBS_MAX_QUEUED_PER_OWNER', 'CHAIN_B_ZK_PROVERS']) delete process.env[name]
})

type Caller = Awaited<ReturnType<typeof grantCaller>>
interface JobRow { ID: string; owner: string; kind: string; status: string }

const OPEN = ['queued', 'running', 'submitted']
const jobsTable = () => cds.entities('chainb').Jobs

interface Answer { status: number; data: any; headers: Record<string, string> }

const anchor = (caller: Caller, body: object = {}): Promise<Answer> => POST(`${CHAINB}/anchorDocument`, { sha256: randomHash(), ...body }, caller.config)

async function jobsOf(ids: string[]): Promise<JobRow[]> {
  return SELECT.from(jobsTable()).columns('ID', 'owner', 'kind', 'status').where({ ID: { in: ids } })
}

const openJobsOf = async (caller: Caller) => (await SELECT.from(jobsTable()).columns('ID').where({ owner: caller.owner, status: { in: OPEN } })).length

/** A runner of this test's own (another instance id), as the server would run it. */
const runnerOf = (instance: string, concurrency: number) => new JobRunner(async () => undefined, { ...jobSettings(), enabled: true, concurrency }, instance)

/** Ticks the runner (producing a block each round) until the jobs are confirmed or failed. */
async function settle(runner: JobRunner, ids: string[]): Promise<JobRow[]> {
  return waitFor(`jobs ${ids.join(', ')} settled`, async () => {
    await runner.tick()
    await runner.idle()
    produce(1)
    const jobs = await jobsOf(ids)
    return jobs.every(job => !OPEN.includes(job.status)) && jobs
  }, 60_000)
}

// Every test starts with an empty queue: what an earlier test left open is closed out.
beforeEach(async () => {
  await UPDATE(jobsTable()).set({ status: 'failed', errorCode: 'TEST_CLEANUP', leaseOwner: null }).where({ status: { in: OPEN } })
})

describe('the bound on one owner\'s open jobs (CHAIN_B_JOBS_MAX_QUEUED_PER_OWNER = 4)', () => {
  test('beyond it a write answers 429 TOO_MANY_QUEUED_JOBS with Retry-After and queues nothing; another owner is accepted', async () => {
    const [flooder, other] = await Promise.all([grantCaller(), grantCaller()])
    for (let i = 0; i < 4; i++) expect((await anchor(flooder)).status).toBe(200)
    const sha256 = randomHash()
    const refused = await anchor(flooder, { sha256 })
    expect(refused.data.error).toMatchObject({ code: 'TOO_MANY_QUEUED_JOBS', message: expect.stringContaining('4') })
    expect(refused.status).toBe(429)
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
    expect(await openJobsOf(flooder)).toBe(4)
    expect(await SELECT.from(cds.entities('chainb').Documents).where({ payloadHash: sha256 })).toEqual([])

    const accepted = await anchor(other)
    expect(accepted.data).toMatchObject({ status: 'queued', jobId: expect.any(String) })
    expect(accepted.status).toBe(200)
  })

  test('concurrent writes of one owner: exactly the bound is queued, the rest refused', async () => {
    const flooder = await grantCaller()
    const answers = await Promise.all(Array.from({ length: 12 }, () => anchor(flooder)))
    const statuses = answers.map(answer => answer.status).sort()
    expect(statuses).toEqual([...Array(4).fill(200), ...Array(8).fill(429)])
    expect(answers.filter(answer => answer.status === 429).every(answer => answer.data.error.code === 'TOO_MANY_QUEUED_JOBS')).toBe(true)
    expect(await openJobsOf(flooder)).toBe(4)
  })

  test('at the bound a repeated request still answers its job; once a job is confirmed there is room again', async () => {
    const caller = await grantCaller()
    const bodies = Array.from({ length: 4 }, (_, i) => ({ sha256: randomHash(), idempotencyKey: `bound-${i}` }))
    const first = []
    for (const body of bodies) first.push(await anchor(caller, body))
    const replay = await anchor(caller, bodies[0])
    expect(replay.data).toMatchObject({ jobId: first[0].data.jobId })
    expect(replay.headers['x-idempotent-replay']).toBe('true')
    expect((await anchor(caller, { ...bodies[0], sha256: randomHash() })).data.error.code).toBe('IDEMPOTENCY_KEY_REUSED')
    expect((await anchor(caller, { idempotencyKey: 'bound-4' })).status).toBe(429)

    const [confirmed] = await settle(runnerOf('bound-runner', 1), [first[0].data.jobId])
    expect(confirmed.status).toBe('confirmed')
    const after = await anchor(caller, { idempotencyKey: 'bound-4' })
    expect(after.data).toMatchObject({ status: 'queued' })
    expect(after.status).toBe(200)
  })
})

describe('claims serve owners in turn', () => {
  test('least recently served owner first, then its oldest job: a newcomer waits for one job of the owner with a burst, not for the burst', async () => {
    const [burst, single, pair] = await Promise.all([grantCaller(), grantCaller(), grantCaller()])
    const queue = async (caller: Caller, n: number) => {
      const ids: string[] = []
      for (let i = 0; i < n; i++) ids.push((await anchor(caller)).data.jobId)
      return ids
    }
    const ids = [...await queue(burst, 4), ...await queue(single, 1), ...await queue(pair, 2)]
    const ownerName = new Map([[burst.owner, 'burst'], [single.owner, 'single'], [pair.owner, 'pair']])

    const runner = runnerOf('turns-runner', 1)
    const served: string[] = []
    const taken = new Set<string>()
    for (let round = 0; round < ids.length; round++) {
      // Claim times differ from round to round, so "least recently served" is never a tie.
      await new Promise(resolve => setTimeout(resolve, 5))
      await runner.tick()
      await runner.idle()
      const claimed = (await jobsOf(ids)).filter(job => job.status !== 'queued' && !taken.has(job.ID))
      expect(claimed).toHaveLength(1)
      taken.add(claimed[0].ID)
      served.push(ownerName.get(claimed[0].owner)!)
    }
    expect(served).toEqual(['burst', 'single', 'pair', 'burst', 'pair', 'burst', 'burst'])
    expect((await settle(runner, ids)).map(job => job.status)).toEqual(Array(7).fill('confirmed'))
  })
})

describe('proving jobs are claimed only while the runner has a prover thread for them', () => {
  test('with one prover thread a runner takes one proving job at a time; other jobs go on meanwhile', async () => {
    const caller = await grantCaller()
    const runner = runnerOf('prover-runner', 4)
    const document = { id: 'fair-1', total: 1234.5 }
    const content = { documentJson: JSON.stringify(document), proofFieldsJson: JSON.stringify(['total']) }
    const prepared = (await POST(`${CHAINB}/prepareDocumentProof`, content, caller.config)).data
    const anchored = await anchor(caller, { sha256: prepared.payloadHash, ...content, saltSeed: prepared.opening.saltSeed })
    expect((await settle(runner, [anchored.data.jobId]))[0].status).toBe('confirmed')

    const [total] = prepared.fields
    const witness = { payloadHash: prepared.payloadHash, fieldKey: total.fieldKey, fieldSalt: total.salt, siblingsJson: JSON.stringify(total.siblings), dirsJson: JSON.stringify(total.dirs) }
    const proofs = []
    for (const threshold of ['1', '2', '3']) {
      const answer = await POST(`${CHAINB}/issueFieldPredicateAttestation`, { ...witness, value: total.value, scale: total.scale, predicate: 'greaterOrEqual', threshold }, caller.config)
      expect(answer.status).toBe(200)
      proofs.push(answer.data.jobId as string)
    }
    const plain = (await anchor(caller)).data.jobId as string

    await runner.tick()
    const proving = (await jobsOf(proofs)).filter(job => job.status !== 'queued')
    expect(proving).toHaveLength(1)
    expect((await jobsOf([plain]))[0].status).not.toBe('queued')

    await runner.idle()
    await runner.tick()
    expect((await jobsOf(proofs)).filter(job => job.status !== 'queued')).toHaveLength(2)

    expect((await settle(runner, [...proofs, plain])).map(job => job.status)).toEqual(Array(4).fill('confirmed'))
  }, 90_000)
})
