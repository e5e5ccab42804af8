import { randomBytes } from 'node:crypto'
import { collectAll, type Collector } from '../../srv/metrics/collectors.ts'
import { metricsProductionProblems } from '../../srv/metrics/config.ts'
import { productionProblems } from '../../srv/lib/production-settings.ts'
import { collectorUp, outcomeOfError, outcomeOfStatus, registry } from '../../srv/metrics/instruments.ts'
import { parseSamples, total } from '../support/metrics.ts'

/**
 * The values read at scrape: a reader that fails or does not answer in time is reported down and
 * its metrics are left out, and the scrape goes on; the outcome labels of upstream calls; the
 * production check of the token.
 */

const samples = async () => parseSamples(await registry.metrics())

function collector(name: string, read: Collector['read']): Collector & { left: number } {
  return { name, read, left: 0, leaveOut() { this.left++ } }
}

test('one reader failing and one hanging: the others are read, both reported down and left out, within the time-out', async () => {
  const values: number[] = []
  const fine = collector('fine', () => () => void values.push(1))
  const failing = collector('failing', async () => {
    throw new Error('Client has encountered a connection error and is not queryable')
  })
  const hanging = collector('hanging', () => new Promise<never>(() => undefined))
  const started = Date.now()
  await collectAll([fine, failing, hanging], 200)
  expect(Date.now() - started).toBeLessThan(20_000)
  expect(values).toEqual([1])
  expect([failing.left, hanging.left, fine.left]).toEqual([1, 1, 0])
  const found = await samples()
  expect(total(found, 'cag_metrics_collector_up', { collector: 'fine' })).toBe(1)
  expect(total(found, 'cag_metrics_collector_up', { collector: 'failing' })).toBe(0)
  expect(total(found, 'cag_metrics_collector_up', { collector: 'hanging' })).toBe(0)
  collectorUp.reset()
})

test('what a reader read too late is not applied', async () => {
  let applied = false
  let finish: () => void = () => undefined
  const late = collector('late', () => new Promise(resolve => {
    finish = () => resolve(() => {
      applied = true
    })
  }))
  await collectAll([late], 50)
  finish()
  await new Promise(resolve => setImmediate(resolve))
  expect(applied).toBe(false)
  expect(late.left).toBe(1)
  collectorUp.reset()
})

test.each([
  [200, 'ok'], [304, 'ok'], [404, 'not_found'], [400, 'rejected'], [403, 'rejected'],
  [429, 'rate_limited'], [402, 'rate_limited'], [418, 'rate_limited'], [500, 'failed'], [503, 'failed'],
])('an upstream answering %i: %s', (status, outcome) => {
  expect(outcomeOfStatus(status)).toBe(outcome)
})

test.each([
  ['a Blockfrost server error', Object.assign(new Error('x'), { status_code: 404 }), 'not_found'],
  ['a fetch time-out', Object.assign(new Error('x'), { name: 'TimeoutError' }), 'timeout'],
  ['a Blockfrost client time-out', Object.assign(new Error('x'), { code: 'ETIMEDOUT' }), 'timeout'],
  ['a refused connection', Object.assign(new Error('x'), { code: 'ECONNREFUSED' }), 'unreachable'],
  ['anything else', 'text', 'unreachable'],
])('an upstream call throwing %s: %s', (_name, error, outcome) => {
  expect(outcomeOfError(error)).toBe(outcome)
})

describe('the production check of METRICS_TOKEN', () => {
  afterEach(() => {
    delete process.env.METRICS_TOKEN
  })

  test('unset: no problem (/metrics is off)', () => {
    expect(metricsProductionProblems()).toEqual([])
  })

  test('strong: no problem', () => {
    process.env.METRICS_TOKEN = randomBytes(32).toString('hex')
    expect(metricsProductionProblems()).toEqual([])
  })

  test('a time-out that is not a positive number: named', () => {
    process.env.METRICS_COLLECT_TIMEOUT_MS = '-5'
    try {
      expect(() => metricsProductionProblems()).toThrow(/METRICS_COLLECT_TIMEOUT_MS/)
      expect(productionProblems([metricsProductionProblems])).toEqual([expect.stringMatching(/^Setting METRICS_COLLECT_TIMEOUT_MS must be a positive number/)])
    } finally {
      delete process.env.METRICS_COLLECT_TIMEOUT_MS
    }
  })

  test('weak: named, without its value', () => {
    process.env.METRICS_TOKEN = 'metrics'
    const problems = metricsProductionProblems()
    expect(problems).toHaveLength(1)
    expect(problems[0]).toMatch(/^METRICS_TOKEN is too weak: 7 characters/)
    expect(problems[0]).not.toContain("'metrics'")
  })
})
