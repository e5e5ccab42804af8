import cds from '@sap/cds'
import { issueGrant } from '../../srv/gateway/accounts.ts'
import { answerOf, connectToolServer, refusalOf, type ServerConfiguration, type ToolSession } from '../support/mcp.ts'

/**
 * The same tool servers against a self-hosted instance (no gateway): CHAIN_ACCESS_URL points at
 * it, and the caller is a mocked user (basic credentials) or a product grant (its token as the key,
 * sent as x-agent-token). Nothing is metered, so answers carry no units.
 */

const app: { url: string } = cds.test(__dirname + '/../..') as any

const sessions: ToolSession[] = []
afterAll(() => Promise.all(sessions.map(session => session.close())))

async function selfHosted(server: 'chain-a' | 'chain-b', env: Record<string, string>) {
  const configuration: ServerConfiguration = { command: 'npx', args: ['--prefix', cds.root, `cag-mcp-${server}`], env: { CHAIN_ACCESS_URL: app.url, ...env } }
  const session = await connectToolServer(configuration)
  sessions.push(session)
  return session
}

test('a mocked user by basic credentials: the answers come without units', async () => {
  const session = await selfHosted('chain-b', { CHAIN_ACCESS_USER: 'alice' })
  const overview = answerOf(await session.call('analytics_overview', { chain: 'both' }))
  expect(overview.chains.map((chain: { chain: string }) => chain.chain)).toEqual(['chain-a', 'chain-b'])
  expect(overview.units).toBeUndefined()
  expect(session.stderr()).toContain(`on stdio: ${app.url}, user alice`)
}, 60_000)

test('an unknown mocked user is refused as an invalid key would be', async () => {
  const session = await selfHosted('chain-a', { CHAIN_ACCESS_USER: 'mallory', CHAIN_ACCESS_PASSWORD: 'guess' })
  expect(refusalOf(await session.call('analytics_overview'))).toMatch(/^The key was refused \(.*\)\. The key in CHAIN_ACCESS_API_KEY/)
}, 60_000)

test('a product grant token as the key goes as x-agent-token, and reaches its product only', async () => {
  const grant = await issueGrant({ product: 'chain-a' })
  const session = await selfHosted('chain-a', { CHAIN_ACCESS_API_KEY: grant.token })
  const blocks = answerOf(await session.call('query_entity', { entity: 'Blocks', orderby: 'height desc', top: 1 }))
  expect(blocks.rows).toHaveLength(1)
  expect(blocks.units).toBeUndefined()
  expect(session.stderr()).toContain(`key cga_`)
  // Analytics has no grant underneath: a product grant is not let in there.
  expect(refusalOf(await session.call('analytics_overview'))).toMatch(/^Not permitted here \(GRANT_FORBIDDEN: /)
}, 60_000)

test('a setting that cannot work stops the server at once, naming the variable', async () => {
  await expect(selfHosted('chain-a', { CHAIN_ACCESS_URL: 'ftp://example' })).rejects.toThrow()
  await expect(selfHosted('chain-b', { CHAIN_ACCESS_TIMEOUT_MS: 'soon' })).rejects.toThrow()
}, 60_000)
