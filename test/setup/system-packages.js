const { spawnSync } = require('node:child_process')
const { existsSync } = require('node:fs')
const { delimiter, join } = require('node:path')

/**
 * Tests that need a Debian package. Where the package is missing they are left out of the run
 * with one printed line saying what to install; with REQUIRE_SYSTEM_PACKAGES=1 (set by .ci/run,
 * which installs them) a missing package fails the run instead, so CI never skips them.
 */
const SYSTEM_PACKAGES = [
  {
    debian: 'softhsm2',
    tests: 'the HSM signing tests',
    testPathPattern: '/hsm\\.test\\.ts$',
    installed: () => existsSync('/usr/lib/softhsm/libsofthsm2.so') && onPath('softhsm2-util'),
  },
  {
    debian: 'iproute2',
    tests: 'the network namespace tests (they also need user namespaces)',
    testPathPattern: '/test/network/',
    installed: () => onPath('ip') && onPath('unshare') && spawnSync('unshare', ['-Urn', 'ip', 'link', 'set', 'lo', 'up']).status === 0,
  },
  {
    debian: 'postgresql',
    tests: 'the tests that need a PostgreSQL server of their own (test/postgres/: schema deploys, schema changes, the production deployment)',
    testPathPattern: '/test/postgres/',
    installed: () => spawnSync('pg_isready', ['-h', '127.0.0.1', '-p', '5432', '-q']).status === 0,
  },
  {
    debian: 'chromium',
    tests: 'the browser tests',
    testPathPattern: '/test/browser/',
    installed: () => existsSync(CHROMIUM),
  },
]

/** Debian's Chromium, which the browser tests drive with playwright-core (CHROMIUM_PATH names another, as the gate's own test does). */
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium'

function onPath(command) {
  return (process.env.PATH ?? '').split(delimiter).some(dir => dir && existsSync(join(dir, command)))
}

/** Path patterns of the tests whose package is missing; prints one line for each such package. */
function testsWithoutTheirPackages() {
  const missing = SYSTEM_PACKAGES.filter(entry => !entry.installed())
  if (missing.length && process.env.REQUIRE_SYSTEM_PACKAGES === '1')
    throw new Error(`REQUIRE_SYSTEM_PACKAGES=1 but Debian package(s) missing: ${missing.map(entry => entry.debian).join(', ')}`)
  for (const entry of missing) process.stderr.write(`skipping ${entry.tests}: install Debian's ${entry.debian} (apt-get install ${entry.debian}) to run them\n`)
  return missing.map(entry => entry.testPathPattern)
}

module.exports = { SYSTEM_PACKAGES, CHROMIUM, testsWithoutTheirPackages }
