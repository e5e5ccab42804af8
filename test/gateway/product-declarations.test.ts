import cds from '@sap/cds'
import { balanceOf, issueTestKey } from '../support/gateway.ts'
import { revokeGrant } from '../../srv/gateway/accounts.ts'
import * as ledger from '../../srv/gateway/ledger.ts'

/**
 * The gateway names no product: what a product's grant allows, which service hears of a revoked
 * grant and which service's failed jobs are refunded, it reads from the services' own
 * declarations (`@gateway.product`, `@gateway.onGrantRevoked`, `@gateway.refundOn`).
 */

process.env.GATEWAY_ENABLED = 'true'
cds.test(__dirname + '/../..')

afterAll(() => {
  delete process.env.GATEWAY_ENABLED
})

async function grantsOf(keyId: string): Promise<{ ID: string; product: string; allowedOperations: string[] }[]> {
  const { ProductGrants } = cds.entities('gateway')
  const rows = await cds.tx(() => SELECT.from(ProductGrants).columns('ID', 'product', 'allowedOperations', 'status').where({ apiKey_ID: keyId }))
  return rows.map((row: any) => ({ ...row, allowedOperations: JSON.parse(row.allowedOperations).sort() }))
}

test('a key\'s grant on each product allows every operation of the services that declare that product', async () => {
  const { id } = await issueTestKey()
  const grants = await grantsOf(id)
  expect(Object.fromEntries(grants.map(grant => [grant.product, grant.allowedOperations]))).toEqual({
    'chain-a': ['ChainAReadService:*', 'ChainASignService:*', 'ChainATransactionService:*'],
    'chain-b': ['ChainBIndexerService:*', 'ChainBService:*', 'ChainBVerifyService:*'],
  })
})

test('a revoked grant is told to the service that asks for it', async () => {
  const { id } = await issueTestKey()
  const grant = (await grantsOf(id)).find(candidate => candidate.product === 'chain-b')!
  const heard: string[] = []
  cds.services.ChainBService.on('GrantRevoked', (msg: { data: { grantId: string } }) => {
    heard.push(msg.data.grantId)
  })
  expect(await revokeGrant(grant.ID)).toBe(true)
  for (let i = 0; i < 100 && !heard.length; i++) await new Promise(resolve => setTimeout(resolve, 10))
  expect(heard).toEqual([grant.ID])
})

test('a failed job the service reports refunds the charge of the request that queued it', async () => {
  const { id } = await issueTestKey({ units: 10 })
  const { ApiKeys } = cds.entities('gateway')
  const { secretHash } = await cds.tx(() => SELECT.one.from(ApiKeys).columns('secretHash').where({ ID: id }))
  await ledger.reserve({ keyId: id, secretHash, version: 0, units: 3, routeClass: 'chainb-write', route: 'POST /anchorDocument', routeFamily: 'other', requestId: 'declared-job' })
  expect(await ledger.commit('declared-job', '200')).toBe(true)
  expect(await balanceOf(id)).toBe(7)
  await cds.services.ChainBService.emit('JobFailed', { jobId: cds.utils.uuid(), owner: `key:${id}`, requestId: 'declared-job', errorCode: 'SPONSOR_EXHAUSTED' })
  for (let i = 0; i < 100 && (await balanceOf(id)) !== 10; i++) await new Promise(resolve => setTimeout(resolve, 10))
  expect(await balanceOf(id)).toBe(10)
})
