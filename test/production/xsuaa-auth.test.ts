import { execFile } from 'node:child_process'
import { generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { onPostgres } from '../setup/postgres.ts'
import { startServer, stopAndWait, type RunningServer } from '../support/server.ts'
import { selfSignedCertificate } from '../support/tls-certificate.ts'

/**
 * Self-hosted on Cloud Foundry: the production authentication (package.json, profile
 * [production], requires.auth) with an XSUAA binding in VCAP_SERVICES. The identity provider is
 * the test's own: an RSA key signs XSUAA-shaped JWTs, and an HTTPS endpoint on 127.0.0.1 (the
 * binding's uaadomain) serves its public half as the JWKS, which @sap/xssec fetches to verify
 * them; the binding's verificationkey is that public half too. The rest of the configuration is
 * the test profile's (SQLite file or the run's PostgreSQL database, embedded devnets), since the
 * production profile's database and upstreams are not at hand here.
 */

const root = join(__dirname, '..', '..')
const XSAPPNAME = 'chain-access-gateway!t7'
const CLIENT_ID = 'sb-chain-access-gateway!t7'
const ZONE = 'b2d1c5e4-0000-4000-8000-00000000c0de'
const KID = 'chain-access-test-key'
/** A zone whose keys the identity provider fails to serve. */
const UNREACHABLE_ZONE = 'b2d1c5e4-0000-4000-8000-0000000dead0'

const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 })
const strangerKey = generateKeyPairSync('rsa', { modulusLength: 2048 })

let identityProvider: Server
let uaadomain: string
const jwksRequests: string[] = []
let folder: string
let env: NodeJS.ProcessEnv
let server: RunningServer

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'cag-xsuaa-'))
  const tls = selfSignedCertificate()
  writeFileSync(join(folder, 'identity-provider.pem'), tls.cert)
  identityProvider = createServer(tls, (req, res) => {
    jwksRequests.push(req.url ?? '')
    if (req.url?.includes(UNREACHABLE_ZONE)) {
      res.statusCode = 503
      return res.end()
    }
    const jwk = { ...signingKey.publicKey.export({ format: 'jwk' }), kid: KID, alg: 'RS256', use: 'sig' }
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify(req.url?.startsWith('/token_keys') ? { keys: [jwk] } : {}))
  })
  await new Promise<void>(resolve => identityProvider.listen(0, '127.0.0.1', resolve))
  uaadomain = `127.0.0.1:${(identityProvider.address() as AddressInfo).port}`

  const productionAuth = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).cds.requires['[production]'].auth
  env = {
    ...process.env, PORT: '0', CDS_TYPESCRIPT: 'true', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON',
    GATEWAY_ENABLED: 'false',
    CDS_CONFIG: JSON.stringify({ requires: { auth: productionAuth } }),
    VCAP_SERVICES: JSON.stringify({ xsuaa: [xsuaaBinding()] }),
    NODE_EXTRA_CA_CERTS: join(folder, 'identity-provider.pem'),
  }
  if (!onPostgres()) env.CDS_REQUIRES_DB_CREDENTIALS_URL = join(folder, 'db.sqlite')
  server = await startServer(join(root, 'node_modules', '.bin', 'cds-serve'), [], { cwd: root, env })
}, 120_000)

afterAll(async () => {
  if (server) await stopAndWait(server)
  await new Promise(resolve => identityProvider?.close(resolve))
  rmSync(folder, { recursive: true, force: true })
}, 30_000)

/** As Cloud Foundry binds an XSUAA instance of plan application (`cf env`), with local endpoints. */
function xsuaaBinding() {
  return {
    label: 'xsuaa', name: 'chain-access-auth', plan: 'application', tags: ['xsuaa'],
    credentials: {
      xsappname: XSAPPNAME, clientid: CLIENT_ID, clientsecret: 'not-used-here', identityzone: 'tenant', tenantid: ZONE, zoneid: ZONE,
      uaadomain, url: `https://tenant.${uaadomain}`, tenantmode: 'dedicated',
      verificationkey: signingKey.publicKey.export({ type: 'spki', format: 'pem' }),
    },
  }
}

interface TokenOptions {
  scopes?: string[]
  key?: KeyObject
  kid?: string
  expiresIn?: number
  clientId?: string
  zone?: string
}

/** A user token as XSUAA issues it (authorization code flow), signed with RS256. */
function userToken({ scopes = [], key = signingKey.privateKey, kid = KID, expiresIn = 600, clientId = CLIENT_ID, zone = ZONE }: TokenOptions = {}): string {
  const now = Math.floor(Date.now() / 1000)
  const appScopes = scopes.map(scope => `${clientId.replace(/^sb-/, '')}.${scope}`)
  const header = { alg: 'RS256', jku: `https://tenant.${uaadomain}/token_keys`, kid, typ: 'JWT' }
  const payload = {
    jti: randomUUID(), ext_attr: { enhancer: 'XSUAA', subaccountid: ZONE, zdn: 'tenant' },
    sub: 'user-1', scope: ['openid', ...appScopes], client_id: clientId, cid: clientId, azp: clientId,
    grant_type: 'authorization_code', user_id: 'user-1', origin: 'sap.default',
    user_name: 'operator@example.com', email: 'operator@example.com', given_name: 'Oper', family_name: 'Ator',
    auth_time: now, rev_sig: 'a1b2c3', iat: now - 5, exp: now + expiresIn,
    iss: `https://tenant.${uaadomain}/oauth/token`, zid: zone,
    aud: [...new Set(['openid', clientId, ...appScopes.map(scope => scope.slice(0, scope.lastIndexOf('.')))])],
  }
  const signingInput = `${base64url(header)}.${base64url(payload)}`
  return `${signingInput}.${sign('RSA-SHA256', Buffer.from(signingInput), key).toString('base64url')}`
}

const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')

interface Answer {
  status: number
  headers: Headers
  body: any
}

async function call(method: 'GET' | 'POST', path: string, headers: Record<string, string> = {}, body?: object): Promise<Answer> {
  const response = await fetch(server.url + path, {
    method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
  })
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined }
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const READ = '/odata/v4/analytics/MetricBuckets?$top=1'
const ADMIN_ONLY = '/odata/v4/analytics/pauseFollower'

describe('refused with 401 and a code, never a 500', () => {
  it.each<[string, Record<string, string>]>([
    ['no credentials', {}],
    ['a token that is no JWT', bearer('not-a-jwt')],
    ['basic credentials of a mocked user', { authorization: 'Basic ' + Buffer.from('alice:').toString('base64') }],
    ['a token signed by another key under the same key id', bearer(userToken({ key: strangerKey.privateKey, scopes: ['admin'] }))],
    ['a token signed by a key the identity provider does not publish', bearer(userToken({ key: strangerKey.privateKey, kid: 'other-key', scopes: ['admin'] }))],
    ['an expired token', bearer(userToken({ expiresIn: -60, scopes: ['admin'] }))],
    ['a token issued to another application', bearer(userToken({ clientId: 'sb-other-app!t9', scopes: ['admin'] }))],
  ])('%s', async (_, headers) => {
    for (const [method, path] of [['GET', READ], ['POST', ADMIN_ONLY]] as const) {
      const answer = await call(method, path, headers, method === 'POST' ? { chain: 'chain-b' } : undefined)
      expect(answer.body?.error?.code).toBe('UNAUTHORIZED')
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer /)
      expect(answer.status).toBe(401)
    }
  })
})

test('the keys are fetched from the bound identity provider, for the token\'s zone', () => {
  expect(jwksRequests).toContain(`/token_keys?zid=${ZONE}`)
})

test('when the identity provider does not serve the keys, the call is answered 503 with a code', async () => {
  const answer = await call('GET', READ, bearer(userToken({ zone: UNREACHABLE_ZONE, scopes: ['admin'] })))
  expect(jwksRequests).toContain(`/token_keys?zid=${UNREACHABLE_ZONE}`)
  expect(answer.body.error.code).toBe('IDENTITY_PROVIDER_UNAVAILABLE')
  expect(answer.status).toBe(503)
})

test('a valid token with the admin scope holds the admin role: an operator function works', async () => {
  const admin = bearer(userToken({ scopes: ['admin'] }))
  const paused = await call('POST', ADMIN_ONLY, admin, { chain: 'chain-b' })
  expect(paused.body).toMatchObject({ chain: 'chain-b', paused: true })
  expect(paused.status).toBe(200)
  const resumed = await call('POST', '/odata/v4/analytics/resumeFollower', admin, { chain: 'chain-b' })
  expect(resumed.body).toMatchObject({ chain: 'chain-b', paused: false })
})

test('a valid token without the admin scope reads, but is refused the operator function (403)', async () => {
  const user = bearer(userToken())
  const read = await call('GET', READ, user)
  expect(read.body.value).toEqual(expect.any(Array))
  expect(read.status).toBe(200)
  const refused = await call('POST', ADMIN_ONLY, user, { chain: 'chain-b' })
  expect(refused.body.error.code).toBe('FORBIDDEN')
  expect(refused.status).toBe(403)
})

test('a product grant in x-agent-token still reaches its product, and no further; revoked, it is refused', async () => {
  const gateway = (...args: string[]) => promisify(execFile)('npm', ['run', '-s', 'gateway', '--', 'grants', ...args], { cwd: root, env })
  const { stdout } = await gateway('issue', '--product', 'chain-a')
  const token = /\b(cga_\S+)/.exec(stdout)![1]
  const blocks = await call('GET', '/odata/v4/chaina-odata/Blocks?$top=1', { 'x-agent-token': token })
  expect(blocks.body.value).toHaveLength(1)
  expect(blocks.status).toBe(200)
  const admin = await call('POST', ADMIN_ONLY, { 'x-agent-token': token }, { chain: 'chain-b' })
  expect(admin.status).toBe(403)
  await gateway('revoke', /^id (\S+)/m.exec(stdout)![1])
  const revoked = await call('GET', '/odata/v4/chaina-odata/Blocks?$top=1', { 'x-agent-token': token })
  expect(revoked.body.error.code).toBe('GRANT_INVALID')
  expect(revoked.status).toBe(401)
}, 60_000)

test('nothing was taken for an unexpected error', () => {
  expect(server.output()).not.toMatch(/unexpected error|INTERNAL_ERROR/)
})
