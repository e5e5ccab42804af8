import { BlockfrostAdapter } from '../../srv/chains/chain-a/blockfrost.ts'
import { ApiError } from '../../srv/lib/errors.ts'
import { answerFromSchemas, bodyFor } from './support/openapi-server.ts'
import { sendJson, sendUpstreamError, startTestServer, upstreamConfig, type TestServer } from './support/test-server.ts'

/* How the adapter's configuration decides the upstream, its credentials and its retries. */

const CBOR = Uint8Array.from([0x84, 0xa4, 0x00, 0x81])

let server: TestServer
let status = 200

beforeAll(async () => {
  server = await startTestServer((request, response) => {
    if (status !== 200) return sendUpstreamError(response, status, 'An unexpected response was received from the backend.')
    answerFromSchemas(request, response)
  })
})
afterAll(() => server.close())
beforeEach(() => {
  server.requests.splice(0)
  status = 200
})

function constructionError(config: Parameters<typeof upstreamConfig>[0]): ApiError {
  try {
    new BlockfrostAdapter(upstreamConfig(config))
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError)
    return error as ApiError
  }
  throw new Error('the adapter was constructed')
}

describe('choosing the upstream', () => {
  it('without url and project id fails with a clear configuration error', () => {
    const error = constructionError({ network: 'preprod' })
    expect(error.code).toBe('UPSTREAM_NOT_CONFIGURED')
    expect(error.message).toContain('BLOCKFROST_PROJECT_ID')
    expect(error.message).toContain('BLOCKFROST_URL')
  })

  it('hosted Blockfrost serves only preprod, preview and mainnet', () => {
    const error = constructionError({ network: 'devnet', projectId: 'preprodAbc123' })
    expect(error.code).toBe('UPSTREAM_NOT_CONFIGURED')
    expect(error.message).toContain("'devnet'")
  })

  it.each(['preprod', 'preview', 'mainnet'])('a project id with network %s names that network', network => {
    expect(new BlockfrostAdapter(upstreamConfig({ network, projectId: `${network}Abc123` })).networkName).toBe(network)
  })

  it('a url is the upstream, under the configured network name, without a project id', async () => {
    const adapter = new BlockfrostAdapter(upstreamConfig({ url: server.url, network: 'devnet' }))
    expect(adapter.networkName).toBe('devnet')
    expect((await adapter.genesis()).networkMagic).toBe(764824073)
    expect(server.requests.map(r => r.path)).toEqual(['/genesis'])
    expect(server.requests[0].headers.project_id).toBeUndefined()
  })

  it('a url with a project id sends the project id', async () => {
    const adapter = new BlockfrostAdapter(upstreamConfig({ url: server.url, network: 'preprod', projectId: 'preprodAbc123' }))
    expect(adapter.networkName).toBe('preprod')
    await adapter.tip()
    expect(server.requests[0].headers.project_id).toBe('preprodAbc123')
  })

  it('a url with a base path keeps it', async () => {
    const adapter = new BlockfrostAdapter(upstreamConfig({ url: `${server.url}/api/v0` }))
    await expect(adapter.tip()).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' })
    expect(server.requests[0].path).toBe('/api/v0/blocks/latest')
  })
})

describe('retries', () => {
  beforeEach(() => {
    status = 500
  })

  it('0 retries make exactly one request on a 500', async () => {
    await expect(new BlockfrostAdapter(upstreamConfig({ url: server.url, retries: 0 })).tip()).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' })
    expect(server.requests).toHaveLength(1)
  })

  it('1 retry makes two requests on a read', async () => {
    await expect(new BlockfrostAdapter(upstreamConfig({ url: server.url, retries: 1 })).tip()).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' })
    expect(server.requests).toHaveLength(2)
  })

  it('a read that succeeds on the retry answers normally', async () => {
    const flaky = await startTestServer((request, response) => {
      if (flaky.requests.length === 1) return sendUpstreamError(response, 502, 'Bad Gateway')
      sendJson(response, 200, bodyFor(request.path))
    })
    try {
      const tip = await new BlockfrostAdapter(upstreamConfig({ url: flaky.url, retries: 1 })).tip()
      expect(tip.height).toBe(15243593)
      expect(flaky.requests).toHaveLength(2)
    } finally {
      await flaky.close()
    }
  })

  it('submit is never retried', async () => {
    await expect(new BlockfrostAdapter(upstreamConfig({ url: server.url, retries: 1 })).submit(CBOR)).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' })
    expect(server.requests).toHaveLength(1)
    expect(server.requests[0].method).toBe('POST')
  })

  it('a 404 is an answer, not a failure to retry', async () => {
    status = 404
    expect(await new BlockfrostAdapter(upstreamConfig({ url: server.url, retries: 2 })).address('addr_test1x')).toBeNull()
    expect(server.requests).toHaveLength(1)
  })
})

describe('retries when the network fails', () => {
  it('an unreachable upstream answers UPSTREAM_UNAVAILABLE after the retries, without an uncaught error', async () => {
    const uncaught: unknown[] = []
    const record = (error: unknown) => uncaught.push(error)
    process.on('uncaughtException', record)
    try {
      const adapter = new BlockfrostAdapter(upstreamConfig({ url: 'http://127.0.0.1:1', retries: 2 }))
      await expect(adapter.tip()).rejects.toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE' })
      await expect(adapter.transaction('ab'.repeat(32))).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' })
      await new Promise(resolve => setTimeout(resolve, 300))
      expect(uncaught).toEqual([])
    } finally {
      process.off('uncaughtException', record)
    }
  })
})
