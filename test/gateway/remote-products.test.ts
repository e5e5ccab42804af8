import cds from '@sap/cds'
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { RemoteGrants } from '#cds-models/gateway'
import { startAppServer, startStandaloneChainB, waitFor, type StandaloneChainB } from '../chainb/support.ts'
import { balanceOf, issueTestKey, settled } from '../support/gateway.ts'
import { streamedUpload } from '../support/raw-http.ts'
import { remoteProductsInUse } from '../../srv/gateway/remote-products.ts'
import { stopAndWait, type RunningServer } from '../support/server.ts'

/**
 * Chain A and chain B served by a remote instance (CHAIN_A_REMOTE_URL, CHAIN_B_REMOTE_URL): a second
 * process of this application, self-hosted with grants, as the remote; this file's server as the
 * hosted gateway in front of it, with both chains turned off here (no upstream of its own), as a
 * deployment in front of remote products runs. Between the two sits a switch, so the remote can
 * also fail, hang or drop the connection.
 */

const OPERATOR = `Basic ${Buffer.from('alice:').toString('base64')}`
type Mode = 'through' | 'fail' | 'hang' | 'drop'
let mode: Mode = 'through'
let remoteUrl = ''
const seenByRemote: { url: string; headers: Record<string, unknown> }[] = []

const remoteSwitch: Server = createServer((req, res) => {
  if (mode === 'fail') return res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"code":"BOOM","message":"internal"}}')
  if (mode === 'hang') return
  if (mode === 'drop') return req.socket.destroy()
  seenByRemote.push({ url: req.url!, headers: req.headers })
  const upstream = request(remoteUrl + req.url, { method: req.method, headers: req.headers }, answer => {
    res.writeHead(answer.statusCode!, answer.headers)
    answer.pipe(res)
  })
  upstream.on('error', () => res.destroy())
  req.pipe(upstream)
})

let devnet: StandaloneChainB
let remote: RunningServer
// Before cds.test's own beforeAll: the gateway reads its remotes as it starts.
beforeAll(async () => {
  await new Promise<void>(resolve => remoteSwitch.listen(0, '127.0.0.1', resolve))
  devnet = await startStandaloneChainB()
  // The remote keeps its own database: an in-memory SQLite of its own, whichever database this run has.
  // Both chains on there (they are off here).
  remote = await startAppServer(devnet, { CDS_ENV: '', CDS_REQUIRES_DB_CREDENTIALS_DATABASE: undefined, CHAIN_A_ENABLED: undefined, CHAIN_B_ENABLED: undefined })
  remoteUrl = remote.url.replace('localhost', '127.0.0.1')
  const switchUrl = `http://127.0.0.1:${(remoteSwitch.address() as AddressInfo).port}`
  Object.assign(process.env, { CHAIN_B_REMOTE_URL: switchUrl, CHAIN_B_REMOTE_AUTHORIZATION: OPERATOR, CHAIN_A_REMOTE_URL: switchUrl, CHAIN_A_REMOTE_AUTHORIZATION: OPERATOR })
}, 120_000)

process.env.GATEWAY_ENABLED = 'true'
process.env.CHAIN_A_ENABLED = 'false'
process.env.CHAIN_B_ENABLED = 'false'
process.env.GATEWAY_TIMEOUT_MS = '4000'
process.env.GATEWAY_RATE_PER_SECOND = '100000'
process.env.GATEWAY_BURST = '100000'
const app: { url: string } = cds.test(__dirname + '/../..') as any

afterAll(async () => {
  for (const name of ['GATEWAY_ENABLED', 'CHAIN_A_ENABLED', 'CHAIN_B_ENABLED', 'GATEWAY_TIMEOUT_MS', 'GATEWAY_RATE_PER_SECOND', 'GATEWAY_BURST', 'CHAIN_B_REMOTE_URL', 'CHAIN_B_REMOTE_AUTHORIZATION', 'CHAIN_A_REMOTE_URL', 'CHAIN_A_REMOTE_AUTHORIZATION']) delete process.env[name]
  remoteSwitch.close()
  if (remote) await stopAndWait(remote)
  await devnet?.stop()
})

beforeEach(() => {
  mode = 'through'
})

const call = async (key: string, method: 'GET' | 'POST', path: string, body?: object) => {
  const response = await fetch(app.url + path, {
    method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body && JSON.stringify(body),
  })
  return { status: response.status, data: await response.json(), charged: Number(response.headers.get('x-access-units-charged')), left: response.headers.get('x-access-units-left') }
}

/** The remote's operator service, as its operator. */
const atRemote = async (method: 'GET' | 'POST', path: string, body?: object, headers: Record<string, string> = { authorization: OPERATOR }) => {
  const response = await fetch(remoteUrl + path, { method, headers: { ...headers, 'content-type': 'application/json' }, body: body && JSON.stringify(body) })
  return { status: response.status, data: await response.json() }
}
const remoteGrantsOf = async (keyId: string) => (await atRemote('GET', `/odata/v4/operator/Grants?$filter=subject eq 'hosted:${keyId}'&$orderby=createdAt`)).data.value as { ID: string; status: string; product: string; subject: string }[]
const heldGrants = (keyId: string) => cds.tx(() => SELECT.from(RemoteGrants).where({ apiKey_ID: keyId }))

async function confirmedThrough(key: string, jobId: string) {
  return waitFor(`job ${jobId} confirmed`, async () => {
    const job = (await call(key, 'POST', '/api/v1/chainb/getJobStatus', { jobId })).data
    if (job.status === 'submitted') await devnet.produce(1)
    return ['confirmed', 'failed'].includes(job.status) && job
  }, 30_000)
}

test('a chain-B call through the hosted gateway is served by the remote, with a grant held there for the key; charged here', async () => {
  const key = await issueTestKey({ units: 1000 })
  const read = await call(key.key, 'GET', '/odata/v4/chainb/Jobs?$count=true')
  expect(read).toMatchObject({ status: 200, charged: 1, left: '999' })
  expect(read.data['@odata.count']).toBe(0)

  const grants = await remoteGrantsOf(key.id)
  expect(grants).toEqual([expect.objectContaining({ product: 'chain-b', status: 'active', subject: `hosted:${key.id}` })])
  expect(await heldGrants(key.id)).toEqual([expect.objectContaining({ product: 'chain-b', remoteGrantId: grants[0].ID, sealedToken: expect.stringMatching(/^v1\./) })])
  // The remote saw the grant's token, never the gateway key.
  const last = seenByRemote.at(-1)!
  expect(last.headers['x-agent-token']).toMatch(/^cgb_/)
  expect(JSON.stringify(last.headers)).not.toContain(key.key)
  expect(last.headers.authorization).toBeUndefined()
})

test('the quick start\'s anchor through the hosted gateway, and the same calls directly at the remote with a grant token', async () => {
  const key = await issueTestKey({ units: 1000 })
  const sha256 = cds.utils.uuid().replace(/-/g, '').repeat(2)
  const anchored = await call(key.key, 'POST', '/odata/v4/chainb/anchorDocument', { sha256, contentType: 'application/pdf', size: 10 })
  expect(anchored).toMatchObject({ status: 200, data: { status: 'queued', jobId: expect.any(String), documentId: expect.any(String) } })
  expect(anchored.charged).toBeGreaterThan(0)
  const job = await confirmedThrough(key.key, anchored.data.jobId)
  expect(job).toMatchObject({ kind: 'anchorDocument', status: 'confirmed' })
  const verified = await call(key.key, 'GET', `/odata/v4/chainb/verifyDocument(documentId=${anchored.data.documentId},providedSha256='${sha256}')`)
  expect(verified).toMatchObject({ status: 200, data: { verified: true } })

  // Another key's grant at the remote is another owner: the job is not its to read.
  const other = await issueTestKey({ units: 100 })
  const foreign = await call(other.key, 'POST', '/api/v1/chainb/getJobStatus', { jobId: anchored.data.jobId })
  expect(foreign).toMatchObject({ status: 404, charged: 0, data: { error: { code: 'JOB_NOT_FOUND' } } })

  // Self-hosted at the remote with a grant token of its own: the same calls, unchanged.
  const issued = await atRemote('POST', '/odata/v4/operator/issueGrant', { product: 'chain-b', label: 'direct' })
  expect(issued).toMatchObject({ status: 200, data: { token: expect.stringMatching(/^cgb_/) } })
  const direct = { 'x-agent-token': issued.data.token }
  const own = await atRemote('POST', '/odata/v4/chainb/anchorDocument', { sha256: sha256.split('').reverse().join(''), contentType: 'application/pdf', size: 10 }, direct)
  expect(own).toMatchObject({ status: 200, data: { status: 'queued' } })
  expect((await atRemote('POST', '/api/v1/chainb/getJobStatus', { jobId: anchored.data.jobId }, direct)).status).toBe(404)
})

test('a replay the remote recognises (the same idempotency key and body) answers the same job, refunded', async () => {
  const key = await issueTestKey({ units: 1000 })
  const body = { sha256: cds.utils.uuid().replace(/-/g, '').repeat(2), idempotencyKey: 'remote-1' }
  const first = await call(key.key, 'POST', '/odata/v4/chainb/anchorDocument', body)
  expect(first.charged).toBeGreaterThan(0)
  const again = await call(key.key, 'POST', '/odata/v4/chainb/anchorDocument', body)
  expect(again).toMatchObject({ status: 200, charged: 0, data: { jobId: first.data.jobId } })
  await settled(key.id)
  expect(await balanceOf(key.id)).toBe(1000 - first.charged)
})

test('revoking the hosted key revokes its grant at the remote at once', async () => {
  const key = await issueTestKey({ units: 1000 })
  expect((await call(key.key, 'GET', '/odata/v4/chainb/Jobs')).status).toBe(200)
  const [grant] = await remoteGrantsOf(key.id)
  expect(grant.status).toBe('active')
  expect((await call(key.key, 'POST', '/me/revoke')).status).toBe(200)
  await waitFor('the remote grant revoked', async () => (await remoteGrantsOf(key.id))[0].status === 'revoked', 5000)
  await waitFor('the held grant gone', async () => (await heldGrants(key.id)).length === 0, 5000)
})

test('rotating the key: its grant at the remote is revoked, the next call holds a new one for the same subject, and the key still owns its jobs', async () => {
  const key = await issueTestKey({ units: 1000 })
  const anchored = await call(key.key, 'POST', '/odata/v4/chainb/anchorDocument', { sha256: cds.utils.uuid().replace(/-/g, '').repeat(2) })
  expect(anchored.status).toBe(200)
  const rotated = await call(key.key, 'POST', '/me/rotate')
  expect(rotated.status).toBe(200)
  const newSecret = rotated.data.key as string
  await waitFor('the old remote grant revoked', async () => (await remoteGrantsOf(key.id))[0].status === 'revoked', 5000)
  const job = await call(newSecret, 'POST', '/api/v1/chainb/getJobStatus', { jobId: anchored.data.jobId })
  expect(job).toMatchObject({ status: 200, data: { jobId: anchored.data.jobId } })
  const grants = await remoteGrantsOf(key.id)
  expect(grants.map(grant => grant.status)).toEqual(['revoked', 'active'])
})

test('a key revoked where no remote was told (the command line, another process): the background check revokes its remote grant', async () => {
  const key = await issueTestKey({ units: 1000 })
  expect((await call(key.key, 'GET', '/odata/v4/chainb/Jobs')).status).toBe(200)
  const { ApiKeys } = cds.entities('gateway')
  await cds.tx(() => UPDATE(ApiKeys).set({ status: 'revoked', revokedAt: new Date().toISOString() }).where({ ID: key.id }))
  // And one rotated after its grant was issued.
  const rotated = await issueTestKey({ units: 1000 })
  expect((await call(rotated.key, 'GET', '/odata/v4/chainb/Jobs')).status).toBe(200)
  await cds.tx(() => UPDATE(ApiKeys).set({ rotatedAt: new Date(Date.now() + 1000).toISOString() }).where({ ID: rotated.id }))
  const untouched = await issueTestKey({ units: 1000 })
  expect((await call(untouched.key, 'GET', '/odata/v4/chainb/Jobs')).status).toBe(200)

  await remoteProductsInUse()!.revokeEndedGrants()
  expect((await remoteGrantsOf(key.id)).map(grant => grant.status)).toEqual(['revoked'])
  expect((await remoteGrantsOf(rotated.id)).map(grant => grant.status)).toEqual(['revoked'])
  expect((await remoteGrantsOf(untouched.id)).map(grant => grant.status)).toEqual(['active'])
  expect(await heldGrants(key.id)).toEqual([])
  expect(await heldGrants(untouched.id)).toHaveLength(1)
})

test('a grant revoked at the remote by its operator: the call is sent again with a new grant, charged once', async () => {
  const key = await issueTestKey({ units: 1000 })
  expect((await call(key.key, 'GET', '/odata/v4/chainb/Jobs')).charged).toBe(1)
  const [grant] = await remoteGrantsOf(key.id)
  expect((await atRemote('POST', `/odata/v4/operator/Grants(${grant.ID})/revoke`, { reason: 'test' })).status).toBe(200)
  const again = await call(key.key, 'GET', '/odata/v4/chainb/Jobs')
  expect(again).toMatchObject({ status: 200, charged: 1, left: '998' })
  await settled(key.id)
  expect(await balanceOf(key.id)).toBe(998)
  expect((await remoteGrantsOf(key.id)).map(g => g.status)).toEqual(['revoked', 'active'])
})

test('a remote product\'s documents are answered here (the same model), its free verify lane by the remote, without a key, charged nothing', async () => {
  const before = seenByRemote.length
  const metadata = await fetch(app.url + '/api/v1/chainb/$metadata')
  expect(metadata.status).toBe(200)
  expect(await metadata.text()).toContain('anchorDocument')
  expect(seenByRemote.length).toBe(before)
  const verify = await fetch(app.url + `/api/v1/verify/verifyAttestation(attestationId='${'ab'.repeat(32)}')`)
  expect(verify.status).toBeLessThan(500)
  expect(verify.headers.get('x-access-units-charged')).toBe('0')
  expect(seenByRemote.slice(before).map(seen => seen.url)).toEqual([expect.stringMatching(/^\/odata\/v4\/chainb-verify\/verifyAttestation/)])
  expect(seenByRemote.at(-1)!.headers['x-agent-token']).toBeUndefined()
})

test('chain A remote too: a read is the remote chain\'s, with a chain-A grant held there for the key', async () => {
  const key = await issueTestKey({ units: 1000 })
  const tip = '/odata/v4/chaina-odata/Blocks?$orderby=height%20desc&$top=1&$select=height,hash'
  const through = await call(key.key, 'GET', tip)
  expect(through).toMatchObject({ status: 200, charged: 1 })
  const direct = await atRemote('GET', tip)
  expect(through.data.value).toEqual(direct.data.value)
  expect(await remoteGrantsOf(key.id)).toEqual([expect.objectContaining({ product: 'chain-a', status: 'active', subject: `hosted:${key.id}` })])
  expect(seenByRemote.at(-1)!.headers['x-agent-token']).toMatch(/^cga_/)
})

test('a body streamed without a length past 1 MiB: 413 BODY_TOO_LARGE before the rest is read, uncharged', async () => {
  const key = await issueTestKey({ units: 1000 })
  const streamed = await streamedUpload(`${app.url}/odata/v4/chainb/anchorDocument`, { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' }, 4)
  expect(streamed).toEqual({ status: 413, code: 'BODY_TOO_LARGE', charged: '0' })
})

describe('a remote that fails: answered with a code, refunded', () => {
  test.each([
    ['fail', 502, 'REMOTE_PRODUCT_ERROR'],
    ['drop', 503, 'REMOTE_PRODUCT_UNAVAILABLE'],
    ['hang', 504, 'REMOTE_PRODUCT_TIMEOUT'],
  ] as const)('%s: %d %s', async (failure, status, code) => {
    const key = await issueTestKey({ units: 1000 })
    expect((await call(key.key, 'GET', '/odata/v4/chainb/Jobs')).status).toBe(200)
    mode = failure
    const answer = await call(key.key, 'POST', '/odata/v4/chainb/anchorDocument', { sha256: cds.utils.uuid().replace(/-/g, '').repeat(2) })
    expect(answer).toMatchObject({ status, charged: 0, data: { error: { code } } })
    expect(answer.data.error.message).not.toMatch(/at .*\.ts/)
    mode = 'through'
    await settled(key.id)
    expect(await balanceOf(key.id)).toBe(999)
  }, 30_000)
})

test('a held grant sealed under another secret is revoked at the remote and replaced', async () => {
  const key = await issueTestKey({ units: 1000 })
  expect((await call(key.key, 'GET', '/odata/v4/chainb/Jobs')).status).toBe(200)
  await cds.tx(() => UPDATE(RemoteGrants).set({ sealedToken: 'v1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }).where({ apiKey_ID: key.id }))
  // As a restarted instance finds it: nothing held in memory.
  ;(remoteProductsInUse() as unknown as { held: Map<string, unknown> }).held.clear()
  expect(await call(key.key, 'GET', '/odata/v4/chainb/Jobs')).toMatchObject({ status: 200, charged: 1 })
  expect((await remoteGrantsOf(key.id)).map(grant => grant.status)).toEqual(['revoked', 'active'])
  expect(await heldGrants(key.id)).toHaveLength(1)
})
