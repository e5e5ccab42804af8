import { gatewayConfig, gatewayProductionProblems } from '../../srv/gateway/config.ts'
import { TokenSeal } from '../../srv/gateway/token-seal.ts'
import { productionProblems } from '../../srv/lib/production-settings.ts'

/** The remote products' settings, checked at start, and the sealing of the grant tokens held there. */

const SETTINGS = ['CHAIN_A_REMOTE_URL', 'CHAIN_B_REMOTE_URL', 'CHAIN_B_REMOTE_AUTHORIZATION', 'GATEWAY_REMOTE_GRANT_SECRET']
afterEach(() => {
  for (const name of SETTINGS) delete process.env[name]
})

test('no remote by default: every product is served here, and no secret is asked for', () => {
  expect(gatewayConfig().remotes).toEqual({})
  expect(gatewayProductionProblems()).toEqual([])
})

test('a remote chain B: its URL (without a trailing slash) and its operator credentials', () => {
  process.env.CHAIN_B_REMOTE_URL = 'https://chain-b.example.org/'
  process.env.CHAIN_B_REMOTE_AUTHORIZATION = 'Bearer abc'
  expect(gatewayConfig().remotes).toEqual({ 'chain-b': { url: 'https://chain-b.example.org', authorization: 'Bearer abc' } })
})

test('a remote URL that is none is named at start', () => {
  process.env.CHAIN_A_REMOTE_URL = 'ftp://chain-a.example.org'
  expect(productionProblems([gatewayProductionProblems])).toEqual([expect.stringMatching(/CHAIN_A_REMOTE_URL/)])
})

test.each([
  [undefined, /^GATEWAY_REMOTE_GRANT_SECRET is not set/],
  ['short', /^GATEWAY_REMOTE_GRANT_SECRET is too weak/],
])('with a remote, the grant secret %s is named at start', (secret, message) => {
  process.env.CHAIN_B_REMOTE_URL = 'https://chain-b.example.org'
  if (secret) process.env.GATEWAY_REMOTE_GRANT_SECRET = secret
  expect(productionProblems([gatewayProductionProblems])).toEqual([expect.stringMatching(message)])
})

test('a strong grant secret passes', () => {
  process.env.CHAIN_B_REMOTE_URL = 'https://chain-b.example.org'
  process.env.GATEWAY_REMOTE_GRANT_SECRET = '8f2c1e9a7b3d4f6e0a1b2c3d4e5f60718293a4b5c6d7e8f9'
  expect(productionProblems([gatewayProductionProblems])).toEqual([])
})

describe('the held grant tokens are sealed', () => {
  const token = 'cgb_0123456789abcdefghijklmnopqrstuvwxyz'

  test('opened with the same secret, for the same key and product only', () => {
    const sealed = new TokenSeal('secret one').seal('key-1|chain-b', token)
    expect(sealed).toMatch(/^v1\./)
    expect(sealed).not.toContain(token)
    expect(new TokenSeal('secret one').open('key-1|chain-b', sealed)).toBe(token)
    expect(new TokenSeal('secret two').open('key-1|chain-b', sealed)).toBeUndefined()
    expect(new TokenSeal('secret one').open('key-2|chain-b', sealed)).toBeUndefined()
    expect(new TokenSeal('secret one').open('key-1|chain-a', sealed)).toBeUndefined()
    expect(new TokenSeal('secret one').open('key-1|chain-b', 'v1.AAAA')).toBeUndefined()
  })
})
