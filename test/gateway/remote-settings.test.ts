import { gatewayConfig, gatewayProductionProblems } from '../../srv/gateway/config.ts'
import { TokenSeal } from '../../srv/gateway/token-seal.ts'
import { productionProblems } from '../../srv/lib/production-settings.ts'

/** The remote products' settings, checked at start, and the sealing of the grant tokens held there. */

const SETTINGS = ['CHAIN_A_REMOTE_URL', 'CHAIN_B_REMOTE_URL', 'CHAIN_B_REMOTE_AUTHORIZATION', 'GATEWAY_REMOTE_GRANT_SECRET', 'CHAIN_B_REMOTE_KIND', 'CHAIN_B_REMOTE_SESSION_ID', 'CHAIN_B_REMOTE_CONTRACT_ADDRESS', 'CHAIN_B_REMOTE_ARTIFACT_REF', 'CHAIN_B_REMOTE_SPONSOR_SESSION_ID', 'CDS_REQUIRES_GATEWAY_REMOTES_CHAIN__A_KIND']
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
  expect(gatewayConfig().remotes).toEqual({ 'chain-b': { kind: 'instance', url: 'https://chain-b.example.org', authorization: 'Bearer abc' } })
})

test('a remote chain B of the plugin\'s kind: the session its grant is pinned to and the vault its calls name', () => {
  const sessionId = '6f1c1f7e-3a52-4c43-9a43-6a3c0f1e2b7d'
  const contractAddress = 'ab'.repeat(32)
  Object.assign(process.env, { CHAIN_B_REMOTE_URL: 'https://chain-b.example.org', CHAIN_B_REMOTE_KIND: 'plugin', CHAIN_B_REMOTE_SESSION_ID: sessionId, CHAIN_B_REMOTE_CONTRACT_ADDRESS: contractAddress })
  expect(gatewayConfig().remotes['chain-b']).toEqual({ kind: 'plugin', url: 'https://chain-b.example.org', authorization: undefined, plugin: { sessionId, contractAddress, artifactRef: undefined, sponsorSessionId: undefined } })
  for (const [name, value, message] of [
    ['CHAIN_B_REMOTE_SESSION_ID', '', /CHAIN_B_REMOTE_SESSION_ID is required with CHAIN_B_REMOTE_KIND=plugin/],
    ['CHAIN_B_REMOTE_SESSION_ID', 'session-1', /CHAIN_B_REMOTE_SESSION_ID must be a session id/],
    ['CHAIN_B_REMOTE_CONTRACT_ADDRESS', 'vault', /CHAIN_B_REMOTE_CONTRACT_ADDRESS must be a contract address/],
    ['CHAIN_B_REMOTE_SPONSOR_SESSION_ID', 'x', /CHAIN_B_REMOTE_SPONSOR_SESSION_ID must be a session id/],
    ['CHAIN_B_REMOTE_ARTIFACT_REF', 'a b', /CHAIN_B_REMOTE_ARTIFACT_REF must be an artefact name/],
    ['CHAIN_B_REMOTE_KIND', 'other', /CHAIN_B_REMOTE_KIND must be one of instance, plugin/],
  ] as const) {
    const before = process.env[name]
    process.env[name] = value
    expect(() => gatewayConfig()).toThrow(message)
    if (before === undefined) delete process.env[name]
    else process.env[name] = before
  }
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
