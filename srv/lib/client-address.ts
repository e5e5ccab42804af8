import { isIPv4, isIPv6 } from 'node:net'

/**
 * The client a per-address limit counts against: an IPv4 address as it is, an IPv6 address by its
 * /64 prefix (one subscriber's network: a client rotating through its own /64 is still one client),
 * an IPv4 address mapped into IPv6 as the IPv4 address.
 */
export function clientOf(socket: { remoteAddress?: string } | undefined): string {
  const address = socket?.remoteAddress ?? ''
  if (isIPv4(address)) return address
  if (!isIPv6(address)) return 'unknown'
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return mapped[1]
  return `${ipv6Groups(address).slice(0, 4).join(':')}::/64`
}

/** The eight 16-bit groups of an IPv6 address, in lower-case hexadecimal without leading zeros. */
function ipv6Groups(address: string): string[] {
  const bare = address.split('%')[0]
  const withoutIPv4Tail = bare.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a, b, c, d) =>
    `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`)
  const [head, tail] = withoutIPv4Tail.split('::')
  const left = head ? head.split(':') : []
  const right = tail === undefined ? [] : tail ? tail.split(':') : []
  const missing = tail === undefined ? 0 : 8 - left.length - right.length
  return [...left, ...Array(missing).fill('0'), ...right].map(group => parseInt(group, 16).toString(16))
}
