import cds from '@sap/cds'
import { runningDevnet } from '../support/chain-a.ts'
import { balanceOf, bearer, issueTestKey, ledgerOf, settled } from '../support/gateway.ts'
import { signWith } from '../support/sign.ts'

process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_RATE_PER_SECOND = '100000'
process.env.GATEWAY_BURST = '100000'
const { POST, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true

const TX = '/odata/v4/chaina-transaction'
afterAll(() => {
  for (const name of ['GATEWAY_ENABLED', 'GATEWAY_RATE_PER_SECOND', 'GATEWAY_BURST']) delete process.env[name]
})

test('through the gateway a build costs 10 units, a submission 20, a status check 2; a rejected submission is refunded', async () => {
  const devnet = runningDevnet()
  const wallet = devnet.walletKeys('wallet-1')
  const { id, key } = await issueTestKey({ units: 100 })

  const build = await POST(`${TX}/BuildSimpleAdaTransaction`, { senderAddress: wallet.address, recipientAddress: devnet.wallets()[1].address, lovelaceAmount: '3000000' }, bearer(key))
  expect(build.data).toMatchObject({ status: 'built' })
  expect(build.headers['x-access-units-charged']).toBe('10')

  const rejected = await POST(`${TX}/SubmitSignedTransaction`, { signedTxCbor: build.data.unsignedTxCbor, buildId: build.data.ID }, bearer(key))
  expect(rejected.data.error.code).toBe('TX_REJECTED')
  expect(rejected.headers['x-access-units-charged']).toBe('0')
  expect(await balanceOf(id)).toBe(90)

  const rebuilt = await POST(`${TX}/RebuildTransaction`, { buildId: build.data.ID }, bearer(key))
  const submitted = await POST(`${TX}/SubmitSignedTransaction`, { signedTxCbor: signWith(rebuilt.data.unsignedTxCbor, wallet.payment), buildId: rebuilt.data.ID }, bearer(key))
  expect(submitted.data.status).toBe('submitted')
  expect(submitted.headers['x-access-units-charged']).toBe('20')
  devnet.produceBlock()
  const status = await POST(`${TX}/GetTransactionStatus`, { txHash: rebuilt.data.txHash }, bearer(key))
  expect(status.data.status).toBe('confirmed')
  expect(status.headers['x-access-units-charged']).toBe('2')

  await settled(id)
  expect(await balanceOf(id)).toBe(100 - 10 - 10 - 20 - 2)
  const charges = (await ledgerOf(id)).filter(entry => entry.kind === 'charge').map(entry => [entry.routeClass, entry.state])
  expect(charges).toEqual([['build', 'committed'], ['submit', 'refunded'], ['build', 'committed'], ['submit', 'committed'], ['read-action', 'committed']])
})
