import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'

/**
 * Per-address limits count an IPv6 client by its /64: a client rotating through addresses of its
 * own /64 is one client to the failed-key limit and to the free verify lane's rate, while another
 * /64 is another client. The server and its clients run in a network namespace of their own
 * (`unshare`, iproute2), whose loopback holds the source addresses.
 */

const root = join(__dirname, '..', '..')
/** Three addresses of one /64, then one of the next /64. */
const SOURCES = ['2001:db8:24::5', '2001:db8:24:0:ffff:ffff:ffff:9', '2001:db8:24::1:7', '2001:db8:24:1::1']

test('every address of one /64 counts as one client; the next /64 is another', async () => {
  const addresses = SOURCES.map(address => `ip -6 addr add ${address}/128 dev lo nodad`).join(' && ')
  const script = `ip link set lo up && ${addresses} && exec "${process.execPath}" ${join(__dirname, 'ipv6-scenario.ts')} ${SOURCES.join(' ')}`
  const env = { ...process.env, NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON' }
  const { stdout } = await promisify(execFile)('unshare', ['-Urn', 'sh', '-c', script], { cwd: root, env, maxBuffer: 64 * 1024 * 1024 })
  const answers = JSON.parse(/IPV6_ANSWERS (.*)\n/.exec(stdout)![1]) as { from: string; path: string; status: number; code?: string }[]
  const [first, second, third, otherNetwork] = SOURCES
  const seen = answers.map(({ from, path, status, code }) => [from, path.startsWith('/me') ? 'bad key' : 'verify', status, code])
  expect(seen).toEqual([
    [first, 'bad key', 401, 'KEY_INVALID'],
    [first, 'bad key', 401, 'KEY_INVALID'],
    [first, 'bad key', 401, 'KEY_INVALID'],
    [second, 'bad key', 429, 'TOO_MANY_FAILED_ATTEMPTS'],
    [third, 'bad key', 429, 'TOO_MANY_FAILED_ATTEMPTS'],
    [otherNetwork, 'bad key', 401, 'KEY_INVALID'],
    [first, 'verify', 200, undefined],
    [second, 'verify', 200, undefined],
    [third, 'verify', 200, undefined],
    [second, 'verify', 429, 'RATE_LIMITED'],
    [otherNetwork, 'verify', 200, undefined],
  ])
}, 240_000)
