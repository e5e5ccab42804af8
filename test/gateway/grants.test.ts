import cds from '@sap/cds'
import { runningDevnet } from '../support/chain-a.ts'
import { issueGrant, revokeGrant } from '../../srv/gateway/accounts.ts'
import { chainAIndex } from '../../srv/chaina-odata/service.ts'
import { administer, onPostgres } from '../setup/postgres.ts'

// Self-hosted (no gateway): a product grant's token in x-agent-token is the caller (spec 5.7).
const { GET, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true

const S = '/odata/v4/chaina-odata'
const asGrant = (token: string) => ({ headers: { 'x-agent-token': token } })

beforeAll(() => runningDevnet())

test('a chain-A grant token reads the chain-A service', async () => {
  const grant = await issueGrant({ product: 'chain-a' })
  const response = await GET(`${S}/Blocks?$top=1`, asGrant(grant.token))
  expect(response.data.value).toHaveLength(1)
  expect(response.status).toBe(200)
})

test('a chain-B grant does not reach chain A (403 from the product itself)', async () => {
  const grant = await issueGrant({ product: 'chain-b' })
  const response = await GET(`${S}/Blocks?$top=1`, asGrant(grant.token))
  expect(response.data.error.code).toBe('GRANT_FORBIDDEN')
  expect(response.status).toBe(403)
})

test('a grant allows only its operations', async () => {
  const grant = await issueGrant({ product: 'chain-a', operations: ['ChainAReadService:Blocks'] })
  const blocks = await GET(`${S}/Blocks?$top=1`, asGrant(grant.token))
  const epochs = await GET(`${S}/Epochs(0)`, asGrant(grant.token))
  expect(blocks.status).toBe(200)
  expect(epochs.data.error).toMatchObject({ code: 'GRANT_FORBIDDEN', message: expect.stringContaining('ChainAReadService:Epochs') })
})

test('a revoked grant answers 401 at once', async () => {
  const grant = await issueGrant({ product: 'chain-a' })
  expect((await GET(`${S}/Blocks?$top=1`, asGrant(grant.token))).status).toBe(200)
  await revokeGrant(grant.id)
  const response = await GET(`${S}/Blocks?$top=1`, asGrant(grant.token))
  expect(response.data.error.code).toBe('GRANT_INVALID')
  expect(response.status).toBe(401)
})

test('an unknown grant token answers 401; mocked users still work without one', async () => {
  const forged = 'cga_' + 'A'.repeat(43)
  const unknown = await GET(`${S}/Blocks?$top=1`, asGrant(forged))
  const alice = await GET(`${S}/Blocks?$top=1`, { auth: { username: 'alice', password: '' } })
  expect(unknown.status).toBe(401)
  expect(alice.status).toBe(200)
})

test('a refused grant starts no index work: no database session is left inside a transaction', async () => {
  // The chain's tip is then known: the first query of a refused read would be the one in a transaction.
  const reader = await issueGrant({ product: 'chain-a' })
  expect((await GET(`${S}/Blocks?$top=1`, asGrant(reader.token))).data.value).toHaveLength(1)
  const blocks = jest.spyOn(chainAIndex(), 'blocks')
  const grant = await issueGrant({ product: 'chain-b' })
  for (let i = 0; i < 5; i++) expect((await GET(`${S}/Blocks?$top=1`, asGrant(grant.token))).data.error.code).toBe('GRANT_FORBIDDEN')
  expect(blocks).not.toHaveBeenCalled()
  blocks.mockRestore()
  if (onPostgres()) expect(await sessionsLeftInTransaction()).toEqual([])
})

/** Sessions of this file's database idle inside a transaction; one that ends within a second is still working. */
async function sessionsLeftInTransaction(): Promise<string[]> {
  const database: string = cds.env.requires.db.credentials.database
  for (let waited = 0; ; waited += 100) {
    const [rows] = await administer(`SELECT query FROM pg_stat_activity WHERE datname = '${database}' AND state LIKE 'idle in transaction%'`)
    if (!rows.length || waited >= 1000) return rows.map(row => row.query as string)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

test('a refused grant reaches no handler of the service, not even a before handler registered first', async () => {
  const srv = cds.services.ChainASignService as cds.ApplicationService
  const reached = jest.fn()
  srv.prepend(() => srv.before('READ', 'SigningPolicies', reached))
  const grant = await issueGrant({ product: 'chain-b' })
  const response = await GET('/odata/v4/chaina-sign/SigningPolicies', asGrant(grant.token))
  expect(response.data.error.code).toBe('GRANT_FORBIDDEN')
  expect(reached).not.toHaveBeenCalled()
})
