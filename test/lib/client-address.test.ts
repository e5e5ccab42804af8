import { clientOf } from '../../srv/lib/client-address.ts'

const of = (remoteAddress?: string) => clientOf({ remoteAddress })

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
  expect(new Set(inside.map(of)).size).toBe(1)
  expect(of('2001:db8:1:3::1')).not.toBe(of('2001:db8:1:2::1'))
})

test('no address at all, or something that is not one, is one unknown client', () => {
  expect(of(undefined)).toBe('unknown')
  expect(of('not an address')).toBe('unknown')
  expect(clientOf(undefined)).toBe('unknown')
})
