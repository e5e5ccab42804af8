import cds from '@sap/cds'
import type { ScheduledJob } from '../../srv/lib/scheduled-job.ts'

const JOB_OWNERS = ['ChainATransactionService', 'ChainASignService']

/** The services' expiry jobs, once started (after the start-up check of the upstream chain). */
export async function expiryJobs(): Promise<ScheduledJob[]> {
  for (let waited = 0; waited < 10_000; waited += 20) {
    const jobs = JOB_OWNERS.map(name => (cds.services[name] as unknown as { expiry?: ScheduledJob } | undefined)?.expiry)
    if (jobs.every(job => job)) return jobs as ScheduledJob[]
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  throw new Error(`the expiry jobs of ${JOB_OWNERS.join(' and ')} did not start`)
}

/** Runs the expiry jobs of builds and of signing requests now, as their schedule would next. */
export async function runExpiryJobs() {
  for (const job of await expiryJobs()) await job.runNow()
}
