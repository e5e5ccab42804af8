import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLiteFileService from '../../srv/lib/sqlite-file.ts'

const directory = mkdtempSync(join(tmpdir(), 'sqlite-file-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

const connectionFor = (url: string) => new (SQLiteFileService as any)('db', undefined, { credentials: { url } }).factory.create()

test('a database file is opened in WAL mode with synchronous = NORMAL', async () => {
  const connection = await connectionFor(join(directory, 'file.sqlite'))
  expect(connection.prepare('PRAGMA journal_mode').get([])).toEqual({ journal_mode: 'wal' })
  expect(connection.prepare('PRAGMA synchronous').get([])).toEqual({ synchronous: 1 })
  connection.close()
})

test('an in-memory database is left as SQLite opens it', async () => {
  const connection = await connectionFor(':memory:')
  expect(connection.prepare('PRAGMA synchronous').get([])).toEqual({ synchronous: 2 })
  connection.close()
})
