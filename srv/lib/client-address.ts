import type { IncomingHttpHeaders } from 'node:http'
import { BlockList, isIPv4, isIPv6 } from 'node:net'
import { requiresOptions } from './requires-options.ts'

/**
 * The client a per-client limit counts against. Behind a proxy (Cloud Foundry's router, a load
 * balancer) every call comes from the proxy's address, so the address the proxy forwarded counts
 * instead, but only when the call comes from a proxy the configuration trusts: the forwarded
 * header is walked from the right (the entry the nearest proxy added) past the trusted proxies, and
 * the first address that is not one is the client. What a client writes into the header itself is
 * left of that and never read; an untrusted peer's header is ignored altogether.
 */

const options = requiresOptions('gateway', {
  GATEWAY_TRUSTED_PROXIES: 'trustedProxies',
  GATEWAY_CLIENT_ADDRESS_HEADER: 'clientAddressHeader',
}, { named: 'variable' })

/**
 * What Cloud Foundry's router and the platform's own hops connect from: private and loopback
 * ranges. Trusted by default when the app runs on Cloud Foundry (VCAP_APPLICATION is set).
 */
export const CLOUD_FOUNDRY_PROXIES = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '127.0.0.0/8', '::1/128', 'fc00::/7']
const DEFAULT_HEADER = 'x-forwarded-for'
/** Entries of a forwarded header looked at, from the right: more hops than any real chain of proxies. */
const MAX_HOPS = 16

/** The part of a call its client is told by. */
export interface ClientRequest {
  socket?: { remoteAddress?: string }
  headers?: IncomingHttpHeaders
}

interface ProxyTrust {
  proxies: BlockList
  trustsAny: boolean
  header: string
}

let cached: { key: string; trust: ProxyTrust } | undefined

/** The configured trust (GATEWAY_TRUSTED_PROXIES, GATEWAY_CLIENT_ADDRESS_HEADER), parsed once per value. A malformed setting throws. */
export function proxyTrust(): ProxyTrust {
  const read = options.reader(options.options())
  const configured = read.optional('trustedProxies')
  const header = read.string('clientAddressHeader', DEFAULT_HEADER).trim().toLowerCase()
  const key = `${configured ?? ''}\n${header}\n${process.env.VCAP_APPLICATION ? 'cf' : ''}`
  if (cached?.key === key) return cached.trust
  if (!/^[a-z0-9-]+$/.test(header)) throw new Error(`Setting ${options.optionName('clientAddressHeader')} must be a header name, got '${header}'`)
  const ranges = configured === undefined ? (process.env.VCAP_APPLICATION ? CLOUD_FOUNDRY_PROXIES : []) : rangesOf(configured)
  const proxies = new BlockList()
  for (const range of ranges) addRange(proxies, range)
  const trust = { proxies, trustsAny: ranges.length > 0, header }
  cached = { key, trust }
  return trust
}

/** The configured list: addresses and CIDR ranges, separated by commas or spaces; `none` trusts no proxy. */
function rangesOf(text: string): string[] {
  const ranges = text.split(/[\s,]+/).filter(Boolean)
  return ranges.length === 1 && ranges[0].toLowerCase() === 'none' ? [] : ranges
}

function addRange(list: BlockList, range: string) {
  const [address, bits, ...rest] = range.split('/')
  const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : undefined
  const most = family === 'ipv4' ? 32 : 128
  const prefix = bits === undefined ? most : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN
  if (!family || rest.length || !(prefix >= 0 && prefix <= most)) {
    throw new Error(`Setting ${options.optionName('trustedProxies')} must list IP addresses or CIDR ranges (or be none), got '${range}'`)
  }
  list.addSubnet(address, prefix, family)
}

/**
 * The client of a call, as a per-client limit counts it: its address (the peer's, or the one a
 * trusted proxy forwarded), an IPv4 address as it is, an IPv6 address by its /64 prefix (one
 * subscriber's network: a client rotating through its own /64 is still one client), an IPv4
 * address mapped into IPv6 as the IPv4 address.
 */
export function clientOf(req: ClientRequest | undefined, trust: ProxyTrust = proxyTrust()): string {
  return aggregated(clientAddressOf(req, trust))
}

/** The client's address, not aggregated; '' when there is none. */
export function clientAddressOf(req: ClientRequest | undefined, trust: ProxyTrust = proxyTrust()): string {
  let address = plainAddress(req?.socket?.remoteAddress ?? '')
  if (!trust.trustsAny || !isTrusted(trust, address)) return address
  const forwarded = forwardedAddresses(req?.headers?.[trust.header], trust.header)
  for (let hop = 0; hop < forwarded.length && isTrusted(trust, address); hop++) {
    const next = plainAddress(forwarded[hop])
    // An entry that is no address stops the walk at the proxy that forwarded it: it cannot name
    // a client of its own choosing, so it cannot lift a limit either.
    if (!next) return address
    address = next
  }
  return address
}

const isTrusted = (trust: ProxyTrust, address: string) =>
  !!address && trust.proxies.check(address, isIPv4(address) ? 'ipv4' : 'ipv6')

/** The addresses a forwarded header lists, the nearest hop first (right to left), at most MAX_HOPS. */
function forwardedAddresses(value: string | string[] | undefined, header: string): string[] {
  const text = Array.isArray(value) ? value.join(',') : value ?? ''
  const entries: string[] = []
  let end = text.length
  while (end > 0 && entries.length < MAX_HOPS) {
    const start = text.lastIndexOf(',', end - 1)
    entries.push(text.slice(start + 1, end))
    end = start < 0 ? 0 : start
  }
  return header === 'forwarded' ? entries.map(forOf) : entries
}

/** The `for=` node of one element of a Forwarded header (RFC 7239), '' when it has none. */
function forOf(element: string): string {
  for (const pair of element.split(';')) {
    const [name, value] = pair.split('=', 2)
    if (name.trim().toLowerCase() === 'for' && value !== undefined) return value
  }
  return ''
}

/**
 * An address as a header or socket writes it, plain: quotes, brackets and a port taken off, an
 * IPv4 address mapped into IPv6 as the IPv4 address. '' when it is no address.
 */
function plainAddress(text: string): string {
  let address = text.trim().replace(/^"(.*)"$/, '$1')
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(address)
  if (bracketed) address = bracketed[1]
  else if (/^\d+\.\d+\.\d+\.\d+:\d{1,5}$/.test(address)) address = address.slice(0, address.lastIndexOf(':'))
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) address = mapped[1]
  return isIPv4(address) || isIPv6(address) ? address : ''
}

/** An address as a limit counts it (see clientOf); 'unknown' when there is none. */
function aggregated(address: string): string {
  if (isIPv4(address)) return address
  if (!isIPv6(address)) return 'unknown'
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
