import cds from '@sap/cds'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { runningDevnet } from '../support/chain-a.ts'
import { freshClientAddress, sendFrom, type Reply, type SendFrom } from '../support/gateway.ts'
import { freshWallet, signIn } from '../support/lane-gateways.ts'
import { paymentFor, PurchaseServers } from '../support/purchases.ts'
import { stopAndWait, type RunningServer } from '../support/server.ts'
import type { AccessLine } from '../../srv/lib/access-log.ts'

/**
 * No secret reaches a log: a gateway process (its stdout and stderr captured) is driven through
 * what the README's quick start and the key lanes do: an operator's key sent as `Authorization` and
 * as `x-agent-token`, a key without units, made-up keys until the address is refused, a product
 * grant token, a basic-auth password, a wallet sign-in and its session, a voucher redeemed, an x402
 * purchase with its PAYMENT-SIGNATURE, and the operator's service issuing and rotating a key, creating
 * vouchers and subscribing a webhook with its secret. Once with the log levels at their defaults, once with the
 * gateway and OData loggers at debug in CAP's JSON format (production's, which writes the request
 * headers with each line), and self-hosted with a grant token in `x-agent-token`. The output holds
 * none of the secrets, and one access line for each request.
 */
process.env.DEVNET_WALLETS = '6'
cds.test(__dirname + '/../..')

const root = join(__dirname, '..', '..')
const LANE_SECRET = 'the lane secret of the log test, long enough to pass'
const VOUCHER_PEPPER = 'the voucher pepper of the log test, long enough to pass'
const PASSWORD = 'hunter2-the-password-of-the-log-test'
const AUTH_FAILURES = 3
let servers: PurchaseServers

beforeAll(() => {
  servers = new PurchaseServers({
    GATEWAY_LANE_SECRET: LANE_SECRET, GATEWAY_VOUCHER_PEPPER: VOUCHER_PEPPER, GATEWAY_AUTH_FAILURES: String(AUTH_FAILURES),
    GATEWAY_WALLET_FREE_MIN_LOVELACE: '0',
  })
})

afterAll(async () => {
  await servers.stopAll()
  delete process.env.DEVNET_WALLETS
}, 60_000)

/** What a command of the operator's command line prints, on the servers' database. */
async function operator(...args: string[]): Promise<string> {
  await servers.ready()
  const { stdout } = await promisify(execFile)('npm', ['run', '-s', 'gateway', '--', ...args], { cwd: root, env: servers.env })
  return stdout.trim()
}

/** Every request sent, with its answer's request id and status, and every secret it carried or received. */
class Session {
  readonly sent: { id: string; status: number; what: string }[] = []
  readonly secrets = new Set<string>([LANE_SECRET, VOUCHER_PEPPER, PASSWORD])
  readonly server: RunningServer
  /** The servers share a database, where failed attempts are counted: each session sends from an address of its own. */
  readonly from = freshClientAddress()
  constructor(server: RunningServer) {
    this.server = server
  }

  async send(what: string, method: 'GET' | 'POST', path: string, options: Partial<SendFrom> = {}): Promise<Reply> {
    const reply = await sendFrom(this.server.url, method, path, { from: this.from, ...options })
    this.sent.push({ id: String(reply.headers['x-request-id']), status: reply.status, what })
    return reply
  }

  secret(value: string | undefined) {
    if (!value) throw new Error('expected a secret')
    this.secrets.add(value)
    return value
  }
}

/** The quick start's calls and the key lanes, against one hosted gateway process. */
async function driveHosted(session: Session, wallet: string) {
  const key = session.secret(await servers.issueKey(1000))
  const blocks = '/odata/v4/chaina-odata/Blocks?$orderby=height%20desc&$top=1&$select=height,hash'
  expect((await session.send('a metered call with Authorization', 'GET', blocks, { token: key })).status).toBe(200)
  expect((await session.send('a metered call with x-agent-token', 'GET', blocks, { headers: { 'x-agent-token': key } })).status).toBe(200)
  expect((await session.send('the ledger', 'GET', '/me/ledger?limit=20', { headers: { 'x-agent-token': key } })).status).toBe(200)

  const empty = session.secret(await operator('keys', 'issue', '--units', '0', '--quiet'))
  expect((await session.send('a key without units', 'GET', blocks, { token: empty })).status).toBe(402)

  const grant = session.secret(/\n\s+(cg[ab]_\S+)\n/.exec(await operator('grants', 'issue', '--product', 'chain-a'))?.[1])
  expect((await session.send('a grant token at the hosted gateway', 'GET', blocks, { headers: { 'x-agent-token': grant } })).status).toBe(401)
  const basic = `Basic ${Buffer.from(`alice:${PASSWORD}`).toString('base64')}`
  session.secret(basic.slice('Basic '.length))
  expect((await session.send('a password', 'GET', blocks, { headers: { authorization: basic } })).status).toBe(401)

  const from = freshClientAddress()
  const statuses = []
  for (let i = 0; i <= AUTH_FAILURES; i++) {
    const madeUp = session.secret(`cag_made-up-${i}-${cds.utils.uuid()}`)
    statuses.push((await session.send('a made-up key', 'GET', blocks, { from, token: madeUp })).status)
  }
  expect(statuses).toEqual([...Array(AUTH_FAILURES).fill(401), 429])

  // Wallet sign-in: its first key and a session for key management.
  const signedIn = await signIn(session.server.url, freshClientAddress(), freshWallet())
  expect(signedIn.status).toBe(200)
  session.secret(signedIn.body.key)
  const sessionToken = session.secret(signedIn.body.session.token)
  expect((await session.send('the session', 'GET', '/auth/keys', { token: sessionToken })).status).toBe(200)

  // A voucher: a wrong code first, then the operator's.
  const code = session.secret(await operator('vouchers', 'create', '--units', '2000', '--count', '1', '--quiet'))
  // One character changed: the check character always tells (a code with the last four replaced could pass it by chance).
  const mistyped = (code[0] === '0' ? '1' : '0') + code.slice(1)
  const wrong = await session.send('a wrong voucher code', 'POST', '/vouchers/redeem', { body: { code: mistyped } })
  expect([wrong.status, wrong.body.error?.code]).toEqual([400, 'VOUCHER_MALFORMED'])
  const redeemed = await session.send('a voucher code', 'POST', '/vouchers/redeem', { body: { code } })
  expect(redeemed.status).toBe(200)
  session.secret(redeemed.body.key)

  // x402: the quote, the payment (pending until a block deep), the key.
  const payment = await paymentFor(session.server, wallet)
  session.secret(payment['PAYMENT-SIGNATURE'])
  expect((await session.send('a payment', 'POST', '/keys', { headers: payment })).status).toBe(402)
  runningDevnet().produceBlock()
  runningDevnet().produceBlock()
  const bought = await session.send('a payment a block deep', 'POST', '/keys', { headers: payment })
  expect(bought.status).toBe(200)
  session.secret(bought.body.key)
  expect((await session.send('the bought key', 'GET', '/me', { token: bought.body.key })).status).toBe(200)

  // The operator's service: a key issued and rotated, a voucher batch, a webhook subscription with its secret.
  const operatorLogin = { authorization: `Basic ${Buffer.from('alice:').toString('base64')}` }
  const operatorCall = (what: string, path: string, body: object) => session.send(what, 'POST', `/odata/v4/operator/${path}`, { headers: operatorLogin, body })
  const issued = await operatorCall('an operator issues a key', 'issueKey', { plan: 'standard', units: '10' })
  expect(issued.status).toBe(200)
  session.secret(issued.body.key)
  const rotated = await operatorCall('an operator rotates it', `Keys(${issued.body.ID})/OperatorService.rotate`, { reason: 'log test' })
  expect(rotated.status).toBe(200)
  session.secret(rotated.body.key)
  const batch = await operatorCall('an operator creates vouchers', 'createVouchers', { units: '5', count: 2 })
  expect(batch.status).toBe(200)
  for (const voucher of batch.body.vouchers) session.secret(voucher.code)
  const hook = await operatorCall('an operator subscribes a webhook', 'WebhookSubscriptions', { url: 'http://127.0.0.1:9/hooks', events: 'key.exhausted' })
  expect(hook.status).toBe(201)
  session.secret(hook.body.secret)
}

/** The server's output, once it has stopped (everything written). */
async function outputOf(server: RunningServer): Promise<string> {
  await stopAndWait(server)
  return server.output()
}

function expectNoSecret(output: string, session: Session) {
  const found = [...session.secrets].filter(secret => output.includes(secret))
  expect(found).toEqual([])
  // Nothing that looks like a key, a grant token or a session token either.
  expect(output.match(/\b(cag|cga|cgb|cgs|whsec)_[A-Za-z0-9_-]{40,}/g) ?? []).toEqual([])
  expect(output.match(/\b[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){4}\b/g) ?? []).toEqual([])
  expect(output.match(/eyJ4NDAyVmVyc2lvbiI6[A-Za-z0-9+/=]*/g) ?? []).toEqual([])
}

/** The access lines in the output; each request sent has exactly one, with its status. */
function expectOneAccessLineEach(output: string, session: Session): AccessLine[] {
  const lines: AccessLine[] = output.split('\n').filter(line => line.startsWith('{"type":"access"')).map(line => JSON.parse(line))
  for (const request of session.sent) {
    const mine = lines.filter(line => line.correlation_id === request.id)
    expect({ what: request.what, statuses: mine.map(line => line.status) }).toEqual({ what: request.what, statuses: [request.status] })
  }
  return lines
}

const REFUSALS_AND_SUCCESS = [200, 401, 402, 429]

test('with the log levels at their defaults, the output holds no secret and one access line per request', async () => {
  const server = await servers.serve()
  const session = new Session(server)
  await driveHosted(session, 'wallet-1')
  const output = await outputOf(server)
  expectNoSecret(output, session)
  const statuses = expectOneAccessLineEach(output, session).map(line => line.status)
  for (const status of REFUSALS_AND_SUCCESS) expect(statuses).toContain(status)
}, 240_000)

test('with the gateway and OData loggers at debug, in the JSON format of production, the output holds no secret', async () => {
  const server = await servers.serve({ CDS_LOG_FORMAT: 'json', CDS_LOG_LEVELS_GATEWAY: 'debug', CDS_LOG_LEVELS_ODATA: 'debug' })
  const session = new Session(server)
  await driveHosted(session, 'wallet-2')
  const output = await outputOf(server)
  // CAP's lines carry the request headers, masked.
  expect(output).toMatch(/"x_agent_token":"\*\*\*"/)
  expectNoSecret(output, session)
  const statuses = expectOneAccessLineEach(output, session).map(line => line.status)
  for (const status of REFUSALS_AND_SUCCESS) expect(statuses).toContain(status)
}, 240_000)

test('self-hosted, a grant token in x-agent-token is never written, with the OData logger at debug in the JSON format', async () => {
  const grant = /\n\s+(cga_\S+)\n/.exec(await operator('grants', 'issue', '--product', 'chain-a'))![1]
  const server = await servers.serve({ GATEWAY_ENABLED: 'false', CDS_LOG_FORMAT: 'json', CDS_LOG_LEVELS_ODATA: 'debug' })
  const session = new Session(server)
  session.secret(grant)
  const blocks = '/odata/v4/chaina-odata/Blocks?$top=1&$select=height'
  expect((await session.send('a grant token', 'GET', blocks, { headers: { 'x-agent-token': grant } })).status).toBe(200)
  expect((await session.send('a revoked or made-up grant token', 'GET', blocks, { headers: { 'x-agent-token': session.secret(`${grant.slice(0, -6)}abcdef`) } })).status).toBe(401)
  const basic = Buffer.from(`alice:${PASSWORD}`).toString('base64')
  session.secret(basic)
  expect((await session.send('a password', 'GET', blocks, { headers: { authorization: `Basic ${basic}` } })).status).toBeLessThan(500)
  const output = await outputOf(server)
  expect(output).toMatch(/"x_agent_token":"\*\*\*"/)
  expectNoSecret(output, session)
  expect(expectOneAccessLineEach(output, session).find(line => line.status === 200)).toMatchObject({ route_family: 'chaina-odata', units_charged: null, key_id: expect.any(String) })
}, 240_000)
