import type { ServerResponse } from 'node:http'
import { BlockfrostAdapter } from '../../srv/chains/chain-a/blockfrost.ts'
import type { ChainAConfig } from '../../srv/chains/chain-a/config.ts'
import { ApiError } from '../../srv/lib/errors.ts'
import { bodyFor } from './support/openapi-server.ts'
import { refusedUrl, sendJson, sendUpstreamError, startTestServer, upstreamConfig, type RecordedRequest, type TestServer } from './support/test-server.ts'

/* How upstream failures reach the services: as ApiErrors with stable codes, or as null for 404. */

const TX = '1e043f100dce12d107f679685acd2fc0610e10f72a92d412794c9773d11d8477'
const CBOR = Uint8Array.from([0x84, 0xa4, 0x00, 0x81])

let respond: (request: RecordedRequest, response: ServerResponse) => void
let server: TestServer

beforeAll(async () => {
  server = await startTestServer((request, response) => respond(request, response))
})
afterAll(() => server.close())
beforeEach(() => server.requests.splice(0))

const adapterFor = (overrides: Partial<ChainAConfig> = {}) => new BlockfrostAdapter(upstreamConfig({ url: server.url, ...overrides }))

function answer(status: number, message: string, headers: Record<string, string> = {}) {
  respond = (_request, response) => sendUpstreamError(response, status, message, headers)
}

async function failure(call: Promise<unknown>): Promise<ApiError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ApiError)
  return error as ApiError
}

describe('404', () => {
  beforeEach(() => answer(404, 'The requested component has not been found.'))

  it('answers null for single reads and [] for collections', async () => {
    const adapter = adapterFor()
    expect(await adapter.block(TX)).toBeNull()
    expect(await adapter.block(12)).toBeNull()
    expect(await adapter.epoch(9999)).toBeNull()
    expect(await adapter.protocolParameters(9999)).toBeNull()
    expect(await adapter.transaction(TX)).toBeNull()
    expect(await adapter.address('addr_test1unknown')).toBeNull()
    expect(await adapter.account('stake_test1unknown')).toBeNull()
    expect(await adapter.pool('pool1unknown')).toBeNull()
    expect(await adapter.drep('drep1unknown')).toBeNull()
    expect(await adapter.assetHistory('ab'.repeat(28), 10)).toBeNull()
    expect(await adapter.addressUtxos('addr_test1unknown')).toEqual([])
    expect(await adapter.addressTransactions('addr_test1unknown', 10)).toEqual([])
  })

  it('is an upstream failure where the upstream must have data', async () => {
    const error = await failure(adapterFor().tip())
    expect(error).toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE' })
  })

  it('is an error on submit', async () => {
    const error = await failure(adapterFor().submit(CBOR))
    expect(error).toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE' })
    expect(error.message).toContain('submission')
  })
})

describe('429 rate limiting', () => {
  it('maps to 429 UPSTREAM_RATE_LIMITED with the Retry-After seconds, then fails fast in the window', async () => {
    answer(429, 'Usage is over limit.', { 'Retry-After': '2' })
    const adapter = adapterFor()
    const first = await failure(adapter.tip())
    expect(first).toMatchObject({ status: 429, code: 'UPSTREAM_RATE_LIMITED', retryAfter: 2 })
    expect(first.message).toBe('chain-A upstream rate limited this call; retry after 2 s')
    expect(server.requests).toHaveLength(1)

    const second = await failure(adapter.address('addr_test1x'))
    expect(second).toMatchObject({ status: 429, code: 'UPSTREAM_RATE_LIMITED' })
    expect(second.retryAfter).toBeGreaterThanOrEqual(1)
    expect(second.retryAfter).toBeLessThanOrEqual(2)
    const third = await failure(adapter.submit(CBOR))
    expect(third).toMatchObject({ status: 429, code: 'UPSTREAM_RATE_LIMITED' })
    expect(server.requests).toHaveLength(1)
  })

  it('reads Retry-After given as an HTTP date', async () => {
    answer(429, 'Usage is over limit.', { 'Retry-After': new Date(Date.now() + 3000).toUTCString() })
    const error = await failure(adapterFor().tip())
    expect(error.status).toBe(429)
    expect(error.retryAfter).toBeGreaterThanOrEqual(2)
    expect(error.retryAfter).toBeLessThanOrEqual(3)
  })

  it('backs off for 1 s when the upstream gives no Retry-After', async () => {
    answer(429, 'Usage is over limit.')
    const adapter = adapterFor()
    expect(await failure(adapter.tip())).toMatchObject({ status: 429, retryAfter: 1 })
    expect(await failure(adapter.tip())).toMatchObject({ status: 429, retryAfter: 1 })
    expect(server.requests).toHaveLength(1)
  })

  it('calls the upstream again once the window has passed', async () => {
    answer(429, 'Usage is over limit.', { 'Retry-After': '1' })
    const adapter = adapterFor()
    await failure(adapter.tip())
    respond = (_request, response) => sendJson(response, 200, bodyFor('/blocks/latest'))
    await new Promise(resolve => setTimeout(resolve, 1100))
    expect((await adapter.tip()).height).toBe(15243593)
    expect(server.requests).toHaveLength(2)
  })

  it('is not retried in place even when retries are configured', async () => {
    answer(429, 'Usage is over limit.', { 'Retry-After': '1' })
    await failure(adapterFor({ retries: 2 }).tip())
    expect(server.requests).toHaveLength(1)
  })
})

describe('other upstream statuses', () => {
  it('402 is 503 UPSTREAM_QUOTA_EXCEEDED and honours its Retry-After', async () => {
    answer(402, 'Project over limit.', { 'Retry-After': '60' })
    const adapter = adapterFor()
    expect(await failure(adapter.tip())).toMatchObject({ status: 503, code: 'UPSTREAM_QUOTA_EXCEEDED', retryAfter: 60 })
    const again = await failure(adapter.genesis())
    expect(again).toMatchObject({ status: 503, code: 'UPSTREAM_QUOTA_EXCEEDED' })
    expect(again.retryAfter).toBeGreaterThanOrEqual(59)
    expect(server.requests).toHaveLength(1)
  })

  it('418 is 503 UPSTREAM_BANNED; without Retry-After the next call still goes out', async () => {
    answer(418, 'IP has been auto-banned for flooding.')
    const adapter = adapterFor()
    const error = await failure(adapter.tip())
    expect(error).toMatchObject({ status: 503, code: 'UPSTREAM_BANNED' })
    expect(error.retryAfter).toBeUndefined()
    await failure(adapter.tip())
    expect(server.requests).toHaveLength(2)
  })

  it('425 is 503 UPSTREAM_MEMPOOL_FULL', async () => {
    answer(425, 'Mempool is full, please try resubmitting again later.')
    expect(await failure(adapterFor().submit(CBOR))).toMatchObject({ status: 503, code: 'UPSTREAM_MEMPOOL_FULL' })
  })

  it('403 is 503 UPSTREAM_AUTH_FAILED, naming the operator credentials', async () => {
    answer(403, 'Invalid project token.')
    const error = await failure(adapterFor().address('addr_test1x'))
    expect(error).toMatchObject({ status: 503, code: 'UPSTREAM_AUTH_FAILED' })
    expect(error.message).toContain('project id')
  })

  it.each([500, 502, 503])('%i is 503 UPSTREAM_UNAVAILABLE', async status => {
    answer(status, 'An unexpected response was received from the backend.')
    const error = await failure(adapterFor().tip())
    expect(error).toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE' })
    expect(error.message).toContain(String(status))
  })

  it('503 with Retry-After backs off like a rate limit', async () => {
    answer(503, 'Maintenance.', { 'Retry-After': '30' })
    const adapter = adapterFor({ retries: 1 })
    expect(await failure(adapter.tip())).toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE', retryAfter: 30 })
    expect(await failure(adapter.tip())).toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE' })
    expect(server.requests).toHaveLength(1)
  })

  it('a non-Blockfrost error page is still 503 UPSTREAM_UNAVAILABLE', async () => {
    respond = (_request, response) => {
      response.writeHead(502, { 'content-type': 'text/html' })
      response.end('<html><body>Bad Gateway</body></html>')
    }
    expect(await failure(adapterFor().genesis())).toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE' })
  })

  it('400 on a read is 400 UPSTREAM_BAD_REQUEST with the upstream message', async () => {
    answer(400, 'Invalid address for this network or malformed address format.')
    const error = await failure(adapterFor().address('addr1bogus'))
    expect(error).toMatchObject({ status: 400, code: 'UPSTREAM_BAD_REQUEST' })
    expect(error.message).toContain('Invalid address for this network or malformed address format.')
  })
})

describe('submit rejections', () => {
  it('400 from Blockfrost is 400 TX_REJECTED with the reason', async () => {
    const reason = '"transaction submit error ShelleyTxValidationError ... (BadInputsUTxO ...)"'
    answer(400, reason)
    const error = await failure(adapterFor().submit(CBOR))
    expect(error).toMatchObject({ status: 400, code: 'TX_REJECTED' })
    expect(error.message).toBe(`chain-A rejected the transaction: ${reason}`)
  })

  it('400 with a bare body (a cardano-submit-api) carries that body as the reason', async () => {
    respond = (_request, response) => {
      response.writeHead(400, { 'content-type': 'text/plain' })
      response.end('ConwayUtxowFailure (MissingVKeyWitnessesUTXOW ...)')
    }
    const error = await failure(adapterFor().submit(CBOR))
    expect(error).toMatchObject({ status: 400, code: 'TX_REJECTED' })
    expect(error.message).toContain('ConwayUtxowFailure (MissingVKeyWitnessesUTXOW ...)')
  })
})

describe('transport failures', () => {
  it('a request that never answers is 503 UPSTREAM_TIMEOUT', async () => {
    respond = () => undefined
    const error = await failure(adapterFor({ timeoutMs: 200 }).tip())
    expect(error).toMatchObject({ status: 503, code: 'UPSTREAM_TIMEOUT' })
    expect(error.message).toContain('200 ms')
  })

  it('connection refused is 503 UPSTREAM_UNAVAILABLE', async () => {
    const adapter = new BlockfrostAdapter(upstreamConfig({ url: await refusedUrl() }))
    const error = await failure(adapter.tip())
    expect(error).toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE' })
    expect(error.message).toContain('ECONNREFUSED')
  })

  it('a reset connection is 503 UPSTREAM_UNAVAILABLE', async () => {
    respond = (_request, response) => response.socket?.destroy()
    const error = await failure(adapterFor().tip())
    expect(error).toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE' })
  })

  it('an unparsable answer is 503 UPSTREAM_UNAVAILABLE', async () => {
    respond = (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end('{"hash": ')
    }
    expect(await failure(adapterFor().tip())).toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE' })
  })
})
