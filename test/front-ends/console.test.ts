import cds from '@sap/cds'
import { bearer, issueTestKey } from '../support/gateway.ts'

/**
 * The operator console behind the hosted gateway: its page and files are served to anyone, free,
 * with the content security policy that allows no inline script; every data call it makes goes
 * to the operator service, which answers only the operator's login (401 with a login challenge
 * without one, 403 for a user without the role or for an API key).
 */
process.env.GATEWAY_ENABLED = 'true'
const { GET, POST, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true
afterAll(() => {
  delete process.env.GATEWAY_ENABLED
})

const alice = { auth: { username: 'alice', password: '' } }
const bob = { auth: { username: 'bob', password: '' } }

test('the page is served at /console, free and without a login, with a content security policy that allows no inline script', async () => {
  const page = await GET('/console')
  expect(page.data).toContain('data-name="cag.console"')
  expect(page.status).toBe(200)
  expect(page.headers['x-access-units-charged']).toBe('0')
  expect(page.headers['content-security-policy']).toMatch(/script-src 'self';/)
  expect(page.headers['content-security-policy']).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline/)
  expect(page.data.match(/<script(?![^>]*\bsrc=)[^>]*>/g)).toBeNull()
})

test('its files under /console: the descriptor names the operator service; a missing file is 404, a POST 405', async () => {
  const manifest = await GET('/console/manifest.json')
  expect(manifest.data['sap.app'].dataSources.operator.uri).toBe('/odata/v4/operator/')
  expect(manifest.headers['content-security-policy']).toMatch(/script-src 'self';/)
  const preload = await GET('/console/preload.js')
  expect(preload.data).toContain('sap.ui.require.preload(')
  expect(preload.data).toContain('"sap/ui/model/odata/v4/ODataModel.js"')
  expect((await GET('/console/nothing.js')).status).toBe(404)
  expect((await POST('/console/manifest.json', {})).status).toBe(405)
})

describe.each([
  ['GET', '/odata/v4/operator/$metadata'],
  ['GET', '/odata/v4/operator/Keys?$count=true&$top=25'],
  ['GET', '/odata/v4/operator/AuditLog'],
  ['POST', '/odata/v4/operator/issueKey'],
  ['POST', "/odata/v4/operator/Prices(routeClass='analytics',IsActiveEntity=true)/OperatorService.draftEdit"],
])('the console\'s data call %s %s', (method, path) => {
  const call = (init: object = {}) => method === 'GET' ? GET(path, init) : POST(path, { plan: 'standard', PreserveChanges: true }, init)

  test('without a login: 401 with the login challenge', async () => {
    const { status, headers } = await call()
    expect(headers['www-authenticate']).toMatch(/^Basic/)
    expect(status).toBe(401)
  })

  test('as a user without the operator role, or with an API key: 403', async () => {
    expect((await call(bob)).status).toBe(403)
    const key = await issueTestKey({ units: 10 })
    const { data, status } = await call(bearer(key.key))
    expect(data.error.code).toBe('OPERATOR_ONLY')
    expect(status).toBe(403)
  })
})

test('as the operator: the data the console lists', async () => {
  const { data, status } = await GET('/odata/v4/operator/Prices?$select=routeClass,units', alice)
  expect(data.value.map((price: { routeClass: string }) => price.routeClass)).toContain('analytics')
  expect(status).toBe(200)
})
