import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'

/**
 * The lists of test/setup/sqlite-run-only.js, whose files the PostgreSQL run leaves to the SQLite
 * run: every entry names a test file or folder that is there, and each file keeps to its list's
 * rule as its source shows it.
 */

const { DATABASE_FREE, OWN_DATABASE } = require('../setup/sqlite-run-only.js') as { DATABASE_FREE: string[]; OWN_DATABASE: string[] }
const TEST = join(__dirname, '..')

/** What no listed file may do, each as text its source would hold. */
const IN_PROCESS: [string, RegExp][] = [
  ['the service in process', /\bcds\.test\(/],
  ['a connection to the run\'s database', /\bcds\.(connect|db|deploy)\b|\bonPostgres\(/],
  ['a PostgreSQL client', /from 'pg'/],
]
/** What a database-free file may not do besides: start a server of the service. */
const SERVICE_SERVERS: [string, RegExp][] = [['a server of the service', /support\/(server|lane-gateways|purchases|gateway|browser)\.ts'/]]

function testFiles(entry: string): string[] {
  const path = join(TEST, entry)
  if (!statSync(path).isDirectory()) return [path]
  return readdirSync(path, { recursive: true, encoding: 'utf8' }).filter(name => name.endsWith('.test.ts')).map(name => join(path, name))
}

/** A file's source, with the sources of the test files it runs by importing them (test/koios/ runs the chain-A suite's files so). */
function sourceOf(file: string): string {
  const source = readFileSync(file, 'utf8')
  const imported = [...source.matchAll(/^import '(\.[^']+\.test\.ts)'/gm)].map(([, path]) => readFileSync(join(dirname(file), path), 'utf8'))
  return [source, ...imported].join('\n')
}

function breaches(entry: string, rules: [string, RegExp][]): string[] {
  expect(existsSync(join(TEST, entry))).toBe(true)
  const files = testFiles(entry)
  expect(files.length).toBeGreaterThan(0)
  return files.flatMap(file => rules.filter(([, pattern]) => pattern.test(sourceOf(file))).map(([use]) => `${file}: ${use}`))
}

test.each(DATABASE_FREE)('database-free: %s is there and uses no database', entry => {
  expect(breaches(entry, [...IN_PROCESS, ...SERVICE_SERVERS])).toEqual([])
})

/** Modules that start a file's servers for it, read with the files that name them. */
const SERVER_STARTERS = ['support/browser.ts', 'network/ipv6-scenario.ts']

/** A file's source with the sources of the server starters it names. */
function withStarters(file: string): string {
  const source = sourceOf(file)
  const starters = SERVER_STARTERS.filter(starter => source.includes(starter.split('/').pop()!.replace(/\.ts$/, '')))
  return [source, ...starters.map(starter => readFileSync(join(TEST, starter), 'utf8'))].join('\n')
}

test.each(OWN_DATABASE)('its own database: %s is there, runs nothing on the run\'s database, and takes the profile and the PostgreSQL database away from what it starts', entry => {
  expect(breaches(entry, IN_PROCESS)).toEqual([])
  for (const file of testFiles(entry)) {
    const source = withStarters(file)
    // Named one by one, or all of CDS_* at once by a pattern's prefix.
    expect(source).toMatch(/'CDS_ENV'|delete env\.CDS_ENV|CDS_ENV: '(?![^']*\bpg\b)[^']*'|\|CDS_\|/)
    expect(source).toMatch(/'CDS_REQUIRES_DB_CREDENTIALS_DATABASE'|delete env\.CDS_REQUIRES_DB_CREDENTIALS_DATABASE|\|CDS_\|/)
    expect(source).toMatch(/cds_requires_db_credentials_url: /i)
  }
})
