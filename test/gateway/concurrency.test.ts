import cds from '@sap/cds'
import { startServer, type RunningServer } from '../support/server.ts'
import { join } from 'node:path'
import { runningDevnet } from '../support/chain-a.ts'
import { balanceOf, issueTestKey, ledgerOf, ledgerSum, settled } from '../support/gateway.ts'

process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_RATE_PER_SECOND = '1000000'
process.env.GATEWAY_BURST = '1000000'
process.env.GATEWAY_MAX_CALLS_IN_FLIGHT = '1000000'
// Exactness under contention is the point here, not admission control (test/gateway/admission.test.ts).
process.env.GATEWAY_MAX_INSTANCE_CALLS = '1000000'
const app: { url: string } = cds.test(__dirname + '/../..') as any

const onPostgres = (process.env.CDS_ENV ?? '').split(',').includes('pg')
let address: string

beforeAll(() => {
  address = runningDevnet().wallets()[0].address
})
afterAll(() => {
  delete process.env.GATEWAY_ENABLED
  delete process.env.GATEWAY_RATE_PER_SECOND
  delete process.env.GATEWAY_BURST
  delete process.env.GATEWAY_MAX_CALLS_IN_FLIGHT
  delete process.env.GATEWAY_MAX_INSTANCE_CALLS
})

interface Run {
  successes: number
  refusals: number
  others: number[]
  lowestLeftSeen: number
}

/**
 * N clients share `attempts` calls of a read action (price c = 2) against servers in turn; a reader
 * samples the balance while they run. Every status and every x-access-units-left is recorded.
 */
async function hammer(urls: string[], key: string, clients: number, attempts: number): Promise<Run> {
  const run: Run = { successes: 0, refusals: 0, others: [], lowestLeftSeen: Number.POSITIVE_INFINITY }
  let next = 0
  const call = async (url: string) => {
    const response = await fetch(`${url}/odata/v4/chaina-odata/GetAddressByBech32`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ address }),
    })
    await response.arrayBuffer()
    run.lowestLeftSeen = Math.min(run.lowestLeftSeen, Number(response.headers.get('x-access-units-left')))
    if (response.status === 200) run.successes++
    else if (response.status === 402) run.refusals++
    else run.others.push(response.status)
  }
  let reading = true
  const reader = (async () => {
    while (reading) {
      const me = await fetch(`${urls[0]}/me`, { headers: { authorization: `Bearer ${key}` } })
      run.lowestLeftSeen = Math.min(run.lowestLeftSeen, (await me.json()).unitsLeft)
    }
  })()
  await Promise.all(Array.from({ length: clients }, async (_, client) => {
    while (next < attempts) {
      next++
      await call(urls[(client + next) % urls.length])
    }
  }))
  reading = false
  await reader
  return run
}

async function expectExact(urls: string[], clients: number) {
  const M = 101
  const c = 2
  const { id, key } = await issueTestKey({ units: M })
  const attempts = Math.ceil((3 * M) / c)
  const run = await hammer(urls, key, clients, attempts)
  await settled(id)
  const entries = await ledgerOf(id)
  expect(run.others).toEqual([])
  expect(run.successes).toBe(Math.floor(M / c))
  expect(run.refusals).toBe(attempts - Math.floor(M / c))
  expect(run.lowestLeftSeen).toBeGreaterThanOrEqual(0)
  expect(await balanceOf(id)).toBe(M - run.successes * c)
  expect(ledgerSum(entries)).toBe(M - run.successes * c)
  expect(entries.filter(entry => entry.kind === 'charge' && entry.state === 'committed')).toHaveLength(run.successes)
}

describe('exact metering under concurrency (M = 101 units, c = 2, 3·M/c attempts)', () => {
  test.each([1, 32, 128])('%i concurrent clients', async clients => {
    await expectExact([app.url], clients)
  })
})

// SQLite serves one process; the shared-database case exists only on PostgreSQL.
if (onPostgres) describe('two server processes sharing PostgreSQL', () => {
  let second: RunningServer | undefined

  beforeAll(async () => {
    const root = join(__dirname, '..', '..')
    const env: NodeJS.ProcessEnv = {
      ...process.env, CDS_ENV: 'pg', PORT: '0', GATEWAY_ENABLED: 'true', CHAIN_A_DEVNET: 'false',
      BLOCKFROST_URL: runningDevnet().url, CDS_TYPESCRIPT: 'true', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON',
    }
    second = await startServer(join(root, 'node_modules', '.bin', 'cds-serve'), [], { cwd: root, env })
  }, 40_000)
  afterAll(() => second?.stop())

  test.each([32, 128])('%i concurrent clients spread over both processes', async clients => {
    await expectExact([app.url, second!.url], clients)
  })
})
