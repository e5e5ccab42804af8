import cds from '@sap/cds'
import { JobRunner } from '../../srv/chainb/jobs/runner.ts'
import { jobSettings } from '../../srv/chainb/jobs/config.ts'
import { as, CHAINB, ledger, produce, randomHash, waitFor } from './support.ts'

// Several instances on one database: each runner claims with a guarded UPDATE, so every job runs
// once. Here two more runners (other instance ids) compete with the server's own on the same
// database; with CDS_ENV=pg that is PostgreSQL. The chain is the devnet the application embedded, over
// HTTP. (Two server processes: instances.test.ts.)
process.env.CHAIN_B_JOBS_POLL_MS = '10'
// One owner's 30 jobs are all open at once here (no block comes until they are queued): above the default bound.
process.env.CHAIN_B_JOBS_MAX_QUEUED_PER_OWNER = '100'
const { POST, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true

test('many jobs, three runners: every job confirmed once, each with attempt 1, one transaction each', async () => {
  const noEvents = async () => undefined
  const runners = ['runner-a', 'runner-b'].map(id => new JobRunner(noEvents, { ...jobSettings(), concurrency: 3 }, id))
  let racing = true
  // As the scheduler does (srv/lib/scheduled-job.ts), a tick that failed (the database pool busy) is simply run again.
  const failedTicks: unknown[] = []
  const race = Promise.all(runners.map(async runner => { while (racing) { await runner.tick().catch(error => failedTicks.push(error)); await new Promise(r => setTimeout(r, 5)) } }))
  // Ten at a time: a burst larger than the database pool only measures the pool.
  const accepted = []
  for (let i = 0; i < 3; i++) accepted.push(...await Promise.all(Array.from({ length: 10 }, () => POST(`${CHAINB}/anchorDocument`, { sha256: randomHash() }, as('bob')))))
  const ids = accepted.map((a: any) => a.data.jobId as string)
  const { Jobs } = cds.entities('chainb')
  try {
    await waitFor('all jobs confirmed', async () => {
      produce(1)
      const open = await SELECT.from(Jobs).columns('ID').where({ ID: { in: ids }, status: { '!=': 'confirmed' } })
      return open.length === 0
    }, 30_000)
  } finally {
    racing = false
    await race
    await Promise.all(runners.map(runner => runner.idle()))
  }
  const jobs = await SELECT.from(Jobs).where({ ID: { in: ids } })
  expect(jobs.map((job: any) => job.attempt)).toEqual(Array(30).fill(1))
  const hashes = jobs.map((job: any) => job.txHash)
  expect(new Set(hashes).size).toBe(30)
  for (const hash of hashes) expect(ledger().transactionsByHash(hash)).toHaveLength(1)
})
