import cds from '@sap/cds'
import { EventEmitter } from 'node:events'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { outsideRequest, RequestEnded, setRequestDeadline, stopIfAnswered, tieWorkToAnswer } from '../../srv/lib/request-work.ts'
import { scheduleJob } from '../../srv/lib/scheduled-job.ts'
import { onPostgres } from '../setup/postgres.ts'

/**
 * A request's work ends with its answer: what still runs for it afterwards stops at its next step,
 * work it started for later does not, and on PostgreSQL a statement ends at the request's deadline.
 */
cds.test(__dirname + '/../..')

/** Runs `work` as the handling of a request whose response is the returned emitter (emit 'close' to answer it). */
function inRequest<T>(work: (answered: () => void) => Promise<T>): Promise<T> {
  const res = new EventEmitter()
  return new Promise((resolve, reject) => {
    tieWorkToAnswer({} as IncomingMessage, res as unknown as ServerResponse, () => {
      work(() => res.emit('close')).then(resolve, reject)
    })
  })
}

test('once the request is answered, the work still running for it stops at its next step', async () => {
  const steps: string[] = []
  const outcome = await inRequest(async answered => {
    stopIfAnswered()
    steps.push('before the answer')
    answered()
    try {
      stopIfAnswered()
      steps.push('after the answer')
    } catch (error) {
      return error
    }
  })
  expect(outcome).toBeInstanceOf(RequestEnded)
  expect(outcome).toMatchObject({ status: 503, code: 'REQUEST_ENDED' })
  expect(steps).toEqual(['before the answer'])
})

test('work a request starts for later is not stopped with it: outside the request, and a scheduled job it kicks', async () => {
  const ran: string[] = []
  const job = scheduleJob('test job', 3_600_000, async () => {
    stopIfAnswered()
    ran.push('job')
  })
  let later: Promise<void> | undefined
  await inRequest(async answered => {
    later = new Promise<void>(resolve => outsideRequest(() => setImmediate(() => {
      stopIfAnswered()
      ran.push('outside')
      resolve()
    })))
    const kicked = job.runNow()
    answered()
    await kicked
  })
  await later
  await job.stop()
  expect(ran.sort()).toEqual(['job', 'outside'])
})

test('outside any request nothing is stopped', () => {
  expect(() => stopIfAnswered()).not.toThrow()
})

// SQLite runs a statement synchronously and cannot interrupt it; there the row budget bounds a read.
if (onPostgres()) describe('on PostgreSQL', () => {
  test('a statement of a request ends at the request\'s deadline (query_canceled), and the answer code names it', async () => {
    const error = await inRequest(async () => {
      setRequestDeadline(Date.now() + 300)
      return cds.tx(tx => tx.run('SELECT pg_sleep(5)')).then(() => undefined, failure => failure)
    })
    expect(error).toMatchObject({ code: '57014' })
  })

  test('a transaction outside a request has no statement deadline, whatever ran on its connection before', async () => {
    await inRequest(async () => {
      setRequestDeadline(Date.now() + 20_000)
      await cds.tx(tx => tx.run('SELECT 1'))
    })
    const rows = await cds.tx(tx => tx.run("SELECT current_setting('statement_timeout') AS timeout"))
    expect(rows[0].timeout).toBe('0')
  })
})
