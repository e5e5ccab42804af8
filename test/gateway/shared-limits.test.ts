import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { sendFrom } from '../support/gateway.ts'
import { startGateways, type Gateways } from '../support/lane-gateways.ts'
import { startDevnet } from '../support/devnet.ts'
import type { ChainADevnet } from '../../devnet/chain-a/index.ts'
import type { RunningServer } from '../support/server.ts'

/**
 * Limits across instances: two gateway processes on one database (a shared SQLite file, or a
 * PostgreSQL database of their own). Failed keys are counted in the database, so the two allow as
 * many as one; a key's token bucket is shared by the live instances, each enforcing its share.
 */

const root = join(__dirname, '..', '..')
let devnet: ChainADevnet
let gateways: Gateways

beforeAll(async () => {
  devnet = await startDevnet()
  gateways = await startGateways(2, devnet, {
    // A heartbeat of 5 s (the default): an instance counts the other gone only after 15 s without one,
    // so a busy machine's pauses never make either take the whole burst.
    GATEWAY_AUTH_FAILURES: '20', GATEWAY_RATE_PER_SECOND: '0.01', GATEWAY_BURST: '10', GATEWAY_INSTANCE_HEARTBEAT_S: '5',
  })
  await Promise.all(gateways.servers.map(server => sawBothInstances(server)))
}, 300_000)

afterAll(async () => {
  await gateways?.stop()
  await devnet?.stop()
}, 120_000)

/** Waits until the instance says that it shares its limits with the other one (its heartbeat saw both). */
async function sawBothInstances(server: RunningServer) {
  for (let waited = 0; waited < 60_000; waited += 100) {
    if (server.output().includes('limits are shared by 2 live instances')) return
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  throw new Error(`the instance never saw the other one:\n${server.output()}`)
}

const me = (server: RunningServer, from: string, token: string) => sendFrom(server.url, 'GET', '/me', { from, token })

test('failed keys count across both instances: 10 on each with a limit of 20, then the 21st on either is 429', async () => {
  const [first, second] = gateways.servers
  const from = '127.0.0.20'
  const answers = []
  for (const server of [first, second]) for (let i = 0; i < 10; i++) answers.push((await me(server, from, 'cag_bogus')).status)
  expect(answers).toEqual(Array(20).fill(401))
  for (const server of [first, second]) {
    const limited = await me(server, from, 'cag_bogus')
    expect(limited.body.error.code).toBe('TOO_MANY_FAILED_ATTEMPTS')
    expect(limited.status).toBe(429)
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
  }
  expect((await me(second, '127.0.0.21', 'cag_bogus')).status).toBe(401)
}, 60_000)

test('a key\'s rate limit holds across both instances: a burst of 10 allows 10 calls in all, 5 on each', async () => {
  const { stdout } = await promisify(execFile)('npm', ['run', '-s', 'gateway', '--', 'keys', 'issue', '--units', '100', '--plan', 'standard', '--quiet'], { cwd: root, env: gateways.env })
  const key = stdout.trim().split('\n').at(-1)!
  expect(key).toMatch(/^cag_/)
  const statuses: number[][] = [[], []]
  for (let i = 0; i < 20; i++) statuses[i % 2].push((await me(gateways.servers[i % 2], '127.0.0.22', key)).status)
  // Each instance takes its share, burst/2 = 5 calls (the refill, 0.005 calls a second each, adds none here).
  for (const answered of statuses) expect(answered).toEqual([...Array(5).fill(200), ...Array(5).fill(429)])
}, 120_000)
