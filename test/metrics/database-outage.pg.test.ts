import cds from '@sap/cds'
import { randomBytes } from 'node:crypto'
import { Client } from 'pg'
import { has, scrape, scrapeUntil, total } from '../support/metrics.ts'

/**
 * The database not answering (PostgreSQL): a scrape still answers 200 within its time-out, with
 * what the instance knows without the database, says which values it could not read, and leaves
 * them out. (Reads that fail at once are tested in self-hosted.test.ts.) SQLite in memory has no
 * second client to hold it: the test runs on PostgreSQL only (`*.pg.test.ts`, see jest.config.js).
 */
const TOKEN = randomBytes(32).toString('hex')
process.env.METRICS_TOKEN = TOKEN
process.env.METRICS_COLLECT_TIMEOUT_MS = '1500'
const app: { url: string } = cds.test(__dirname + '/../..') as any
afterAll(() => {
  delete process.env.METRICS_TOKEN
  delete process.env.METRICS_COLLECT_TIMEOUT_MS
})

const database = () => String((cds.env.requires.db as { credentials?: { database?: string } }).credentials?.database)

/**
 * Holds the tables the scrape reads locked in a transaction of another client: the scrape's reads
 * wait as they would on a database that does not answer (a saturated or stalled server). Ending a
 * connection the pool holds would instead make its idle clients emit errors nobody handles, the
 * issue the database recovery deals with.
 */
async function lockTables(): Promise<Client> {
  const client = new Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database: database() })
  await client.connect()
  await client.query('BEGIN')
  await client.query('LOCK TABLE chainb_jobs, chaina_syncstate, chainb_syncstate IN ACCESS EXCLUSIVE MODE')
  return client
}

test('with the database not answering, a scrape answers what is known within its time-out', async () => {
  await scrapeUntil(app.url, TOKEN, found => total(found, 'cag_metrics_collector_up', { collector: 'job_queue' }) === 1 && has(found, 'cag_chain_b_jobs'))
  const locks = await lockTables()
  try {
    const answer = await scrape(app.url, TOKEN)
    expect(answer.status).toBe(200)
    expect(total(answer.samples, 'cag_metrics_collector_up', { collector: 'follower_lag' })).toBe(0)
    expect(total(answer.samples, 'cag_metrics_collector_up', { collector: 'job_queue' })).toBe(0)
    expect(total(answer.samples, 'cag_metrics_collector_up', { collector: 'db_pool' })).toBe(1)
    expect(has(answer.samples, 'cag_chain_b_jobs')).toBe(false)
    expect(has(answer.samples, 'cag_follower_lag_blocks')).toBe(false)
    expect(has(answer.samples, 'cag_db_pool_max_connections')).toBe(true)
    expect(has(answer.samples, 'cag_process_resident_memory_bytes')).toBe(true)
    expect(has(answer.samples, 'cag_http_requests_total', { family: '/metrics', status: '2xx' })).toBe(true)
  } finally {
    await locks.query('ROLLBACK')
    await locks.end()
  }
  // Once the database answers again, so do the values read at scrape.
  await scrapeUntil(app.url, TOKEN, found => total(found, 'cag_metrics_collector_up', { collector: 'job_queue' }) === 1 && has(found, 'cag_chain_b_jobs'))
})
