import cds from '@sap/cds'
import { expireSigningRequests } from '../../srv/chaina-sign/expiry.ts'
import { expireBuilds } from '../../srv/chaina-transaction/expiry.ts'
import { runningDevnet } from '../support/chain-a.ts'
import { expiryJobs } from '../support/expiry.ts'
import { SIGN, TX, buildTransfer } from './support.ts'

// Expiry is one scheduled job per owning service (CHAIN_A_EXPIRY_INTERVAL_MS), not work done on the
// way of every request; here it runs every 100 ms.
process.env.CHAIN_A_EXPIRY_INTERVAL_MS = '100'
const { POST, defaults } = cds.test(__dirname + '/../..')
defaults.auth = { username: 'alice', password: '' }
defaults.validateStatus = () => true
afterAll(() => {
  delete process.env.CHAIN_A_EXPIRY_INTERVAL_MS
})

let wallet: ReturnType<ReturnType<typeof runningDevnet>['walletKeys']>
let other: string

beforeAll(async () => {
  const devnet = runningDevnet()
  wallet = devnet.walletKeys('wallet-4')
  other = devnet.wallets()[0].address
  await expiryJobs()
})

async function stored(entity: 'chainasign.SigningRequests' | 'chainatx.TransactionBuilds', id: string): Promise<string | undefined> {
  const row = await cds.tx(() => SELECT.one.from(entity).columns('status').where({ ID: id }))
  return (row as { status?: string } | undefined)?.status
}
const auditKindsOf = async (id: string) =>
  (await cds.tx(() => SELECT.from('chainasign.SigningAuditLog').columns('kind', 'actor').where({ signingRequest_ID: id }).orderBy('sequence'))).map((e: any) => [e.kind, e.actor])

async function eventually(check: () => Promise<boolean>, ms = 5000) {
  for (const started = Date.now(); Date.now() - started < ms;) {
    if (await check()) return
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  throw new Error('the expiry job did not get there in time')
}

test('the scheduled jobs record expired requests and builds by themselves, with no request asking', async () => {
  const build = await buildTransfer(POST, wallet.address, other)
  const request = (await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID, expiresInSeconds: 1 })).data
  const stale = await buildTransfer(POST, wallet.address, other, '2100000')
  await cds.tx(() => UPDATE('chainatx.TransactionBuilds', stale.ID).set({ expiresAt: new Date(Date.now() - 1000).toISOString() }))

  await eventually(async () => (await stored('chainatx.TransactionBuilds', stale.ID)) === 'expired')
  await eventually(async () => (await stored('chainasign.SigningRequests', request.ID)) === 'expired')
  expect(await stored('chainatx.TransactionBuilds', build.ID)).toBe('built')
  expect(await auditKindsOf(request.ID)).toEqual([['created', 'alice'], ['expired', 'system']])
  await POST(`${TX}/CancelBuild`, { buildId: build.ID })
})

test('runs in several instances at once change and audit each expiry once', async () => {
  const [transactions, signing] = await expiryJobs()
  await Promise.all([transactions.stop(), signing.stop()])
  const build = await buildTransfer(POST, wallet.address, other)
  const request = (await POST(`${SIGN}/CreateSigningRequest`, { buildId: build.ID, expiresInSeconds: 1 })).data
  await new Promise(resolve => setTimeout(resolve, Date.parse(request.expiresAt) - Date.now() + 50))

  const instance = () => cds.tx({ user: cds.User.privileged }, async () => {
    await expireBuilds()
    await expireSigningRequests()
  })
  await Promise.all([instance(), instance(), instance()])
  expect(await stored('chainasign.SigningRequests', request.ID)).toBe('expired')
  expect(await stored('chainatx.TransactionBuilds', build.ID)).toBe('built')
  expect(await auditKindsOf(request.ID)).toEqual([['created', 'alice'], ['expired', 'system']])
  expect((await POST(`${SIGN}/GetAuditLog`, {})).data.valid).toBe(true)
  await POST(`${TX}/CancelBuild`, { buildId: build.ID })
})
