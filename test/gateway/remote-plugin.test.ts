import cds from '@sap/cds'
import { RemotePluginGrants, RemoteRecords } from '#cds-models/gateway'
import { ChainBPluginStandIn, PLUGIN_AUTHORIZATION } from '../support/chain-b-plugin.ts'
import { balanceOf, issueTestKey, settled } from '../support/gateway.ts'
import { waitFor } from '../chainb/support.ts'
import { remoteProductsInUse } from '../../srv/gateway/remote-products.ts'
import { TokenSeal } from '../../srv/gateway/token-seal.ts'

/**
 * Chain B served by the chain-B plugin's own API (CHAIN_B_REMOTE_KIND=plugin), against a stand-in
 * that speaks the plugin's grant and job shapes (test/support/chain-b-plugin.ts): this file's server
 * is the hosted gateway, with chain B turned off here.
 */

const plugin = new ChainBPluginStandIn()
beforeAll(async () => {
  await plugin.start()
  Object.assign(process.env, {
    CHAIN_B_REMOTE_KIND: 'plugin', CHAIN_B_REMOTE_URL: plugin.url, CHAIN_B_REMOTE_AUTHORIZATION: PLUGIN_AUTHORIZATION,
    CHAIN_B_REMOTE_SESSION_ID: plugin.sessionId, CHAIN_B_REMOTE_CONTRACT_ADDRESS: plugin.contractAddress, CHAIN_B_REMOTE_ARTIFACT_REF: 'attestation-vault',
  })
})

const SETTINGS = {
  GATEWAY_ENABLED: 'true', CHAIN_A_ENABLED: 'false', CHAIN_B_ENABLED: 'false', GATEWAY_TIMEOUT_MS: '4000', GATEWAY_RATE_PER_SECOND: '100000', GATEWAY_BURST: '100000',
}
Object.assign(process.env, SETTINGS)
const app: { url: string } = cds.test(__dirname + '/../..') as any

afterAll(async () => {
  for (const name of [...Object.keys(SETTINGS), 'CHAIN_B_REMOTE_KIND', 'CHAIN_B_REMOTE_URL', 'CHAIN_B_REMOTE_AUTHORIZATION', 'CHAIN_B_REMOTE_SESSION_ID', 'CHAIN_B_REMOTE_CONTRACT_ADDRESS', 'CHAIN_B_REMOTE_ARTIFACT_REF']) delete process.env[name]
  await plugin.stop()
})

beforeEach(() => {
  plugin.failWith = undefined
  plugin.failJobsWith = undefined
  plugin.hang = false
  plugin.grantsPerHour = 10
})

interface Called { status: number; data: any; charged: number; headers: Headers }
const call = async (key: string | undefined, method: 'GET' | 'POST', path: string, body?: object | string): Promise<Called> => {
  const response = await fetch(app.url + path, {
    method, headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), 'content-type': 'application/json' }, body: typeof body === 'string' ? body : body && JSON.stringify(body),
  })
  const text = await response.text()
  return { status: response.status, data: text && JSON.parse(text), charged: Number(response.headers.get('x-access-units-charged')), headers: response.headers }
}
const hex64 = () => cds.utils.uuid().replace(/-/g, '').repeat(2)
const lastSeen = (operation: string) => plugin.seen.filter(seen => seen.url.includes(`/${operation}`)).at(-1)!

async function confirmed(key: string, jobId: string) {
  return waitFor(`job ${jobId} confirmed`, async () => {
    const job = (await call(key, 'POST', '/api/v1/chainb/getJobStatus', { jobId })).data
    return ['confirmed', 'failed'].includes(job.status) && job
  }, 10_000)
}

test('an anchor through the gateway: sent with the one grant held there, the vault named here, polled and verified in this API\'s words', async () => {
  const key = await issueTestKey({ units: 1000 })
  const sha256 = hex64()
  const anchored = await call(key.key, 'POST', '/odata/v4/chainb/anchorDocument', { sha256, storageRef: 'ipfs://doc', contractAddress: 'ff'.repeat(32), sessionId: cds.utils.uuid() })
  expect(anchored).toMatchObject({ status: 200, data: { jobId: expect.any(String), status: 'queued', documentId: expect.any(String) } })
  expect(anchored.charged).toBeGreaterThan(0)

  // The plugin saw its own grant's token, the configured vault, artefact and (injected by it) session; never the key.
  const seen = lastSeen('anchorDocument')
  expect(seen.headers['x-agent-token']).toMatch(/^ngat_[0-9a-f]{64}$/)
  expect(seen.headers.authorization).toBeUndefined()
  expect(JSON.stringify(seen)).not.toContain(key.key)
  expect(seen.body).toEqual({ sha256, storageRef: 'ipfs://doc', contractAddress: plugin.contractAddress, compiledArtifactRef: 'attestation-vault', sessionId: plugin.sessionId })
  expect(await cds.tx(() => SELECT.from(RemotePluginGrants))).toEqual([expect.objectContaining({ product: 'chain-b', sealedToken: expect.stringMatching(/^v1\./) })])

  const job = await confirmed(key.key, anchored.data.jobId)
  expect(job).toMatchObject({ jobId: anchored.data.jobId, kind: 'anchorDocument', status: 'confirmed', txHash: expect.stringMatching(/^[0-9a-f]{64}$/) })
  expect(job).not.toHaveProperty('leaseOwner')
  const verified = await call(key.key, 'GET', `/odata/v4/chainb/verifyDocument(documentId=${anchored.data.documentId},providedSha256='${sha256}')`)
  expect(verified).toMatchObject({ status: 200, data: { verified: true, originalSha256: sha256 } })
  expect(decodeURIComponent(lastSeen('verifyDocument').url)).toContain(`contractAddress='${plugin.contractAddress}'`)

  const one = await call(key.key, 'GET', `/odata/v4/chainb/Documents(${anchored.data.documentId})`)
  expect(one).toMatchObject({ status: 200, data: { ID: anchored.data.documentId, sha256 } })
  const all = await call(key.key, 'GET', '/odata/v4/chainb/Documents')
  expect(all.data.value.map((row: { ID: string }) => row.ID)).toEqual([anchored.data.documentId])
})

test('every key uses the same plugin user there, so the gateway keeps each key\'s records apart', async () => {
  const owner = await issueTestKey({ units: 1000 })
  const anchored = await call(owner.key, 'POST', '/odata/v4/chainb/anchorDocument', { sha256: hex64() })
  expect(anchored.status).toBe(200)
  const other = await issueTestKey({ units: 1000 })
  const { jobId, documentId } = anchored.data
  expect(await call(other.key, 'POST', '/odata/v4/chainb/getJobStatus', { jobId })).toMatchObject({ status: 404, charged: 0, data: { error: { code: 'JOB_NOT_FOUND' } } })
  expect(await call(other.key, 'GET', `/odata/v4/chainb/Documents(${documentId})`)).toMatchObject({ status: 404, charged: 0 })
  expect(await call(other.key, 'GET', `/odata/v4/chainb/verifyDocument(documentId=${documentId},providedSha256='${hex64()}')`)).toMatchObject({ status: 404, charged: 0 })
  expect(await call(other.key, 'GET', '/odata/v4/chainb/Documents')).toMatchObject({ status: 200, data: { value: [] } })
  expect(await call(other.key, 'GET', '/odata/v4/chainb/Documents/$count')).toMatchObject({ status: 200, data: 0 })
  // A filter cannot close the filter of the key's own records and widen the read, nor an option reach past it.
  expect((await call(owner.key, 'GET', '/odata/v4/chainb/Documents')).data.value).toHaveLength(1)
  const seenBefore = plugin.seen.length
  for (const query of [`$filter=${encodeURIComponent('ID ne null) or (true')}`, `$filter=${encodeURIComponent("ID eq 'a)'")} or (true`, '$apply=groupby((userId))', '$search=x', '$expand=*', '$top=1&$top=2']) {
    expect({ query, ...(await call(owner.key, 'GET', `/odata/v4/chainb/Documents?${query}`)) }).toMatchObject({ query, status: 400, charged: 0 })
  }
  expect(await call(owner.key, 'GET', `/odata/v4/chainb/Documents(${documentId})?$expand=*`)).toMatchObject({ status: 400, charged: 0, data: { error: { code: 'INVALID_QUERY_OPTION' } } })
  expect(plugin.seen.length).toBe(seenBefore)
  // What passes keeps the caller's filter inside the key's.
  await call(owner.key, 'GET', `/odata/v4/chainb/Documents?$filter=${encodeURIComponent("sha256 eq 'a(b'")}&$top=5`)
  expect(decodeURIComponent(plugin.seen.at(-1)!.url)).toContain(`$filter=(ID in (${documentId})) and (sha256 eq 'a(b')`)
  expect(await cds.tx(() => SELECT.from(RemoteRecords).where({ remoteId: { in: [jobId, documentId] } }))).toEqual([
    expect.objectContaining({ apiKey_ID: owner.id }), expect.objectContaining({ apiKey_ID: owner.id }),
  ])
})

test('one grant for all keys, issued once however many calls need it at once (the plugin issues ten an hour)', async () => {
  const keys = await Promise.all(Array.from({ length: 6 }, () => issueTestKey({ units: 100 })))
  expect((await call(keys[0].key, 'GET', '/odata/v4/chainb/Blocks')).status).toBe(200)
  // The grant the gateway holds is revoked there: every call at once finds it gone, and one new grant serves them all.
  for (const grant of plugin.activeGrants()) plugin.revoke(grant.grantId)
  const issuedBefore = plugin.seen.filter(seen => seen.url.endsWith('/createAgentGrant')).length
  const answers = await Promise.all(keys.map(key => call(key.key, 'GET', '/odata/v4/chainb/Blocks')))
  expect(answers.map(answer => [answer.status, answer.charged])).toEqual(keys.map(() => [200, 1]))
  expect(plugin.seen.filter(seen => seen.url.endsWith('/createAgentGrant')).length).toBe(issuedBefore + 1)
  expect(plugin.activeGrants()).toHaveLength(1)
  expect(plugin.activeGrants()[0]).toMatchObject({ sessionId: plugin.sessionId, allowedActions: expect.arrayContaining(['anchorDocument', 'grantDisclosure', 'issueFieldPredicateAttestation']) })
  expect(await cds.tx(() => SELECT.from(RemotePluginGrants))).toEqual([expect.objectContaining({ remoteGrantId: plugin.activeGrants()[0].grantId })])
})

test('idempotency keys are the key\'s own: a replay answers the same job, refunded; another key\'s same idempotency key is another job', async () => {
  const key = await issueTestKey({ units: 1000 })
  const body = { sha256: hex64(), idempotencyKey: 'order-7' }
  const first = await call(key.key, 'POST', '/odata/v4/chainb/anchorDocument', body)
  expect(first.charged).toBeGreaterThan(0)
  const sent = lastSeen('anchorDocument').body!.idempotencyKey as string
  expect(sent).toMatch(/^hk_[0-9a-f]{64}$/)
  const again = await call(key.key, 'POST', '/odata/v4/chainb/anchorDocument', body)
  expect(again).toMatchObject({ status: 200, charged: 0, data: { jobId: first.data.jobId } })
  expect(again.headers.get('x-idempotent-replay')).toBe('true')
  await settled(key.id)
  expect(await balanceOf(key.id)).toBe(1000 - first.charged)

  const other = await issueTestKey({ units: 1000 })
  const theirs = await call(other.key, 'POST', '/odata/v4/chainb/anchorDocument', body)
  expect(theirs).toMatchObject({ status: 200, data: { status: 'queued' } })
  expect(theirs.data.jobId).not.toBe(first.data.jobId)
  expect(lastSeen('anchorDocument').body!.idempotencyKey).not.toBe(sent)
  // The same key with another body under the same idempotency key: the plugin's refusal, refunded.
  const reused = await call(key.key, 'POST', '/odata/v4/chainb/anchorDocument', { ...body, sha256: hex64() })
  expect(reused).toMatchObject({ status: 409, charged: 0, data: { error: { code: 'IDEMPOTENCY_KEY_REUSED' } } })
})

test('the gateway checks the key\'s allowed operations itself: the plugin cannot tell keys apart', async () => {
  const key = await issueTestKey({ units: 1000 })
  const { ProductGrants } = cds.entities('gateway')
  await cds.tx(() => UPDATE(ProductGrants).set({ allowedOperations: JSON.stringify(['ChainBService:anchorDocument']) }).where({ apiKey_ID: key.id, product: 'chain-b' }))
  const seenBefore = plugin.seen.length
  expect(await call(key.key, 'POST', '/odata/v4/chainb/grantDisclosure', { payloadHash: hex64(), grantee: hex64(), level: 1 })).toMatchObject({ status: 403, charged: 0, data: { error: { code: 'GRANT_FORBIDDEN' } } })
  expect(await call(key.key, 'GET', '/odata/v4/chainb/Documents')).toMatchObject({ status: 403, charged: 0 })
  expect(plugin.seen.length).toBe(seenBefore)
  expect((await call(key.key, 'POST', '/odata/v4/chainb/anchorDocument', { sha256: hex64() })).status).toBe(200)
})

test('a proof and a disclosure: their ids are the key\'s, in this API\'s words; the free verify lane is forwarded without a key', async () => {
  const key = await issueTestKey({ units: 1000 })
  const proof = await call(key.key, 'POST', '/odata/v4/chainb/issueFieldPredicateAttestation', {
    payloadHash: hex64(), fieldKey: 'temperature', value: '21', fieldSalt: hex64(), siblingsJson: '[]', dirsJson: '[]', predicate: 'lessOrEqual', threshold: '30',
  })
  expect(proof).toMatchObject({ status: 200, data: { jobId: expect.any(String), status: 'queued', attestationId: expect.any(String) } })
  expect(proof.data).not.toHaveProperty('predicateAttestationId')
  await confirmed(key.key, proof.data.jobId)
  const verdict = await call(undefined, 'GET', `/odata/v4/chainb-verify/verifyAttestation(attestationId=${proof.data.attestationId})`)
  expect(verdict).toMatchObject({ status: 200, charged: 0, data: { verified: true, predicate: 'lessOrEqual' } })
  expect(decodeURIComponent(lastSeen('verifyPredicateAttestation').url)).toContain(`predicateAttestationId=${proof.data.attestationId}`)
  expect(await call(key.key, 'GET', '/odata/v4/chainb/Attestations')).toMatchObject({ status: 200, data: { value: [expect.objectContaining({ ID: proof.data.attestationId })] } })

  const disclosure = await call(key.key, 'POST', '/odata/v4/chainb/grantDisclosure', { payloadHash: hex64(), grantee: hex64(), level: 1 })
  expect(disclosure).toMatchObject({ status: 200, data: { status: 'queued', disclosureGrantId: expect.any(String) } })
  expect(await call(key.key, 'GET', '/odata/v4/chainb/DisclosureGrants')).toMatchObject({ status: 200, data: { value: [expect.objectContaining({ ID: disclosure.data.disclosureGrantId })] } })
  expect((await call(key.key, 'GET', '/odata/v4/chainb-indexer/getHealth()')).data).toMatchObject({ status: 'healthy' })
})

test('a grant the plugin no longer knows is replaced and the call sent once more, charged once; a plugin that issues none answers 503, refunded', async () => {
  const key = await issueTestKey({ units: 1000 })
  expect((await call(key.key, 'GET', '/odata/v4/chainb/Blocks')).charged).toBe(1)
  const [held] = plugin.activeGrants()
  plugin.revoke(held.grantId)
  const again = await call(key.key, 'GET', '/odata/v4/chainb/Blocks')
  expect(again).toMatchObject({ status: 200, charged: 1 })
  const [replacement] = plugin.activeGrants()
  expect(replacement.grantId).not.toBe(held.grantId)
  await settled(key.id)
  expect(await balanceOf(key.id)).toBe(998)

  plugin.grantsPerHour = 0
  plugin.revoke(replacement.grantId)
  const limited = await call(key.key, 'GET', '/odata/v4/chainb/Blocks')
  expect(limited).toMatchObject({ status: 503, charged: 0, data: { error: { code: 'REMOTE_GRANT_LIMITED' } } })
  expect(limited.headers.get('retry-after')).toBe('1200')
  plugin.grantsPerHour = 10
  expect((await call(key.key, 'GET', '/odata/v4/chainb/Blocks')).status).toBe(200)
  await settled(key.id)
  expect(await balanceOf(key.id)).toBe(997)
})

test('what the plugin does not serve is 501, a failing plugin 502, bad input 400: each refunded', async () => {
  const key = await issueTestKey({ units: 1000 })
  expect(await call(key.key, 'GET', '/odata/v4/chainb/Jobs')).toMatchObject({ status: 501, charged: 0, data: { error: { code: 'NOT_SERVED_BY_REMOTE' } } })
  expect(await call(key.key, 'POST', '/odata/v4/chainb/sponsorAttestation', { circuitId: 'x', proofJson: '{}', publicSignalsJson: '[]', payloadHash: hex64() })).toMatchObject({ status: 501, charged: 0 })
  expect(await call(undefined, 'GET', "/odata/v4/chainb-verify/verifyDocument(sha256='ab')")).toMatchObject({ status: 501, charged: 0 })
  for (const body of ['[1,2]', 'null', '"text"', '{"sha256":']) {
    expect(await call(key.key, 'POST', '/odata/v4/chainb/anchorDocument', body)).toMatchObject({ status: 400, charged: 0 })
  }
  expect(await call(key.key, 'POST', '/odata/v4/chainb/anchorDocument', { sha256: hex64(), idempotencyKey: { toString: 'x' } })).toMatchObject({ status: 400, charged: 0, data: { error: { code: 'INVALID_PARAMETER' } } })
  for (const target of ["verifyDocument(documentId='%ZZ',providedSha256='a')", "verifyDocument(documentId=x,documentId=y,providedSha256='a')", 'verifyDocument()', "Documents('%E0%A4%A')", "Documents('" + 'x'.repeat(300) + "')"]) {
    const answer = await call(key.key, 'GET', `/odata/v4/chainb/${target}`)
    expect(answer.status).toBeGreaterThanOrEqual(400)
    expect(answer.status).toBeLessThan(500)
    expect(answer.charged).toBe(0)
  }
  plugin.failWith = 500
  expect(await call(key.key, 'POST', '/odata/v4/chainb/anchorDocument', { sha256: hex64() })).toMatchObject({ status: 502, charged: 0, data: { error: { code: 'REMOTE_PRODUCT_ERROR' } } })
  plugin.failWith = undefined
  await settled(key.id)
  expect(await balanceOf(key.id)).toBe(1000)
})

test('a stored grant that cannot be opened (sealed under another secret, or for another session) is revoked and replaced', async () => {
  const key = await issueTestKey({ units: 1000 })
  expect((await call(key.key, 'GET', '/odata/v4/chainb/Blocks')).status).toBe(200)
  const [before] = plugin.activeGrants()
  await cds.tx(() => UPDATE(RemotePluginGrants).set({ sealedToken: new TokenSeal('another secret').seal(`plugin|chain-b|${plugin.sessionId}`, 'ngat_x') }))
  // As a restarted instance finds it: nothing held in memory.
  ;(remoteProductsInUse() as unknown as { plugins: Record<string, { held?: unknown }> }).plugins['chain-b'].held = undefined
  expect(await call(key.key, 'GET', '/odata/v4/chainb/Blocks')).toMatchObject({ status: 200, charged: 1 })
  const [after] = plugin.activeGrants()
  expect(after.grantId).not.toBe(before.grantId)
  expect(plugin.grants.size).toBeGreaterThan(1)
  expect([...plugin.grants.values()].find(grant => grant.grantId === before.grantId)!.revoked).toBe(true)
  expect(await cds.tx(() => SELECT.from(RemotePluginGrants))).toEqual([expect.objectContaining({ remoteGrantId: after.grantId })])
})

test('a plugin that hangs is 504, one that is down 503 with Retry-After: each refunded', async () => {
  const key = await issueTestKey({ units: 1000 })
  expect((await call(key.key, 'GET', '/odata/v4/chainb/Blocks')).status).toBe(200)
  plugin.hang = true
  expect(await call(key.key, 'POST', '/odata/v4/chainb/anchorDocument', { sha256: hex64() })).toMatchObject({ status: 504, charged: 0, data: { error: { code: 'REMOTE_PRODUCT_TIMEOUT' } } })
  plugin.hang = false
  const port = Number(new URL(plugin.url).port)
  await plugin.stop()
  try {
    const down = await call(key.key, 'GET', '/odata/v4/chainb/Blocks')
    expect(down).toMatchObject({ status: 503, charged: 0, data: { error: { code: 'REMOTE_PRODUCT_UNAVAILABLE' } } })
    expect(down.headers.get('retry-after')).toBe('5')
  } finally {
    await plugin.start(port)
  }
  expect((await call(key.key, 'GET', '/odata/v4/chainb/Blocks')).status).toBe(200)
  await settled(key.id)
  expect(await balanceOf(key.id)).toBe(998)
})

test('a job the plugin fails is refunded when the key sees it failed, once; one that failed for the caller\'s own reason is not', async () => {
  const key = await issueTestKey({ units: 1000 })
  plugin.failJobsWith = 'CHAIN_EXECUTION_FAILED'
  const anchored = await call(key.key, 'POST', '/odata/v4/chainb/anchorDocument', { sha256: hex64() })
  expect(anchored).toMatchObject({ status: 200, data: { status: 'queued' } })
  const polls: Called[] = []
  for (let i = 0; i < 3; i++) polls.push(await call(key.key, 'POST', '/odata/v4/chainb/getJobStatus', { jobId: anchored.data.jobId }))
  expect(polls.map(poll => poll.data.status)).toEqual(['running', 'failed', 'failed'])
  expect(polls[1].data).toMatchObject({ errorCode: 'CHAIN_EXECUTION_FAILED' })
  await settled(key.id)
  // The write refunded once; the polls are charged as any.
  expect(await balanceOf(key.id)).toBe(1000 - polls.reduce((sum, poll) => sum + poll.charged, 0))

  plugin.failJobsWith = 'ContractTypeError'
  const own = await call(key.key, 'POST', '/odata/v4/chainb/anchorDocument', { sha256: hex64() })
  const ownPolls = [await call(key.key, 'POST', '/odata/v4/chainb/getJobStatus', { jobId: own.data.jobId }), await call(key.key, 'POST', '/odata/v4/chainb/getJobStatus', { jobId: own.data.jobId })]
  expect(ownPolls[1].data).toMatchObject({ status: 'failed', errorCode: 'ContractTypeError' })
  await settled(key.id)
  expect(await balanceOf(key.id)).toBe(1000 - [...polls, own, ...ownPolls].reduce((sum, poll) => sum + poll.charged, 0))
})
