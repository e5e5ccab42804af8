import cds from '@sap/cds'

// The development wallet turned off: the devnet runs, its wallet routes are not served.
process.env.GATEWAY_ENABLED = 'true'
process.env.CHAIN_A_DEV_WALLET = 'false'
const { GET, POST, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true
afterAll(() => {
  delete process.env.GATEWAY_ENABLED
  delete process.env.CHAIN_A_DEV_WALLET
})

test('CHAIN_A_DEV_WALLET=false: nothing is served at /dev-wallet, and nothing signs', async () => {
  const list = await GET('/dev-wallet')
  expect([list.status, list.data.error.code]).toEqual([404, 'UNKNOWN_RESOURCE'])
  const sign = await POST('/dev-wallet/sign-data', { wallet: 1, address: 'x', payload: '00' })
  expect(sign.status).toBe(404)
  expect((await GET('/')).status).toBe(200)
})
