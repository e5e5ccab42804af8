import cds from '@sap/cds'

// Chain A's upstream is a port nobody listens on: every read that must ask it fails with a 503 of ours.
process.env.CHAIN_A_DEVNET = 'false'
process.env.BLOCKFROST_URL = 'http://127.0.0.1:9'
process.env.CHAIN_A_NETWORK = 'devnet'
const { GET, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }
defaults.validateStatus = () => true

afterAll(() => {
  delete process.env.CHAIN_A_DEVNET
  delete process.env.BLOCKFROST_URL
  delete process.env.CHAIN_A_NETWORK
})

/**
 * In production CAP replaces the body of every 5xx by `{"code":"503"}` (its sanitising, decided
 * per answer from NODE_ENV). Ours keep their stable code and the message written for callers, and
 * never an internal message or a stack.
 */
async function inProduction(work: () => Promise<any>): Promise<any> {
  const before = process.env.NODE_ENV
  process.env.NODE_ENV = 'production'
  try {
    return await work()
  } finally {
    process.env.NODE_ENV = before
  }
}

test('a 5xx on an OData route keeps its stable code and its message in production, without a stack', async () => {
  const response = await inProduction(() => GET(`/odata/v4/chaina-odata/Transactions('${'ab'.repeat(32)}')`))
  expect(response.data.error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', message: expect.stringContaining('chain-A upstream is unreachable') })
  expect(JSON.stringify(response.data)).not.toMatch(/\bat \S+:\d+:\d+|"stack"/)
  expect(response.status).toBe(503)
})
