import cds from '@sap/cds'
import { createServer } from 'node:net'

/**
 * Chain A's upstream configured at a port nothing listens on (BLOCKFROST_URL), chain B turned off:
 * /ready answers 503 NOT_READY naming chain A's upstream, and chain B DISABLED, not failing. With
 * HEALTH_UPSTREAM_REQUIRED=false the upstream is only reported.
 */
let deadUrl = ''

beforeAll(async () => {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise(resolve => server.close(resolve))
  deadUrl = `http://user:upstream-secret@127.0.0.1:${port}`
  process.env.BLOCKFROST_URL = deadUrl
})
process.env.GATEWAY_ENABLED = 'true'
process.env.CHAIN_B_ENABLED = 'false'
process.env.HEALTH_CACHE_MS = '0'
process.env.HEALTH_UPSTREAM_TIMEOUT_MS = '5000'
const app: { url: string } = cds.test(__dirname + '/../..') as any

afterAll(() => {
  for (const name of ['BLOCKFROST_URL', 'GATEWAY_ENABLED', 'CHAIN_B_ENABLED', 'HEALTH_CACHE_MS', 'HEALTH_UPSTREAM_TIMEOUT_MS', 'HEALTH_UPSTREAM_REQUIRED']) delete process.env[name]
})

const probe = async (path: string) => {
  const response = await fetch(app.url + path)
  return { status: response.status, body: await response.json(), headers: response.headers }
}

test('/ready: 503 NOT_READY naming chain A\'s upstream, never its address; chain B DISABLED; charged 0', async () => {
  const { status, body, headers } = await probe('/ready')
  expect(body).toMatchObject({
    status: 'NOT_READY',
    checks: {
      database: { status: 'UP' },
      chainA: { status: 'DOWN', reason: expect.stringMatching(/^upstream: /), upstream: { status: 'DOWN', lastSuccessAt: null } },
      chainB: { status: 'DISABLED' },
      jobQueue: { status: 'DISABLED' },
      provers: { status: 'DISABLED' },
    },
    error: { code: 'NOT_READY', message: expect.stringMatching(/chainA \(upstream: /) },
  })
  expect(JSON.stringify(body)).not.toContain('upstream-secret')
  expect(JSON.stringify(body)).not.toContain(new URL(deadUrl).port)
  expect(status).toBe(503)
  expect(headers.get('x-access-units-charged')).toBe('0')
})

test('/health stays 200: the process serves', async () => {
  const { status, body } = await probe('/health')
  expect(body.status).toBe('UP')
  expect(status).toBe(200)
})

test('with HEALTH_UPSTREAM_REQUIRED=false: 200 READY, chain A reported DOWN', async () => {
  process.env.HEALTH_UPSTREAM_REQUIRED = 'false'
  const { status, body } = await probe('/ready')
  expect(body).toMatchObject({ status: 'READY', checks: { chainA: { status: 'DOWN' } } })
  expect(status).toBe(200)
})
