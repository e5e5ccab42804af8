import cds from '@sap/cds'
import { scheduleJob } from '../../srv/lib/scheduled-job.ts'
import { FailureStreak } from '../../srv/lib/failure-streak.ts'

/**
 * Work that runs again and again logs its failures once per change of state: the first failure,
 * a reminder with the count while it lasts, a different error, then the recovery with the count;
 * a scheduled job that fails on every run (the database gone) writes no line per run.
 */
cds.test(__dirname + '/../..')

let lines: string[] = []
const spies: jest.SpyInstance[] = []
beforeEach(() => {
  lines = []
  for (const method of ['error', 'warn', 'info', 'log'] as const) {
    spies.push(jest.spyOn(console, method).mockImplementation((...args: unknown[]) => void lines.push(args.map(each => (each as Error)?.message ?? String(each)).join(' '))))
  }
})
afterEach(() => {
  for (const spy of spies.splice(0)) spy.mockRestore()
})

async function until(what: string, condition: () => boolean) {
  for (let waited = 0; waited < 20_000; waited += 10) {
    if (condition()) return
    await new Promise(resolve => setTimeout(resolve, 10))
  }
  throw new Error(`${what} did not happen; logged:\n${lines.join('\n')}`)
}

test('a job that fails on every run logs its first failure, then, once it works again, that it recovered and after how many', async () => {
  const FAILURES = 12
  let runs = 0
  let succeeded = false
  const job = scheduleJob('flaky test job', 5, async () => {
    runs++
    if (runs <= FAILURES) throw new Error('connect ECONNREFUSED 127.0.0.1:5432')
    succeeded = true
  })
  try {
    await until('a successful run', () => succeeded)
    await until('the recovery line', () => lines.some(line => line.includes('recovered')))
  } finally {
    await job.stop()
  }
  const about = lines.filter(line => line.includes('flaky test job') || line.includes('ECONNREFUSED') || line.includes('background job'))
  expect(about).toEqual([
    expect.stringMatching(/flaky test job failed; it runs again in 5 ms: connect ECONNREFUSED/),
    expect.stringMatching(new RegExp(`flaky test job recovered after ${FAILURES} failures in \\d+ s`)),
  ])
})

test('a streak reminds of itself with the count every reminder interval, and a different error is logged as such', () => {
  let now = 1_000_000
  const logged: string[] = []
  const log = { error: (...args: unknown[]) => void logged.push(args.map(each => (each as Error)?.message ?? String(each)).join(' ')), info: (...args: unknown[]) => void logged.push(args.join(' ')) }
  const streak = new FailureStreak('the follower', { log: log as any, reminderMs: 60_000, now: () => now })
  const outage = Object.assign(new Error('Client has encountered a connection error'), { code: 'ECONNRESET' })
  for (let second = 0; second < 150; second++, now += 1000) streak.failed(outage)
  streak.failed(new Error('relation "sync_state" does not exist'))
  now += 1000
  streak.failed(new Error('relation "sync_state" does not exist'))
  streak.succeeded()
  streak.succeeded()
  expect(logged).toEqual([
    'the follower failed: Client has encountered a connection error',
    'the follower still failing (61 failures in 60 s), the same error: ECONNRESET Client has encountered a connection error',
    'the follower still failing (121 failures in 120 s), the same error: ECONNRESET Client has encountered a connection error',
    'the follower fails differently now (151 failures in 150 s): relation "sync_state" does not exist',
    'the follower recovered after 152 failures in 151 s',
  ])
  expect(streak.failures).toBe(0)
})
