import cds from '@sap/cds'
import { JobRunner } from '../../srv/chainb/jobs/runner.ts'
import { jobSettings } from '../../srv/chainb/jobs/config.ts'
import { as, CHAINB, chainBAdapter, chainDown, grantCaller, ledger, produce, randomHash, waitFor } from './support.ts'

process.env.CHAIN_B_JOBS_POLL_MS = '20'
process.env.CHAIN_B_JOBS_RETRY_MS = '50'
const { POST, GET, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true

const jobOf = async (user: string, jobId: string) => (await POST(`${CHAINB}/getJobStatus`, { jobId }, as(user))).data

async function confirmed(user: string, jobId: string) {
  await waitFor(`job ${jobId} submitted`, async () => (await jobOf(user, jobId)).status === 'submitted')
  produce(1)
  return waitFor(`job ${jobId} confirmed`, async () => {
    const job = await jobOf(user, jobId)
    return ['confirmed', 'failed'].includes(job.status) && job
  })
}

test('an anchor goes queued → submitted → confirmed, and the document verifies against the vault', async () => {
  const sha256 = randomHash()
  const accepted = await POST(`${CHAINB}/anchorDocument`, { sha256, contentType: 'application/pdf', size: 1234, metadata: '{"a":1}' }, as('bob'))
  expect(accepted.data).toMatchObject({ status: 'queued', jobId: expect.any(String), documentId: expect.any(String) })
  expect(accepted.status).toBe(200)

  const job = await confirmed('bob', accepted.data.jobId)
  expect(job).toMatchObject({ kind: 'anchorDocument', status: 'confirmed', attempt: 1, txHash: expect.stringMatching(/^[0-9a-f]{64}$/), errorCode: null })
  expect(JSON.parse(job.result)).toMatchObject({ documentId: accepted.data.documentId, payloadHash: sha256, anchoredTxHash: job.txHash })
  expect(Object.values(ledger().vaultState.documents[sha256])[0]).toMatchObject({ txHash: job.txHash })

  const document = (await GET(`${CHAINB}/Documents(${accepted.data.documentId})`, as('bob'))).data
  expect(document).toMatchObject({ status: 'anchored', anchoredTxHash: job.txHash, anchorHeight: job.blockHeight, payloadHash: sha256 })

  const verified = (await GET(`${CHAINB}/verifyDocument(documentId=${accepted.data.documentId},providedSha256='${sha256}')`, as('bob'))).data
  expect(verified).toMatchObject({ verified: true, anchoredTxHash: job.txHash, anchorHeight: job.blockHeight, originalSha256: sha256 })
  const other = (await GET(`${CHAINB}/verifyDocument(documentId=${accepted.data.documentId},providedSha256='${randomHash()}')`, as('bob'))).data
  expect(other).toMatchObject({ verified: false, originalSha256: sha256 })
})

test('commitment anchoring: prepare, commit, then reveal with the nonce', async () => {
  const sha256 = randomHash()
  const prepared = (await POST(`${CHAINB}/prepareAnchorCommitment`, { sha256, metadata: 'secret terms' }, as('bob'))).data
  expect(prepared).toMatchObject({ commitment: expect.stringMatching(/^[0-9a-f]{64}$/), nonce: expect.stringMatching(/^[0-9a-f]{64}$/) })
  const early = await POST(`${CHAINB}/anchorDocument`, { sha256, metadata: 'secret terms', nonce: prepared.nonce }, as('bob'))
  expect(early.data.error.code).toBe('COMMITMENT_NOT_FOUND')

  const commit = (await POST(`${CHAINB}/commitDocumentAnchor`, { commitment: prepared.commitment }, as('bob'))).data
  expect((await confirmed('bob', commit.jobId)).status).toBe('confirmed')
  expect(ledger().vaultState.commitments[prepared.commitment]).toBeDefined()
  expect(ledger().vaultState.documents[sha256]).toBeUndefined()

  const reveal = (await POST(`${CHAINB}/anchorDocument`, { sha256, metadata: 'secret terms', nonce: prepared.nonce }, as('bob'))).data
  const job = await confirmed('bob', reveal.jobId)
  expect(job).toMatchObject({ kind: 'revealAnchor', status: 'confirmed' })
  expect(Object.values(ledger().vaultState.documents[sha256])[0]).toMatchObject({ metadataHash: prepared.metadataHash })
})

test('agent output: the canonical envelope and its hash, anchored with the attestAgentOutput circuit', async () => {
  const input = { agentId: 'agent-7', inputHash: randomHash().toUpperCase(), outputHash: randomHash(), modelId: 'model-x', producedAt: '2026-01-31T12:00:00Z' }
  const accepted = (await POST(`${CHAINB}/attestAgentOutput`, input, as('bob'))).data
  const envelope = `{"agentId":"agent-7","inputHash":"${input.inputHash.toLowerCase()}","modelId":"model-x","outputHash":"${input.outputHash}","producedAt":"2026-01-31T12:00:00Z","v":1}`
  expect(accepted.envelopeJson).toBe(envelope)
  expect(accepted.payloadHash).toBe(require('node:crypto').createHash('sha256').update(envelope).digest('hex'))
  expect((await confirmed('bob', accepted.jobId)).status).toBe('confirmed')
  expect(Object.values(ledger().vaultState.documents[accepted.payloadHash])[0].envelope).toBe(envelope)
  const rows = (await GET(`${CHAINB}/AgentOutputAttestations?$filter=payloadHash eq '${accepted.payloadHash}'&$expand=document`, as('bob'))).data.value
  expect(rows).toMatchObject([{ agentId: 'agent-7', envelopeJson: envelope, document: { status: 'anchored', kind: 'agent-output' } }])
})

describe('idempotency', () => {
  test('the same key and payload answer the same job (flagged as a replay); another payload 409', async () => {
    const body = { sha256: randomHash(), idempotencyKey: 'idem-1' }
    const first = await POST(`${CHAINB}/anchorDocument`, body, as('bob'))
    expect(first.headers['x-idempotent-replay']).toBeUndefined()
    const again = await POST(`${CHAINB}/anchorDocument`, body, as('bob'))
    expect(again.data).toMatchObject({ jobId: first.data.jobId, documentId: first.data.documentId })
    expect(again.headers['x-idempotent-replay']).toBe('true')
    const other = await POST(`${CHAINB}/anchorDocument`, { ...body, sha256: randomHash() }, as('bob'))
    expect(other.data.error.code).toBe('IDEMPOTENCY_KEY_REUSED')
    expect(other.status).toBe(409)
    // Another owner's key is its own.
    const carol = await POST(`${CHAINB}/anchorDocument`, { sha256: randomHash(), idempotencyKey: 'idem-1' }, (await grantCaller()).config)
    expect(carol.data.jobId).not.toBe(first.data.jobId)
    expect(carol.status).toBe(200)
  })

  test('concurrent identical requests make one job', async () => {
    const body = { sha256: randomHash(), idempotencyKey: 'idem-concurrent' }
    const answers = await Promise.all(Array.from({ length: 8 }, () => POST(`${CHAINB}/anchorDocument`, body, as('bob'))))
    expect(answers.map((a: any) => a.status)).toEqual(Array(8).fill(200))
    expect(new Set(answers.map((a: any) => a.data.jobId)).size).toBe(1)
    expect(answers.filter((a: any) => a.headers['x-idempotent-replay'] === 'true')).toHaveLength(7)
    const { Jobs } = cds.entities('chainb')
    expect(await SELECT.from(Jobs).where({ idempotencyKey: 'idem-concurrent' })).toHaveLength(1)
  })
})

test('a job left running by a process that died is taken over once its lease expired, with the same nonce', async () => {
  const { Jobs, Documents } = cds.entities('chainb')
  const sha256 = randomHash()
  const accepted = (await POST(`${CHAINB}/anchorDocument`, { sha256 }, as('bob'))).data
  await waitFor('submitted', async () => (await jobOf('bob', accepted.jobId)).status === 'submitted')
  // The process that submitted it is gone: its lease ran out before the block came.
  await UPDATE(Jobs, accepted.jobId).set({ leaseOwner: 'a-dead-process', leaseExpiresAt: new Date(Date.now() - 1000).toISOString() })
  const job = await confirmed('bob', accepted.jobId).catch(async () => { produce(1); return waitFor('confirmed', async () => (await jobOf('bob', accepted.jobId)).status === 'confirmed' && jobOf('bob', accepted.jobId)) })
  expect(job).toMatchObject({ status: 'confirmed', attempt: 2 })
  // One transaction: the resubmission answered the first one.
  expect(ledger().transactionsByHash(job.txHash)).toHaveLength(1)
  expect((await SELECT.one.from(Documents, accepted.documentId)).status).toBe('anchored')
})

test('a runner that stops hands back the leases on its jobs: another takes them over at once, not when the lease expires, and says from whom', async () => {
  const { Jobs } = cds.entities('chainb')
  const accepted = (await POST(`${CHAINB}/anchorDocument`, { sha256: randomHash() }, as('bob'))).data
  await waitFor('submitted', async () => (await jobOf('bob', accepted.jobId)).status === 'submitted')
  // Another instance's runner watches it, under a lease far longer than the test.
  await UPDATE(Jobs, accepted.jobId).set({ leaseOwner: 'a-stopping-runner', leaseExpiresAt: new Date(Date.now() + 600_000).toISOString() })
  const log = cds.log('chainb')
  const info = jest.spyOn(log, 'info')
  try {
    await new JobRunner(async () => undefined, jobSettings(), 'a-stopping-runner').stop(true)
    const job = await waitFor('taken over', async () => {
      const row = await jobOf('bob', accepted.jobId)
      return row.attempt === 2 && row
    })
    expect(job.status).not.toBe('failed')
    // The claim is visible to the test's poll a moment before the runner logs it (another turn of its event loop).
    const note = `job ${accepted.jobId} taken over from a-stopping-runner, which handed it back`
    const logged = () => info.mock.calls.map(call => call.join(' '))
    await waitFor('the takeover logged', async () => logged().some(line => line.includes(note))).catch(() => undefined)
    expect(logged()).toContainEqual(expect.stringContaining(note))
  } finally {
    info.mockRestore()
  }
  produce(1)
  expect((await waitFor('confirmed', async () => { produce(1); const row = await jobOf('bob', accepted.jobId); return row.status === 'confirmed' && row })).attempt).toBe(2)
})

test('a queued job in a database left by a stopped process is run by the next', async () => {
  const { Jobs } = cds.entities('chainb')
  const sha256 = randomHash()
  // The devnet's HTTP server stops listening: the adapter's calls are refused.
  const up = await chainDown()
  let accepted: { jobId: string; documentId: string }
  try {
    accepted = (await POST(`${CHAINB}/anchorDocument`, { sha256 }, as('bob'))).data
    // Between its tries (every 50 ms here) the job waits queued; a poll may also find it running a try.
    const waiting = await waitFor('a try', async () => {
      const row = await jobOf('bob', accepted.jobId)
      return row.errorCode === 'CHAIN_B_UNAVAILABLE' && row.status === 'queued' && row
    })
    expect(waiting).toMatchObject({ status: 'queued', attempt: 0, errorCode: 'CHAIN_B_UNAVAILABLE' })
    const verify = await GET(`${CHAINB}/getDocument(payloadHash='${sha256}')`, as('bob'))
    expect(verify.data.error.code).toBe('CHAIN_B_UNAVAILABLE')
    expect(verify.status).toBe(503)
  } finally {
    await up()
  }
  const job = await confirmed('bob', accepted.jobId)
  expect(job).toMatchObject({ status: 'confirmed', attempt: 1, errorCode: null })
  expect(await SELECT.one.from(Jobs, accepted.jobId).columns('leaseOwner')).toMatchObject({ leaseOwner: null })
})

describe('failures', () => {
  test('a document the caller\'s own attester anchored on the vault meanwhile (outside this service): failed ALREADY_ANCHORED, the caller\'s, no refund', async () => {
    const sha256 = randomHash()
    const failures: unknown[] = []
    const listener = (msg: { data: unknown }) => { failures.push(msg.data) }
    cds.services.ChainBService.on('JobFailed', listener)
    const up = await chainDown()
    let accepted: { jobId: string; documentId: string }
    try {
      accepted = (await POST(`${CHAINB}/anchorDocument`, { sha256 }, as('bob'))).data
      // The caller's own attester anchors the same payload first, outside this service (straight into the devnet's ledger).
      const { callDigest, signDigest } = await import('../../srv/chains/chain-b/vault.ts')
      const other = chainBAdapter().attesterKey('user:bob')
      const sponsor = chainBAdapter().sponsorKey()
      const vaultAddress = ledger().vaultAddress
      const call = { circuit: 'attest', args: { payloadHash: sha256, metadataHash: randomHash() } }
      const digest = callDigest(vaultAddress, call, 'outside-nonce-1')
      ledger().submitCall({ contractAddress: vaultAddress, call, nonce: 'outside-nonce-1', attesterKey: other.publicKey, signature: signDigest(other, digest), sponsorKey: sponsor.publicKey, sponsorSignature: signDigest(sponsor, digest) })
      produce(1)
    } finally {
      await up()
    }
    const job = await confirmed('bob', accepted.jobId)
    expect(job).toMatchObject({ status: 'failed', errorCode: 'ALREADY_ANCHORED' })
    expect(failures).toEqual([])
    const { Documents } = cds.entities('chainb')
    expect((await SELECT.one.from(Documents, accepted.documentId)).status).toBe('failed')
  })

  test('an exhausted sponsor fails the job SPONSOR_EXHAUSTED and emits JobFailed with the request id (refund)', async () => {
    const failures: any[] = []
    cds.services.ChainBService.on('JobFailed', (msg: { data: any }) => { failures.push(msg.data) })
    const adapter = chainBAdapter()
    const sponsor = adapter.sponsorKey().publicKey
    // A sponsor with no DUST, and no faucet refill (the minimum balance is 0): the devnet refuses the fee.
    const fresh = (await import('../../srv/chains/chain-b/vault.ts')).vaultKeyFromSeed(Buffer.alloc(32, 11))
    const sponsorKey = jest.spyOn(adapter, 'sponsorKey').mockReturnValue(fresh)
    const minBalance = adapter.options.sponsorMinBalance
    adapter.options.sponsorMinBalance = '0'
    try {
      const accepted = await POST(`${CHAINB}/anchorDocument`, { sha256: randomHash() }, as('bob'))
      const job = await waitFor('failed', async () => { const j = await jobOf('bob', accepted.data.jobId); return j.status === 'failed' && j })
      expect(job.errorCode).toBe('SPONSOR_EXHAUSTED')
      await waitFor('JobFailed', async () => failures.length > 0)
      expect(failures).toEqual([{ jobId: accepted.data.jobId, owner: 'bob', requestId: accepted.headers['x-correlation-id'] ?? expect.any(String), errorCode: 'SPONSOR_EXHAUSTED' }])
      const { Jobs } = cds.entities('chainb')
      expect((await SELECT.one.from(Jobs, accepted.data.jobId)).refunded).toBe(true)
    } finally {
      sponsorKey.mockRestore()
      adapter.options.sponsorMinBalance = minBalance
      expect(sponsor).toBe(adapter.sponsorKey().publicKey)
    }
  })
})
