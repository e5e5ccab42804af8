import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { RunningServer } from '../support/server.ts'
import { callAs, onPostgres, randomHash, startAppServer, startStandaloneChainB, vaultCallsOn, waitFor, type StandaloneChainB } from './support.ts'

// Real processes: a standalone chain-B devnet (its CLI, blocks on request over its HTTP control API)
// and spawned application servers, gateway off, the caller the mocked user alice. Jobs are read
// back through the servers' own API (alice is an operator: she sees every job).

interface JobRow { ID: string; status: string; attempt: number; txHash: string | null; errorCode: string | null; leaseOwner?: string | null }

async function jobsOf(server: RunningServer, ids: string[]): Promise<JobRow[]> {
  const { status, data } = await callAs('alice', server.url, 'GET', 'Jobs?$top=1000&$select=ID,status,attempt,txHash,errorCode')
  if (status !== 200) throw new Error(`reading the jobs answered ${status}: ${JSON.stringify(data)}`)
  const wanted = new Set(ids)
  return (data.value as JobRow[]).filter(job => wanted.has(job.ID))
}

/** n requests, at most `parallel` at a time (a burst larger than the database pool only measures the pool). */
async function inBatches<T>(n: number, parallel: number, request: (i: number) => Promise<T>): Promise<T[]> {
  const answers: T[] = []
  for (let i = 0; i < n; i += parallel) answers.push(...await Promise.all(Array.from({ length: Math.min(parallel, n - i) }, (_, j) => request(i + j))))
  return answers
}

/** Each of the jobs' transactions is on the devnet exactly once, as a vault call. */
async function expectOneVaultCallEach(devnet: StandaloneChainB, hashes: string[]) {
  expect(new Set(hashes).size).toBe(hashes.length)
  const calls = await vaultCallsOn(devnet)
  const ours = new Set(hashes)
  expect(calls.filter(hash => ours.has(hash)).sort()).toEqual([...hashes].sort())
  return calls
}

/** Produces a block at a time until every job is confirmed (or one failed); answers the jobs. */
async function confirmAll(devnet: StandaloneChainB, server: RunningServer, ids: string[], timeoutMs = 20_000): Promise<JobRow[]> {
  return waitFor('every job confirmed', async () => {
    const jobs = await jobsOf(server, ids)
    if (jobs.length === ids.length && jobs.every(job => job.status === 'confirmed' || job.status === 'failed')) return jobs
    await devnet.produce(1)
    await new Promise(resolve => setTimeout(resolve, 50))
    return undefined
  }, timeoutMs)
}

async function anchor(server: RunningServer) {
  const { status, data } = await callAs('alice', server.url, 'POST', 'anchorDocument', { sha256: randomHash() })
  expect(data.error).toBeUndefined()
  expect(status).toBe(200)
  return data as { jobId: string; documentId: string }
}

const stopAll = async (servers: (RunningServer | undefined)[]) => {
  for (const server of servers) if (server?.running()) {
    server.stop()
    await server.exited
  }
}

describe('two server processes on one database (PostgreSQL, or one SQLite file), one devnet', () => {
  let devnet: StandaloneChainB
  const servers: RunningServer[] = []
  let folder: string | undefined

  beforeAll(async () => {
    // A lease far longer than a tick: a job is only taken over when its instance is really gone.
    // One caller's 30 jobs are all open at once (no block comes until they are queued): above the default bound.
    const shared: NodeJS.ProcessEnv = { CHAIN_B_JOBS_LEASE_MS: '10000', CHAIN_B_JOBS_MAX_QUEUED_PER_OWNER: '100' }
    if (!onPostgres()) {
      folder = mkdtempSync(join(tmpdir(), 'cag-chainb-instances-'))
      shared.CDS_REQUIRES_DB_CREDENTIALS_URL = join(folder, 'shared.sqlite')
    }
    devnet = await startStandaloneChainB()
    // The first creates the SQLite file's schema; the second joins it.
    servers.push(await startAppServer(devnet, shared))
    servers.push(await startAppServer(devnet, shared))
  }, 90_000)
  afterAll(async () => {
    await stopAll(servers)
    await devnet?.stop()
    if (folder) rmSync(folder, { recursive: true, force: true })
  })

  test('30 anchors sent alternately to both: each job confirmed exactly once, attempt 1, one vault call each on the devnet', async () => {
    const accepted = await inBatches(30, 6, i => anchor(servers[i % 2]))
    const ids = accepted.map(answer => answer.jobId)
    expect(new Set(ids).size).toBe(30)
    const jobs = await confirmAll(devnet, servers[0], ids)
    expect(jobs.map(job => [job.status, job.attempt, job.errorCode])).toEqual(Array(30).fill(['confirmed', 1, null]))
    // The chain holds one vault call per job, and no other.
    const calls = await expectOneVaultCallEach(devnet, jobs.map(job => job.txHash!))
    expect(calls).toHaveLength(30)
    // Both instances answer the same truth.
    expect((await jobsOf(servers[1], ids)).map(job => job.status)).toEqual(Array(30).fill('confirmed'))
  })

  test('proofs sent alternately to both: each proved by the server that holds its witness, all confirmed at the first attempt', async () => {
    // A witness opens only in the process that accepted it: had the other server claimed a proof, it would have failed WITNESS_LOST.
    const documentJson = JSON.stringify({ id: 'instances-1', total: 1234.5 })
    const proofFieldsJson = JSON.stringify(['total'])
    const prepared = (await callAs('alice', servers[0].url, 'POST', 'prepareDocumentProof', { documentJson, proofFieldsJson })).data
    const anchored = await callAs('alice', servers[1].url, 'POST', 'anchorDocument', { sha256: prepared.payloadHash, documentJson, proofFieldsJson, saltSeed: prepared.opening.saltSeed })
    expect(anchored.data.error).toBeUndefined()
    expect((await confirmAll(devnet, servers[0], [anchored.data.jobId]))[0].status).toBe('confirmed')
    const [total] = prepared.fields
    const witness = { payloadHash: prepared.payloadHash, fieldKey: total.fieldKey, value: total.value, scale: total.scale, fieldSalt: total.salt, siblingsJson: JSON.stringify(total.siblings), dirsJson: JSON.stringify(total.dirs) }
    const accepted = await Promise.all([1, 2, 3, 4].map(threshold =>
      callAs('alice', servers[threshold % 2].url, 'POST', 'issueFieldPredicateAttestation', { ...witness, predicate: 'greaterOrEqual', threshold: String(threshold) })))
    for (const answer of accepted) expect(answer.data).toMatchObject({ status: 'queued', jobId: expect.any(String) })
    const jobs = await confirmAll(devnet, servers[0], accepted.map(answer => answer.data.jobId), 120_000)
    expect(jobs.map(job => [job.status, job.attempt, job.errorCode])).toEqual(Array(4).fill(['confirmed', 1, null]))
  }, 180_000)
})

describe('a server killed (SIGKILL) with jobs queued, running and submitted; a new one on the same database', () => {
  let devnet: StandaloneChainB
  let first: RunningServer | undefined
  let second: RunningServer | undefined
  let folder: string | undefined
  const database: NodeJS.ProcessEnv = {}

  beforeAll(async () => {
    // On SQLite the two servers, one after the other, share a database file.
    if (!onPostgres()) {
      folder = mkdtempSync(join(tmpdir(), 'cag-chainb-restart-'))
      database.CDS_REQUIRES_DB_CREDENTIALS_URL = join(folder, 'restart.sqlite')
    }
    devnet = await startStandaloneChainB()
    database.CHAIN_B_JOBS_LEASE_MS = '3000'
    first = await startAppServer(devnet, database)
  }, 60_000)
  afterAll(async () => {
    await stopAll([first, second])
    await devnet?.stop()
    if (folder) rmSync(folder, { recursive: true, force: true })
  })

  test('the new server resumes every job: all confirmed once blocks come, none lost, none doubled', async () => {
    // Submitted: accepted and sent to the devnet, no block produced.
    const submitted = await Promise.all(Array.from({ length: 6 }, () => anchor(first!)))
    await waitFor('submitted', async () => (await jobsOf(first!, submitted.map(a => a.jobId))).every(job => job.status === 'submitted'))
    // Running and queued: the devnet stops answering (SIGSTOP), so tries hang and go back to the queue.
    devnet.pause()
    const open = await Promise.all(Array.from({ length: 6 }, () => anchor(first!)))
    const ids = [...submitted, ...open].map(a => a.jobId)
    const atKill = await waitFor('running and queued jobs', async () => {
      const jobs = await jobsOf(first!, open.map(a => a.jobId))
      return jobs.some(job => job.status === 'running') && jobs.some(job => job.status === 'queued') && jobs
    }, 20_000)
    expect(atKill.every(job => ['queued', 'running'].includes(job.status))).toBe(true)
    first!.stop('SIGKILL')
    await first!.exited
    devnet.resume()

    second = await startAppServer(devnet, database)
    const jobs = await confirmAll(devnet, second, ids, 30_000)
    expect(jobs.map(job => job.status)).toEqual(Array(12).fill('confirmed'))
    // The submitted ones were taken over once their lease expired: one more claim, the same transaction.
    const byId = new Map(jobs.map(job => [job.ID, job]))
    for (const { jobId } of submitted) expect(byId.get(jobId)!.attempt).toBe(2)
    for (const job of jobs) expect(job.attempt).toBeLessThanOrEqual(2)
    await expectOneVaultCallEach(devnet, jobs.map(job => job.txHash!))
    for (const { documentId } of [...submitted, ...open]) {
      const { data } = await callAs('alice', second.url, 'GET', `Documents(${documentId})?$select=status`)
      expect(data.status).toBe('anchored')
    }
  })
})
