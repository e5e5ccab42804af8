import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The database-free list (test/setup/database-free.js), whose files the PostgreSQL run leaves to
 * the SQLite run: every entry names a test file or folder that is there, and no file it covers
 * starts the service in process (cds.test), starts a server of the service, or reads a database.
 */

const { DATABASE_FREE } = require('../setup/database-free.js') as { DATABASE_FREE: string[] }
const TEST = join(__dirname, '..')

/** What a test file may not do to be on the list, each as text its source would hold. */
const DATABASE_USES: [string, RegExp][] = [
  ['the service in process', /\bcds\.test\(/],
  ['a connection to a database', /\bcds\.(connect|db|deploy)\b/],
  ['a server of the service', /support\/(server|lane-gateways|purchases|gateway|browser)\.ts'/],
  ['a PostgreSQL client', /from 'pg'/],
]

function testFiles(entry: string): string[] {
  const path = join(TEST, entry)
  if (!statSync(path).isDirectory()) return [path]
  return readdirSync(path, { recursive: true, encoding: 'utf8' }).filter(name => name.endsWith('.test.ts')).map(name => join(path, name))
}

test.each(DATABASE_FREE)('%s is there and its tests use no database', entry => {
  expect(existsSync(join(TEST, entry))).toBe(true)
  const files = testFiles(entry)
  expect(files.length).toBeGreaterThan(0)
  const uses = files.flatMap(file => DATABASE_USES.filter(([, pattern]) => pattern.test(readFileSync(file, 'utf8'))).map(([use]) => `${file}: ${use}`))
  expect(uses).toEqual([])
})
