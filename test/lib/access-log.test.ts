import cds from '@sap/cds'
import { connect } from 'node:net'
import { runningDevnet } from '../support/chain-a.ts'
import { bearer, issueTestKey, rawRequest } from '../support/gateway.ts'
import { routeFamilyOf, type AccessLine } from '../../srv/lib/access-log.ts'

/**
 * The access log: one JSON line per request, whatever answered it (a refusal of the gateway or of
 * the guards, a service, an own route, a 404), with the key's ID and never its secret, the units
 * charged and the request id; off with the access logger's level.
 */
process.env.GATEWAY_ENABLED = 'true'
const { GET, axios, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true

const S = '/odata/v4/chaina-odata'
let written: string[] = []
let spy: jest.SpyInstance

beforeAll(() => runningDevnet())
beforeEach(() => {
  written = []
  spy = jest.spyOn(console, 'info').mockImplementation((...args: unknown[]) => void written.push(args.map(String).join(' ')))
})
afterEach(() => spy.mockRestore())
afterAll(() => {
  delete process.env.GATEWAY_ENABLED
})

const accessLines = (): AccessLine[] => written.filter(line => line.startsWith('{"type":"access"')).map(line => JSON.parse(line))

/** The access line of the request with this id, once written (it is written as the answer closes). */
async function lineOf(requestId: string): Promise<AccessLine> {
  for (let waited = 0; waited < 10_000; waited += 10) {
    const line = accessLines().find(each => each.correlation_id === requestId)
    if (line) return line
    await new Promise(resolve => setTimeout(resolve, 10))
  }
  throw new Error(`no access line for ${requestId}; written: ${written.join('\n')}`)
}

const idOf = (response: { headers: Record<string, unknown> }) => String(response.headers['x-request-id'])

test('a metered call: its key by ID, never the secret, the units charged, the request id, the body bytes', async () => {
  const key = await issueTestKey()
  const response = await GET(`${S}/Blocks?$top=1&$select=height`, bearer(key.key))
  expect(response.status).toBe(200)
  const line = await lineOf(idOf(response))
  expect(line).toEqual({
    type: 'access', time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), method: 'GET', route_family: 'chaina-odata', path: `${S}/Blocks`,
    status: 200, latency_ms: expect.any(Number), key_id: key.id, units_charged: 1, correlation_id: idOf(response),
    bytes: Buffer.byteLength(JSON.stringify(response.data)), aborted: false,
  })
  expect(written.join('\n')).not.toContain(key.key)
})

test('the key sent as x-agent-token is named by its ID, and never written', async () => {
  const key = await issueTestKey()
  const response = await GET('/me', { headers: { 'x-agent-token': key.key } })
  expect(response.status).toBe(200)
  expect(await lineOf(idOf(response))).toMatchObject({ route_family: 'me', status: 200, key_id: key.id, units_charged: 0 })
  expect(written.join('\n')).not.toContain(key.key)
})

test.each([
  ['a missing key', `${S}/Blocks`, {}, 401, 'chaina-odata'],
  ['a made-up key', `${S}/Blocks?$top=1`, bearer('cag_made-up-secret'), 401, 'chaina-odata'],
  ['a closed route', '/nowhere', {}, 403, 'other'],
  ['$batch', `${S}/$batch`, {}, 403, 'chaina-odata'],
  ['a free route', '/health', {}, 200, 'health'],
  ['the chain-B spelling under /api/v1', '/api/v1/chainb/Documents', {}, 401, 'chainb'],
])('a refusal or a free call is logged too: %s', async (_name, path, options, status, family) => {
  const response = await GET(path, options)
  expect(response.status).toBe(status)
  expect(await lineOf(idOf(response))).toMatchObject({ route_family: family, status, key_id: null, units_charged: 0, path: path.split('?')[0] })
  expect(written.join('\n')).not.toContain('made-up-secret')
})

test('what the guards refuse before the gateway (a NUL in the target) is logged, its query left out', async () => {
  const answer = await rawRequest(axios.defaults.baseURL!, 'GET', `${S}/Blocks?$filter=hash%20eq%20%00`)
  expect(answer.status).toBe(400)
  const line = await lineOf(String(answer.headers['x-request-id']))
  expect(line).toMatchObject({ status: 400, path: `${S}/Blocks`, route_family: 'chaina-odata' })
})

test('a client that goes away before the answer is logged with 499, aborted', async () => {
  const { hostname, port } = new URL(axios.defaults.baseURL!)
  // A body announced but never finished: the route waits for it until the client leaves.
  const socket = connect(Number(port), hostname === 'localhost' ? '127.0.0.1' : hostname)
  await new Promise(resolve => socket.once('connect', resolve))
  socket.write(`POST /auth/challenge HTTP/1.1\r\nHost: ${hostname}\r\ncontent-type: application/json\r\ncontent-length: 100\r\nx-left-early: yes\r\n\r\n{"addr`)
  await new Promise(resolve => setTimeout(resolve, 200))
  socket.destroy()
  let line: AccessLine | undefined
  for (let waited = 0; waited < 10_000 && !line; waited += 10) {
    line = accessLines().find(each => each.path === '/auth/challenge')
    if (!line) await new Promise(resolve => setTimeout(resolve, 10))
  }
  expect(line).toMatchObject({ route_family: 'auth', method: 'POST', status: 499, aborted: true, bytes: 0 })
})

test('the access logger at level warn writes nothing', async () => {
  const level = (cds.log('access') as unknown as { level: number }).level
  cds.log('access', 'warn')
  try {
    const response = await GET('/health')
    await GET('/prices')
    await new Promise(resolve => setTimeout(resolve, 50))
    expect(accessLines().filter(line => line.correlation_id === idOf(response))).toEqual([])
  } finally {
    cds.log('access', level)
  }
  const again = await GET('/health')
  expect(await lineOf(idOf(again))).toMatchObject({ status: 200 })
})

test('route families are a bounded set named after the path\'s first segments', () => {
  expect(routeFamilyOf('/odata/v4/chainb-indexer/Blocks')).toBe('chainb-indexer')
  expect(routeFamilyOf('/api/v1/verify/verifyAttestation(attestationId=1)')).toBe('chainb-verify')
  expect(routeFamilyOf('/odata/v4/no-such-service/X')).toBe('odata')
  expect(routeFamilyOf('/auth/verify')).toBe('auth')
  expect(routeFamilyOf('/keys')).toBe('keys')
  expect(routeFamilyOf('/resources/sap-ui-core.js')).toBe('front-ends')
  expect(routeFamilyOf('/')).toBe('front-ends')
  expect(routeFamilyOf('/x'.repeat(100))).toBe('other')
})
