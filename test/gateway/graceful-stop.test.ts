import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { join } from 'node:path'
import { startDevnet } from '../support/devnet.ts'
import { getJson, issueKey, startGateways, type Gateways } from '../support/lane-gateways.ts'
import { startServer, stopAndWait, type RunningServer } from '../support/server.ts'
import type { ChainADevnet } from '../../devnet/chain-a/index.ts'

/**
 * A stop signal mid-call, against gateway processes of their own on one database, their chain-A
 * upstream behind a proxy that holds the calls the test names until it lets them go: the call in
 * flight when SIGTERM arrives is answered and charged once, a new request is refused 503
 * SHUTTING_DOWN uncharged, the process ends by itself once the call is answered; a call still
 * running when the grace ends is answered 503 and refunded. A second instance, never stopped,
 * reads the balances and ledgers.
 */

const root = join(__dirname, '..', '..')

async function waitFor<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const until = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

/** An upstream proxy that forwards every call at once, except those whose path contains a held text: they wait until released. */
interface HoldingProxy {
  server: Server
  url: string
  hold(text: string): void
  /** Calls waiting now. */
  waiting(): number
  releaseAll(): void
}

function holdingProxy(target: string): Promise<HoldingProxy> {
  const held = new Set<string>()
  let waiting: (() => void)[] = []
  const forward = (incoming: IncomingMessage, outgoing: ServerResponse) => {
    const forwarded = request(target + incoming.url, { method: incoming.method, headers: { ...incoming.headers, host: new URL(target).host } }, answer => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(outgoing)
    })
    forwarded.on('error', () => outgoing.destroy())
    incoming.pipe(forwarded)
  }
  const server = createServer((incoming, outgoing) => {
    if ([...held].some(text => incoming.url?.includes(text))) waiting.push(() => forward(incoming, outgoing))
    else forward(incoming, outgoing)
  })
  const proxy = {
    server,
    hold: (text: string) => void held.add(text),
    waiting: () => waiting.length,
    releaseAll() {
      held.clear()
      const released = waiting
      waiting = []
      for (const go of released) go()
    },
  }
  return new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve({ ...proxy, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` })))
}

/** The key's units left and the sum of its ledger, as the observing instance reads them. */
async function balanceAndLedger(url: string, key: string) {
  const unitsLeft = Number((await getJson(url, '/me', key)).body.unitsLeft)
  const entries = (await getJson(url, '/me/ledger?limit=100', key)).body.value as { units: number; requestId: string; kind: string; state: string }[]
  return { unitsLeft, entries, ledgerSum: entries.reduce((sum, entry) => sum + entry.units, 0) }
}

describe('a stop signal mid-call', () => {
  let devnet: ChainADevnet
  let proxy: HoldingProxy
  let gateways: Gateways
  let observer: string
  const stopped: RunningServer[] = []

  beforeAll(async () => {
    devnet = await startDevnet()
    for (let i = 0; i < 5; i++) devnet.produceBlock()
    proxy = await holdingProxy(devnet.url)
    gateways = await startGateways(1, devnet, { BLOCKFROST_URL: proxy.url, CHAIN_A_FOLLOWER_ENABLED: 'false', GATEWAY_TIMEOUT_MS: '600000' })
    observer = gateways.servers[0].url
  }, 240_000)

  afterAll(async () => {
    proxy?.releaseAll()
    for (const server of stopped) if (server.running()) await stopAndWait(server)
    await gateways?.stop()
    proxy?.server.close()
    await devnet?.stop()
  }, 120_000)

  /** A second instance on the same database, stopped in the test. */
  async function instance(settings: Record<string, string>): Promise<RunningServer> {
    const server = await startServer(join(root, 'node_modules', '.bin', 'cds-serve'), [], { cwd: root, env: { ...gateways.env, ...settings }, timeoutMs: 120_000 })
    stopped.push(server)
    return server
  }

  /** A metered read of a block the server must ask the upstream for, held there until released. */
  function heldRead(url: string, key: string, block: number) {
    const { hash } = devnet.ledger.blocks[block]
    proxy.hold(hash)
    return getJson(url, `/odata/v4/chaina-odata/Blocks('${hash}')`, key)
  }

  test('the call in flight is answered and charged once, a new request is refused 503 SHUTTING_DOWN uncharged, and the process ends once the call is answered', async () => {
    // A grace far longer than the test: the process ends because nothing is left in flight.
    const server = await instance({ SHUTDOWN_GRACE_MS: '600000' })
    const key = await issueKey(gateways, 10)

    const inFlight = heldRead(server.url, key, 2)
    await waitFor('the read to reach the upstream', () => proxy.waiting() === 1)
    server.stop('SIGTERM')
    await waitFor('the server to say it stops', () => server.output().includes('SIGTERM: stopping'))

    const refused = await getJson(server.url, '/odata/v4/chaina-odata/Blocks?$top=1', key)
    expect(refused.body.error.code).toBe('SHUTTING_DOWN')
    expect(refused.status).toBe(503)
    expect(refused.headers.get('x-access-units-charged')).toBe('0')
    expect(refused.headers.get('retry-after')).toBe('5')
    expect(refused.headers.get('connection')).toBe('close')
    expect((await getJson(server.url, '/health')).status).toBe(200)
    expect(server.running()).toBe(true)

    proxy.releaseAll()
    const answer = await inFlight
    expect(answer.status).toBe(200)
    const price = Number(answer.headers.get('x-access-units-charged'))
    expect(price).toBeGreaterThan(0)
    // It ends by itself (jest's time-out is far below the grace).
    await server.exited
    expect(server.output()).not.toContain('did not finish within')

    const { unitsLeft, entries, ledgerSum } = await balanceAndLedger(observer, key)
    expect(unitsLeft).toBe(10 - price)
    expect(ledgerSum).toBe(unitsLeft)
    const charges = entries.filter(entry => entry.requestId === answer.headers.get('x-request-id'))
    expect(charges).toEqual([expect.objectContaining({ kind: 'charge', state: 'committed', units: -price })])
  }, 180_000)

  test('a call still running when the grace ends is answered 503 SHUTTING_DOWN and refunded before the process ends', async () => {
    const server = await instance({ SHUTDOWN_GRACE_MS: '1000' })
    const key = await issueKey(gateways, 10)

    const inFlight = heldRead(server.url, key, 3)
    await waitFor('the read to reach the upstream', () => proxy.waiting() === 1)
    server.stop('SIGTERM')
    const answer = await inFlight
    expect(answer.body.error.code).toBe('SHUTTING_DOWN')
    expect(answer.status).toBe(503)
    expect(answer.headers.get('x-access-units-charged')).toBe('0')
    // The upstream call ends (in production, at its time-out): on SQLite the refund waits for the call's transaction.
    proxy.releaseAll()
    await server.exited
    expect(server.output()).not.toContain('did not finish within')

    const { unitsLeft, entries, ledgerSum } = await balanceAndLedger(observer, key)
    expect(unitsLeft).toBe(10)
    expect(ledgerSum).toBe(10)
    const requestId = answer.headers.get('x-request-id')
    expect(entries.filter(entry => entry.requestId === requestId).map(entry => [entry.kind, entry.state]).sort()).toEqual([['charge', 'refunded'], ['refund', 'posted']])
  }, 180_000)

  test('a server with nothing in flight ends at once on SIGTERM, sent the moment it says it listens: the graceful stop has the signal already', async () => {
    const server = await instance({ SHUTDOWN_GRACE_MS: '600000' })
    server.stop('SIGTERM')
    expect(await server.exited).toBe(0)
    expect(server.output()).toContain('SIGTERM: stopping')
    expect(server.output()).not.toContain('did not finish within')
  }, 120_000)
})
