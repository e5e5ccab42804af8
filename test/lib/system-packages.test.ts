import { spawnSync } from 'node:child_process'
import { join } from 'node:path'

// The gate in front of tests that need a Debian package, run as jest's configuration runs it.
const GATE = join(__dirname, '..', 'setup', 'system-packages.js')

function runGate(env: Record<string, string>) {
  const script = `console.log(JSON.stringify(require(${JSON.stringify(GATE)}).testsWithoutTheirPackages()))`
  // An empty PATH hides softhsm2-util and pg_isready, and CHROMIUM_PATH points at no file, as on a machine without the packages.
  return spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { PATH: '', CHROMIUM_PATH: '/nonexistent/chromium', ...env } })
}

test('a missing package leaves its tests out with one printed line that says what to install', () => {
  const run = runGate({})
  expect(run.stderr).toBe("skipping the HSM signing tests: install Debian's softhsm2 (apt-get install softhsm2) to run them\n"
    + "skipping the network namespace tests (they also need user namespaces): install Debian's iproute2 (apt-get install iproute2) to run them\n"
    + "skipping the tests that need a PostgreSQL server of their own (test/postgres/: schema deploys, schema changes, the production deployment): install Debian's postgresql (apt-get install postgresql) to run them\n"
    + "skipping the browser tests: install Debian's chromium (apt-get install chromium) to run them\n")
  expect(JSON.parse(run.stdout)).toEqual(['/hsm\\.test\\.ts$', '/test/network/', '/test/postgres/', '/test/browser/'])
  expect(run.status).toBe(0)
})

test('with REQUIRE_SYSTEM_PACKAGES=1, as .ci/run sets it, a missing package fails the run', () => {
  const run = runGate({ REQUIRE_SYSTEM_PACKAGES: '1' })
  expect(run.stderr).toContain('REQUIRE_SYSTEM_PACKAGES=1 but Debian package(s) missing: softhsm2, iproute2, postgresql, chromium')
  expect(run.status).not.toBe(0)
})
