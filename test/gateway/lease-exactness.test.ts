import cds from '@sap/cds'
import { join } from 'node:path'
import { startServer, stopAndWait, type RunningServer } from '../support/server.ts'
import { runningDevnet } from '../support/chain-a.ts'
import { balanceOf, issueTestKey, ledgerOf, ledgerSum, settled } from '../support/gateway.ts'

/**
 * Exact metering with unit leases on: whatever instance spends a key's units, in memory or by a
 * reservation per call, every 200 is charged once, no call is charged past the credits, and after
 * everything resolved (leases handed back or voided) the balance is the credits less the committed
 * charges. Also when an instance holding units is killed mid-burst: its uncommitted answers may
 * stay uncharged, but nothing is charged twice and no unit is lost.
 */

const SETTINGS = {
  GATEWAY_ENABLED: 'true',
  GATEWAY_RATE_PER_SECOND: '1000000',
  GATEWAY_BURST: '1000000',
  GATEWAY_MAX_CALLS_IN_FLIGHT: '1000000',
  // Exactness under contention is the point here, not admission control (test/gateway/admission.test.ts).
  GATEWAY_MAX_INSTANCE_CALLS: '1000000',
  // Leases engage on these keys: a second of the key's rate, from 20 units left, handed back after 300 ms idle.
  GATEWAY_LEASE_SECONDS: '1',
  GATEWAY_LEASE_MIN_BALANCE: '20',
  GATEWAY_LEASE_IDLE_MS: '300',
  GATEWAY_LEASE_CHECK_MS: '100',
}
Object.assign(process.env, SETTINGS)
const app: { url: string } = cds.test(__dirname + '/../..') as any

const onPostgres = (process.env.CDS_ENV ?? '').split(',').includes('pg')
/** The credits of each key, the price of the call (a read action) and the calls the clients share. */
const M = 301
const PRICE = 2
const ATTEMPTS = Math.ceil((3 * M) / PRICE)
const AFFORDABLE = Math.floor(M / PRICE)
/** A test takes seconds; a busy two-core machine has taken a minute for the 452 calls of one client. */
const SLOW_MACHINE_MS = 180_000
/** How long a spawned gateway may take to listen. */
const SPAWN_MS = 120_000
let address: string

beforeAll(() => {
  address = runningDevnet().wallets()[0].address
})
afterAll(() => {
  for (const name of Object.keys(SETTINGS)) delete process.env[name]
})

/** What the clients saw: statuses, the units headers, and the balances sampled while they ran. */
class Tally {
  successes = 0
  readonly successesAt = new Map<string, number>()
  refusals = 0
  /** Any other answer, as `status code`. */
  readonly others: string[] = []
  /** Calls to a killed server that got no answer. */
  lost = 0
  unitsChargedSeen = 0
  lowestLeftSeen = Number.POSITIVE_INFINITY
  lowestBalance = Number.POSITIVE_INFINITY
  highestBalance = Number.NEGATIVE_INFINITY

  /** One call; a connection error counts as lost when `gone` says the server was killed, and fails otherwise. */
  async call(url: string, key: string, gone = () => false): Promise<number | undefined> {
    let response: Response, text: string
    try {
      response = await fetch(`${url}/odata/v4/chaina-odata/GetAddressByBech32`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ address }),
      })
      text = await response.text()
    } catch (error) {
      if (!gone()) throw error
      this.lost++
      return undefined
    }
    // A missing header reads NaN, which fails the check on the lowest value seen.
    this.lowestLeftSeen = Math.min(this.lowestLeftSeen, Number(response.headers.get('x-access-units-left') ?? NaN))
    const code = response.status === 200 ? undefined : errorCode(text)
    if (response.status === 200) {
      this.successes++
      this.successesAt.set(url, (this.successesAt.get(url) ?? 0) + 1)
      this.unitsChargedSeen += Number(response.headers.get('x-access-units-charged'))
    } else if (response.status === 402 && code === 'UNITS_EXHAUSTED') this.refusals++
    else this.others.push(`${response.status} ${code}`)
    return response.status
  }

  sawBalance(units: number) {
    this.lowestBalance = Math.min(this.lowestBalance, units)
    this.highestBalance = Math.max(this.highestBalance, units)
  }
}

/** Between two reads of a reader, so that the readers do not crowd out the clients. */
const pause = () => new Promise(resolve => setTimeout(resolve, 5))

function errorCode(text: string): string | undefined {
  try {
    return JSON.parse(text).error?.code
  } catch {
    return undefined
  }
}

interface Victim {
  server: RunningServer
  /** Killed once it answered this many 200s. */
  killAfter: number
}

/**
 * `clients` share ATTEMPTS calls against the servers in turn. Meanwhile one reader asks the first
 * server for the key's units left, another reads the balance in the database. With a victim, every
 * call goes to it first (so that it holds the key's units), and it is killed (SIGKILL) once it
 * answered `killAfter` 200s, while its clients call; the calls go on to the other servers.
 */
async function burst(urls: string[], keyId: string, key: string, clients: number, victim?: Victim): Promise<Tally> {
  const tally = new Tally()
  let killed = false
  const gone = (url: string) => () => killed && url === victim?.server.url
  let next = 0
  let running = true
  const readers = [
    (async () => {
      while (running) {
        const me = await fetch(`${urls[0]}/me`, { headers: { authorization: `Bearer ${key}` } })
        tally.lowestLeftSeen = Math.min(tally.lowestLeftSeen, (await me.json()).unitsLeft)
        await pause()
      }
    })(),
    (async () => {
      while (running) {
        tally.sawBalance(await balanceOf(keyId))
        await pause()
      }
    })(),
  ]
  await Promise.all(Array.from({ length: clients }, async (_, client) => {
    while (next < ATTEMPTS) {
      next++
      const url = victim && !killed ? victim.server.url : urls[(client + next) % urls.length]
      const status = await tally.call(url, key, gone(url))
      if (victim && !killed && status === 200 && (tally.successesAt.get(victim.server.url) ?? 0) >= victim.killAfter) {
        killed = true
        victim.server.stop('SIGKILL')
      }
    }
  }))
  running = false
  await Promise.all(readers)
  return tally
}

/**
 * After the burst, with everything resolved: calls one at a time, the servers in turn, until each
 * of them in a row refuses. Units still held anywhere (a lease not handed back, say) show here.
 */
async function drain(urls: string[], key: string): Promise<Tally> {
  const tally = new Tally()
  for (let round = 0; round <= AFFORDABLE; round++) {
    const statuses: (number | undefined)[] = []
    for (const url of urls) statuses.push(await tally.call(url, key))
    if (statuses.every(status => status === 402)) return tally
  }
  throw new Error(`the key still answered 200 after ${AFFORDABLE + 1} rounds`)
}

/** `settled`, tried again until `ms` passed: a killed instance's charges and lease wait for the sweeper. */
async function settledWithin(keyId: string, ms: number) {
  const deadline = Date.now() + ms
  for (;;) {
    try {
      return await settled(keyId)
    } catch (error) {
      if (Date.now() > deadline) throw error
    }
  }
}

interface Books {
  balance: number
  committedCharges: number
  committedUnits: number
}

/** The key's books once everything resolved: balance and ledger agree, nothing charged past the credits. */
async function expectBooks(keyId: string): Promise<Books> {
  const entries = await ledgerOf(keyId)
  const charges = entries.filter(entry => entry.kind === 'charge' && entry.state === 'committed')
  const committedUnits = -ledgerSum(charges)
  const balance = await balanceOf(keyId)
  expect(entries.filter(entry => entry.state === 'pending')).toEqual([])
  expect(charges.every(charge => charge.units === -PRICE)).toBe(true)
  expect(committedUnits).toBeLessThanOrEqual(M)
  expect(balance).toBe(M - committedUnits)
  expect(ledgerSum(entries)).toBe(balance)
  expect(balance).toBeGreaterThanOrEqual(0)
  expect(balance).toBeLessThanOrEqual(M)
  return { balance, committedCharges: charges.length, committedUnits }
}

function expectClean(tally: Tally) {
  expect(tally.others).toEqual([])
  expect(tally.lowestLeftSeen).toBeGreaterThanOrEqual(0)
  expect(tally.unitsChargedSeen).toBe(tally.successes * PRICE)
}

/** Every server up: each 200 charged once, the key spent to its last affordable call, not one more. */
async function expectExact(urls: string[], clients: number) {
  const { id, key } = await issueTestKey({ units: M })
  const during = await burst(urls, id, key, clients)
  await settled(id)
  const after = await drain(urls, key)
  await settled(id)
  expectClean(during)
  expectClean(after)
  expect(during.lost + after.lost).toBe(0)
  expect(during.successes + during.refusals).toBe(ATTEMPTS)
  expect(during.lowestBalance).toBeGreaterThanOrEqual(0)
  expect(during.highestBalance).toBeLessThanOrEqual(M)
  // One instance refuses only when the key cannot pay: nothing is left for the drain.
  if (urls.length === 1) expect(after.successes).toBe(0)
  expect(during.successes + after.successes).toBe(AFFORDABLE)
  const books = await expectBooks(id)
  expect(books.committedCharges).toBe(AFFORDABLE)
  expect(books.balance).toBe(M - AFFORDABLE * PRICE)
}

describe(`exact metering with leases (M = ${M} units, price ${PRICE}, ${ATTEMPTS} attempts)`, () => {
  test.each([1, 32, 128])('%i concurrent clients, one instance', async clients => {
    await expectExact([app.url], clients)
  }, SLOW_MACHINE_MS)
})

/** Another gateway process on the file's database, sharing the test process's devnet. */
function spawnGateway(settings: Record<string, string> = {}): Promise<RunningServer> {
  const root = join(__dirname, '..', '..')
  const env: NodeJS.ProcessEnv = {
    ...process.env, ...SETTINGS, CDS_ENV: 'pg', PORT: '0', CHAIN_A_DEVNET: 'false', BLOCKFROST_URL: runningDevnet().url,
    CHAIN_B_CRAWLER_ENABLED: 'false', CDS_TYPESCRIPT: 'true', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', ...settings,
  }
  return startServer(join(root, 'node_modules', '.bin', 'cds-serve'), [], { cwd: root, env, timeoutMs: SPAWN_MS })
}

// SQLite serves one process; shared databases exist only on PostgreSQL.
if (onPostgres) describe('server processes sharing PostgreSQL, leases on', () => {
  const spawned: RunningServer[] = []

  beforeAll(async () => {
    spawned.push(...await Promise.all([spawnGateway(), spawnGateway()]))
  }, SPAWN_MS + 30_000)
  afterAll(async () => {
    await Promise.all(spawned.filter(server => server.running()).map(server => stopAndWait(server)))
  }, 30_000)

  test('32 concurrent clients spread over two processes', async () => {
    await expectExact([app.url, spawned[0].url], 32)
  }, SLOW_MACHINE_MS)

  test('128 concurrent clients spread over three processes', async () => {
    await expectExact([app.url, ...spawned.map(server => server.url)], 128)
  }, SLOW_MACHINE_MS)

  /**
   * The victim is killed while its clients call; the survivor's sweeper (short timeouts here) voids
   * what it left: pending charges, and its lease. Then the survivors spend what is left.
   */
  test('a process holding the key\'s units killed mid-burst (SIGKILL)', async () => {
    const survivor = await spawnGateway({ GATEWAY_RESERVATION_TIMEOUT_S: '2', GATEWAY_SWEEP_INTERVAL_S: '1' })
    spawned.push(survivor)
    const victim = spawned[1]
    const { id, key } = await issueTestKey({ units: M })
    const during = await burst([survivor.url, app.url], id, key, 32, { server: victim, killAfter: 20 })
    await victim.exited
    await settledWithin(id, 30_000)
    const afterSweep = await expectBooks(id)
    const after = await drain([survivor.url, app.url], key)
    await settled(id)
    const books = await expectBooks(id)
    const victimSuccesses = during.successesAt.get(victim.url) ?? 0

    expectClean(during)
    expectClean(after)
    // Killed while its clients were calling: some calls got no answer.
    expect(victimSuccesses).toBeGreaterThanOrEqual(20)
    expect(during.lost).toBeGreaterThan(0)
    expect(during.successes + during.refusals + during.lost).toBe(ATTEMPTS)
    expect(during.lowestBalance).toBeGreaterThanOrEqual(0)
    expect(during.highestBalance).toBeLessThanOrEqual(M)
    // An answer the victim gave but did not commit is never charged twice, and may be uncharged.
    // (So may a survivor's, on a machine slow enough to hold its reservation past the short timeout.)
    expect(afterSweep.committedCharges).toBeLessThanOrEqual(during.successes)
    expect(books.committedCharges).toBeLessThanOrEqual(during.successes + after.successes)
    expect(books.committedCharges).toBe(afterSweep.committedCharges + after.successes)
    // No unit lost: what the victim held came back, and the survivors spent it down to less than a call.
    expect(books.balance + books.committedUnits).toBe(M)
    expect(books.balance).toBeLessThan(PRICE)
  }, SPAWN_MS + SLOW_MACHINE_MS)
})
