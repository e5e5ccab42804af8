import cds from '@sap/cds'
import { ApiKeys, LedgerEntries, Plans, Prices, ProductGrants } from '#cds-models/gateway'
import { tableOf } from '../../srv/lib/plain-sql.ts'

/** The ledger's plain SQL names its tables with tableOf: exactly the tables CAP itself queries, on either database. */
cds.test(__dirname + '/../..')

const { SELECT } = cds.ql
const sqlOf = (query: unknown): string => (cds.db as unknown as { cqn2sql(query: unknown): { sql: string } }).cqn2sql(query).sql

test.each([
  ['ApiKeys', ApiKeys],
  ['LedgerEntries', LedgerEntries],
  ['ProductGrants', ProductGrants],
  ['Plans', Plans],
  ['Prices', Prices],
])('%s: tableOf names the table CAP reads', async (_name, entity) => {
  expect(sqlOf(SELECT.from(entity))).toMatch(new RegExp(` FROM ${tableOf(entity)} as `))
  const [row] = await cds.run(`SELECT count(*) AS "n" FROM ${tableOf(entity)}`)
  expect(Number(row.n)).toBeGreaterThanOrEqual(0)
})

test('tableOf refuses a name that is no entity of the model', () => {
  expect(() => tableOf({ name: 'gateway.Nothing' })).toThrow('gateway.Nothing is not an entity of the loaded model')
})
