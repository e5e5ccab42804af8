import cds from '@sap/cds'

/**
 * The probes self-hosted (the gateway off, CAP's authentication in force on the services): free and
 * without credentials all the same. A chain turned off is reported DISABLED, and the instance is ready.
 */
process.env.CHAIN_A_ENABLED = 'false'
process.env.HEALTH_CACHE_MS = '0'
const app: { url: string } = cds.test(__dirname + '/../..') as any

afterAll(() => {
  for (const name of ['CHAIN_A_ENABLED', 'HEALTH_CACHE_MS']) delete process.env[name]
})

const probe = async (path: string) => {
  const response = await fetch(app.url + path)
  return { status: response.status, body: await response.json(), headers: response.headers }
}

test('the services ask for credentials', async () => {
  const response = await fetch(app.url + '/odata/v4/chainb-indexer/getHealth()')
  expect(response.status).toBe(401)
})

test('/health without credentials: 200 UP', async () => {
  const { status, body, headers } = await probe('/health')
  expect(body).toMatchObject({ status: 'UP', uptimeSeconds: expect.any(Number) })
  expect(status).toBe(200)
  expect(headers.get('x-access-units-charged')).toBeNull()
})

test('/ready without credentials: 200 READY, chain A (turned off) DISABLED, chain B and its parts up', async () => {
  const { status, body } = await probe('/ready')
  expect(body).toMatchObject({
    status: 'READY',
    checks: { database: { status: 'UP' }, chainA: { status: 'DISABLED' }, chainB: { status: 'UP' }, jobQueue: { status: 'UP' }, provers: { status: 'UP' } },
  })
  expect(status).toBe(200)
})

test('a query string is ignored', async () => {
  const { status, body } = await probe('/ready?verbose=true&$top=1')
  expect(body.status).toBe('READY')
  expect(status).toBe(200)
})

test('under the probe\'s path nothing is served: 404 with a code', async () => {
  const { status, body } = await probe('/ready/details')
  expect(body.error.code).toBe('UNKNOWN_RESOURCE')
  expect(status).toBe(404)
})
