import { createServer, request, type Server } from 'node:http'
import { startDevnet } from '../support/devnet.ts'
import { getJson, issueKey, startGateways, type Gateways } from '../support/lane-gateways.ts'
import type { ChainADevnet } from '../../devnet/chain-a/index.ts'

/**
 * What one read may cost, against gateway processes of their own: the read that stopped the
 * service (one unit, 58 s of a blocked event loop, a pool exhausted on PostgreSQL) and its variants
 * are refused before they run and charge nothing, while another key's reads go on; a read whose
 * answer left (the gateway's 504) stops its work instead of running on for nobody.
 */

const ATTACK = '/odata/v4/chaina-odata/Blocks?$top=100&$expand=epochInfo($expand=blocks($top=1000;$expand=transactions($expand=inputs,outputs)))'
const VARIANTS: [string, string, string][] = [
  ['three levels whose $tops multiply beyond the row budget', '/odata/v4/chaina-odata/Blocks?$top=100&$expand=epochInfo($expand=blocks($top=1000;$expand=transactions))', 'ROW_BUDGET_EXCEEDED'],
  ['a wide expansion of every epoch', '/odata/v4/chaina-odata/Epochs?$top=1000&$expand=blocks($top=1000)', 'ROW_BUDGET_EXCEEDED'],
  ['$apply written encoded inside $filter', "/odata/v4/chaina-odata/Blocks?$filter=hash%20ne%20'x'%26%24apply%3Dgroupby((epoch))", 'UNSUPPORTED_QUERY_OPTION'],
  ['$expand given twice, the second beyond the page bound', '/odata/v4/chaina-odata/Blocks?$top=1&$expand=epochInfo&$expand=transactions($top=5000)', 'DUPLICATE_QUERY_OPTION'],
  ['$expand four levels deep on chain B', '/odata/v4/chainb/Blocks?$expand=transactions($expand=block($expand=transactions($expand=block)))', 'EXPAND_TOO_DEEP'],
]

const unitsLeft = async (url: string, key: string) => Number((await getJson(url, '/me', key)).body.unitsLeft)

describe('a read bounded before it runs', () => {
  let devnet: ChainADevnet
  let gateways: Gateways
  let url: string

  beforeAll(async () => {
    devnet = await startDevnet()
    for (let i = 0; i < 5; i++) devnet.produceBlock()
    // The attacks come all at once: admission control (its own test) must not turn them away first.
    gateways = await startGateways(1, devnet, { GATEWAY_RATE_PER_SECOND: '10000', GATEWAY_BURST: '10000', GATEWAY_MAX_CALLS_IN_FLIGHT: '64', GATEWAY_MAX_INSTANCE_CALLS: '1000' })
    url = gateways.servers[0].url
  }, 240_000)

  afterAll(async () => {
    await gateways?.stop()
    await devnet?.stop()
  }, 120_000)

  test('the read that stopped the service, sent 20 times at once by a key of 20 units, is refused each time before it runs and charges nothing', async () => {
    const attacker = await issueKey(gateways, 20)
    const answers = await Promise.all(Array.from({ length: 20 }, () => getJson(url, ATTACK, attacker)))
    for (const answer of answers) {
      expect(answer.body.error).toMatchObject({ code: 'EXPAND_TOO_DEEP', message: expect.stringContaining('at most 3 levels') })
      expect(answer.status).toBe(400)
      expect(answer.headers.get('x-access-units-charged')).toBe('0')
    }
    expect(await unitsLeft(url, attacker)).toBe(20)
  })

  test.each(VARIANTS)('%s is refused before it runs and charges nothing', async (_name, path, code) => {
    const key = await issueKey(gateways, 5)
    const answer = await getJson(url, path, key)
    expect(answer.body.error.code).toBe(code)
    expect(answer.status).toBe(400)
    expect(answer.headers.get('x-access-units-charged')).toBe('0')
    expect(await unitsLeft(url, key)).toBe(5)
  })

  test('another key\'s reads, and the health probe, are answered while the attack and its variants go on', async () => {
    const [attacker, reader] = await Promise.all([issueKey(gateways, 1000), issueKey(gateways, 1000)])
    const attacks = Array.from({ length: 40 }, (_, i) => getJson(url, i % 2 ? ATTACK : VARIANTS[i % VARIANTS.length][1], attacker))
    const reads = Array.from({ length: 40 }, (_, i) => getJson(url, `/odata/v4/chaina-odata/Blocks?$top=${1 + (i % 5)}&$expand=transactions($select=hash)`, reader))
    const health = getJson(url, '/health')
    const [attacked, read, healthy] = await Promise.all([Promise.all(attacks), Promise.all(reads), health])
    expect(attacked.map(answer => answer.status)).toEqual(attacked.map(() => 400))
    expect(read.map(answer => answer.status)).toEqual(read.map(() => 200))
    expect(healthy.status).toBe(200)
    expect(await unitsLeft(url, attacker)).toBe(1000)
    expect(await unitsLeft(url, reader)).toBe(960)
  })

  test('a hostile body whose toString is no function answers 400, never 500', async () => {
    const key = await issueKey(gateways, 5)
    const response = await fetch(`${url}/odata/v4/chaina-odata/GetTransactionByHash`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"hash":{"toString":1}}',
    })
    const body = await response.json()
    expect(body.error).toMatchObject({ code: 'INVALID_PROPERTY_NAME', target: 'hash.toString' })
    expect(response.status).toBe(400)
    expect(await unitsLeft(url, key)).toBe(5)
  })
})

interface SlowUpstream {
  server: Server
  url: string
  calls(): number
  /** How long each call waits before it is forwarded. */
  delayMs: number
}

/** An upstream that answers each call after a delay, counting the calls it was sent. */
function slowUpstream(target: string, delayMs: number): Promise<SlowUpstream> {
  let calls = 0
  const upstream = { delayMs } as SlowUpstream
  const server = createServer((incoming, outgoing) => {
    calls++
    setTimeout(() => {
      const forwarded = request(target + incoming.url, { method: incoming.method, headers: { ...incoming.headers, host: new URL(target).host } }, answer => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(outgoing)
      })
      forwarded.on('error', () => outgoing.destroy())
      incoming.pipe(forwarded)
    }, upstream.delayMs)
  })
  return new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(Object.assign(upstream, { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, calls: () => calls }))))
}

describe('a read whose answer left stops its work', () => {
  const BLOCKS = 60
  let devnet: ChainADevnet
  let upstream: SlowUpstream
  let gateways: Gateways

  beforeAll(async () => {
    devnet = await startDevnet()
    for (let i = 0; i < BLOCKS; i++) devnet.produceBlock()
    upstream = await slowUpstream(devnet.url, 300)
    gateways = await startGateways(1, devnet, { BLOCKFROST_URL: upstream.url, GATEWAY_TIMEOUT_MS: '1500', GATEWAY_MAX_CALLS_IN_FLIGHT: '4' })
  }, 240_000)

  afterAll(async () => {
    await gateways?.stop()
    upstream?.server.close()
    await devnet?.stop()
  }, 120_000)

  test(`a read that must index ${BLOCKS} blocks through a slow upstream is answered 504 and refunded, and asks the upstream for no more than it had under way`, async () => {
    const key = await issueKey(gateways, 10)
    const url = gateways.servers[0].url
    const before = upstream.calls()
    const answer = await getJson(url, `/odata/v4/chaina-odata/Blocks?$orderby=height asc&$top=${BLOCKS}&$expand=transactions($select=hash)`, key)
    expect(answer.body.error.code).toBe('UPSTREAM_TIMEOUT')
    expect(answer.status).toBe(504)
    // Wait until the upstream has seen no call for a while: the work has stopped (or never will).
    let seen = -1
    while (upstream.calls() !== seen) {
      seen = upstream.calls()
      await new Promise(resolve => setTimeout(resolve, 3000))
    }
    // Indexing every block takes at least one call per block's transactions; the stopped read made far fewer.
    expect(seen - before).toBeLessThan(BLOCKS)
    expect(await unitsLeft(url, key)).toBe(10)
  }, 120_000)

  test('one key has at most GATEWAY_MAX_CALLS_IN_FLIGHT calls in flight; its others answer 429 uncharged, and another key is not held back', async () => {
    const [busy, other] = await Promise.all([issueKey(gateways, 100), issueKey(gateways, 100)])
    const url = gateways.servers[0].url
    // The newest blocks: the test before stopped indexing long before them, so each read asks the upstream.
    const hashes = devnet.ledger.blocks.slice(-12).map(block => block.hash)
    const read = (hash: string, key: string) => getJson(url, `/odata/v4/chaina-odata/Blocks('${hash}')`, key)
    // The upstream holds every call far longer than the gateway waits (1.5 s): a call let in stays in flight until then.
    upstream.delayMs = 5000
    try {
      const [answers, others] = await Promise.all([
        Promise.all(hashes.map(hash => read(hash, busy))),
        Promise.all(hashes.slice(0, 4).map(hash => read(hash, other))),
      ])
      const refused = answers.filter(answer => answer.status === 429)
      expect(refused.length).toBeGreaterThan(0)
      expect(answers.length - refused.length).toBeLessThanOrEqual(4)
      for (const answer of refused) {
        expect(answer.body.error.code).toBe('TOO_MANY_CALLS_IN_FLIGHT')
        expect(answer.headers.get('retry-after')).toBe('1')
        expect(answer.headers.get('x-access-units-charged')).toBe('0')
      }
      expect(others.map(answer => answer.status)).not.toContain(429)
    } finally {
      upstream.delayMs = 300
    }
  }, 120_000)
})
