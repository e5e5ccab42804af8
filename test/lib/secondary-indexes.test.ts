import cds from '@sap/cds'
import { indexStatements } from '../../srv/lib/secondary-indexes.ts'
import { isPostgres } from '../../srv/lib/plain-sql.ts'

/** `@db.indexes` in the model becomes real indexes once the services are served, on either database. */

cds.test(__dirname + '/../..')

test('each entry of @db.indexes is one CREATE INDEX IF NOT EXISTS over its columns in order', () => {
  const model = { definitions: {
    'x.Blocks': { kind: 'entity', name: 'x.Blocks', '@db.indexes': ['time', 'chain, height'] },
    'x.View': { kind: 'entity', name: 'x.View', query: {}, '@db.indexes': ['time'] },
    'x.Plain': { kind: 'entity', name: 'x.Plain' },
  } }
  expect(indexStatements(model)).toEqual([
    'CREATE INDEX IF NOT EXISTS x_Blocks_time ON x_Blocks (time)',
    'CREATE INDEX IF NOT EXISTS x_Blocks_chain_height ON x_Blocks (chain, height)',
  ])
  expect(() => indexStatements({ definitions: { 'x.Bad': { kind: 'entity', name: 'x.Bad', '@db.indexes': ['time; drop table x'] } } })).toThrow("'time; drop table x' is not a list of columns")
})

test.each(['chaina_Transactions_blockHash', 'chainb_Blocks_timestamp', 'chainb_UnshieldedUtxos_spentAtTransaction_hash'])('the database has the index %s', async name => {
  const found = isPostgres()
    ? await cds.run('SELECT indexname AS name FROM pg_indexes WHERE indexname = $1', [name.toLowerCase()])
    : await cds.run("SELECT name FROM sqlite_master WHERE type = 'index' AND name = ?", [name])
  expect(found).toHaveLength(1)
})
