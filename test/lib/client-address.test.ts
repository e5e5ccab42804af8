import { clientOf, proxyTrust } from '../../srv/lib/client-address.ts'

const of = (remoteAddress?: string, headers: Record<string, string | string[]> = {}) => clientOf({ socket: { remoteAddress }, headers })

/** Runs `check` with these documented variables set, then restores them. */
function withSettings(settings: Record<string, string | undefined>, check: () => void) {
  const before = Object.fromEntries(Object.keys(settings).map(name => [name, process.env[name]]))
  const set = (values: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(values)) if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
  set(settings)
  try {
    check()
  } finally {
    set(before)
  }
}

const ROUTER = '10.0.1.5'
const behindRouter = (settings: Record<string, string | undefined>, check: () => void) =>
  withSettings({ GATEWAY_TRUSTED_PROXIES: '10.0.0.0/8', GATEWAY_CLIENT_ADDRESS_HEADER: undefined, VCAP_APPLICATION: undefined, ...settings }, check)

test.each([
  ['203.0.113.7', '203.0.113.7'],
  ['::ffff:203.0.113.7', '203.0.113.7'],
  ['2001:db8:1:2:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
  ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
  ['2001:0db8:0001:0002:ffff::', '2001:db8:1:2::/64'],
  ['2001:db8::1', '2001:db8:0:0::/64'],
  ['::1', '0:0:0:0::/64'],
  ['fe80::1%eth0', 'fe80:0:0:0::/64'],
  ['64:ff9b::192.0.2.33', '64:ff9b:0:0::/64'],
])('%s counts as %s', (address, client) => {
  expect(of(address)).toBe(client)
})

test('every address within one /64 is one client; the next /64 is another', () => {
  const inside = ['2001:db8:1:2::1', '2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2:1234::9']
  expect(new Set(inside.map(address => of(address))).size).toBe(1)
  expect(of('2001:db8:1:3::1')).not.toBe(of('2001:db8:1:2::1'))
})

test('no address at all, or something that is not one, is one unknown client', () => {
  expect(of(undefined)).toBe('unknown')
  expect(of('not an address')).toBe('unknown')
  expect(clientOf(undefined)).toBe('unknown')
})

describe('behind a trusted proxy', () => {
  test('the client is the right-most forwarded address that is no trusted proxy; what the client wrote left of it is never read', () => behindRouter({}, () => {
    expect(of(ROUTER, { 'x-forwarded-for': '198.51.100.7' })).toBe('198.51.100.7')
    expect(of(ROUTER, { 'x-forwarded-for': '1.2.3.4, 198.51.100.7' })).toBe('198.51.100.7')
    expect(of(ROUTER, { 'x-forwarded-for': '1.2.3.4, 198.51.100.7, 10.9.9.9' })).toBe('198.51.100.7')
    expect(of(ROUTER, { 'x-forwarded-for': '198.51.100.7:5123' })).toBe('198.51.100.7')
    expect(of(`::ffff:${ROUTER}`, { 'x-forwarded-for': '198.51.100.7' })).toBe('198.51.100.7')
  }))

  test('a forwarded IPv6 address counts by its /64', () => behindRouter({}, () => {
    expect(of(ROUTER, { 'x-forwarded-for': '2001:db8:1:2::1' })).toBe('2001:db8:1:2::/64')
    expect(of(ROUTER, { 'x-forwarded-for': '[2001:db8:1:2::9]:443' })).toBe('2001:db8:1:2::/64')
  }))

  test('an untrusted peer\'s header is ignored', () => behindRouter({}, () => {
    expect(of('198.51.100.9', { 'x-forwarded-for': '203.0.113.1' })).toBe('198.51.100.9')
  }))

  test('nothing is trusted unless configured (outside Cloud Foundry), or with none', () => {
    withSettings({ GATEWAY_TRUSTED_PROXIES: undefined, VCAP_APPLICATION: undefined }, () => {
      expect(of(ROUTER, { 'x-forwarded-for': '198.51.100.7' })).toBe(ROUTER)
    })
    withSettings({ GATEWAY_TRUSTED_PROXIES: 'none', VCAP_APPLICATION: '{}' }, () => {
      expect(of(ROUTER, { 'x-forwarded-for': '198.51.100.7' })).toBe(ROUTER)
    })
  })

  test('on Cloud Foundry the router\'s private and loopback ranges are trusted by default', () => {
    withSettings({ GATEWAY_TRUSTED_PROXIES: undefined, VCAP_APPLICATION: '{"application_name":"chain-access"}' }, () => {
      for (const router of ['10.255.3.4', '172.16.0.9', '192.168.1.1', '127.0.0.1', '::1', 'fd12::1']) {
        expect(of(router, { 'x-forwarded-for': '198.51.100.7' })).toBe('198.51.100.7')
      }
      expect(of('198.51.100.9', { 'x-forwarded-for': '203.0.113.1' })).toBe('198.51.100.9')
    })
  })

  test('the Forwarded header (RFC 7239) when configured', () => behindRouter({ GATEWAY_CLIENT_ADDRESS_HEADER: 'Forwarded' }, () => {
    expect(of(ROUTER, { forwarded: 'for=1.2.3.4, for=198.51.100.7;proto=https' })).toBe('198.51.100.7')
    expect(of(ROUTER, { forwarded: 'for="[2001:db8:1:2::1]:4711"' })).toBe('2001:db8:1:2::/64')
    expect(of(ROUTER, { 'x-forwarded-for': '198.51.100.7' })).toBe(ROUTER)
  }))

  test('hostile headers: malformed, huge or with many entries never name a client of the sender\'s choosing', () => behindRouter({}, () => {
    expect(of(ROUTER, { 'x-forwarded-for': 'not-an-address' })).toBe(ROUTER)
    expect(of(ROUTER, { 'x-forwarded-for': ',,,' })).toBe(ROUTER)
    expect(of(ROUTER, { 'x-forwarded-for': 'garbage, 198.51.100.7' })).toBe('198.51.100.7')
    expect(of(ROUTER, { 'x-forwarded-for': '198.51.100.7, garbage' })).toBe(ROUTER)
    expect(of(ROUTER, { 'x-forwarded-for': `${'9.9.9.9, '.repeat(5000)}198.51.100.7` })).toBe('198.51.100.7')
    expect(of(ROUTER, { 'x-forwarded-for': `198.51.100.7, ${'10.0.0.1, '.repeat(5000)}10.0.0.2` })).toBe('10.0.0.1')
    expect(of(ROUTER, { 'x-forwarded-for': ['198.51.100.7', '203.0.113.5'] })).toBe('203.0.113.5')
  }))

  test('a malformed setting is refused', () => {
    withSettings({ GATEWAY_TRUSTED_PROXIES: '10.0.0.0/33' }, () => expect(() => proxyTrust()).toThrow('GATEWAY_TRUSTED_PROXIES'))
    withSettings({ GATEWAY_TRUSTED_PROXIES: 'router.internal' }, () => expect(() => proxyTrust()).toThrow('GATEWAY_TRUSTED_PROXIES'))
    withSettings({ GATEWAY_CLIENT_ADDRESS_HEADER: 'x forwarded' }, () => expect(() => proxyTrust()).toThrow('GATEWAY_CLIENT_ADDRESS_HEADER'))
  })
})
