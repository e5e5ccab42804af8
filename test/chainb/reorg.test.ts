import cds from '@sap/cds'
import { chainBStatus, produceUntil, reorg } from '../support/chain-b.ts'
import { as, CHAINB, ledger, produce, randomHash, waitFor } from './support.ts'

// Reorgs under a job on the devnet the application embedded: finality 3 deep, so a block the job
// was seen in can still be replaced before the job is confirmed.
process.env.CHAIN_B_FINALITY_DEPTH = '3'
process.env.CHAIN_B_JOBS_POLL_MS = '20'
process.env.CHAIN_B_JOBS_RESUBMIT_AFTER_BLOCKS = '2'
const { POST, GET, defaults } = cds.test(__dirname + '/../..')
defaults.validateStatus = () => true
afterAll(() => {
  delete process.env.CHAIN_B_FINALITY_DEPTH
  delete process.env.CHAIN_B_JOBS_RESUBMIT_AFTER_BLOCKS
})

const jobOf = async (jobId: string) => (await POST(`${CHAINB}/getJobStatus`, { jobId }, as('bob'))).data

/** Anchors a new document and waits until its job has been seen included (not yet final) at the tip. */
async function anchoredAtTip() {
  const sha256 = randomHash()
  const accepted = (await POST(`${CHAINB}/anchorDocument`, { sha256 }, as('bob'))).data
  await waitFor('submitted', async () => (await jobOf(accepted.jobId)).status === 'submitted')
  const [block] = produce(1)
  const seen = await waitFor('seen in its block', async () => { const job = await jobOf(accepted.jobId); return job.blockHeight === block.height && job })
  expect(seen).toMatchObject({ status: 'submitted', blockHeight: block.height })
  return { ...accepted, sha256, txHash: seen.txHash as string, block }
}

const finished = (jobId: string) => produceUntil(async () => {
  const job = await jobOf(jobId)
  return ['confirmed', 'failed'].includes(job.status) && job
}, { intervalMs: 60, maxBlocks: 20 })

test('a reorg sends the transaction back to the mempool: the job ends confirmed in its new block, at the new height', async () => {
  const [empty] = produce(1)
  expect(empty.transactions.filter(tx => tx.body.type === 'regular')).toEqual([])
  const anchored = await anchoredAtTip()
  expect(anchored.block.height).toBe(empty.height + 1)
  // Replace the empty block and the job's: the transaction goes into the first new block, one lower.
  const { removed } = reorg(empty.height - 1)
  expect(removed).toBe(2)
  const job = await finished(anchored.jobId)
  expect(job).toMatchObject({ status: 'confirmed', attempt: 1, txHash: anchored.txHash, blockHeight: empty.height, errorCode: null })
  const [record] = ledger().transactionsByHash(anchored.txHash)
  expect(record.height).toBe(empty.height)
  expect(ledger().transactionsByHash(anchored.txHash)).toHaveLength(1)
  expect(ledger().blockAt(anchored.block.height)!.hash).not.toBe(anchored.block.hash)
  expect(JSON.parse(job.result)).toMatchObject({ anchoredTxHash: anchored.txHash, anchorHeight: empty.height })
  const document = (await GET(`${CHAINB}/Documents(${anchored.documentId})`, as('bob'))).data
  expect(document).toMatchObject({ status: 'anchored', anchoredTxHash: anchored.txHash, anchorHeight: empty.height })
  expect(Object.values(ledger().vaultState.documents[anchored.sha256])[0]).toMatchObject({ txHash: anchored.txHash })
})

test('a reorg that drops the transaction: the runner finds it gone and submits it again with the same nonce', async () => {
  const anchored = await anchoredAtTip()
  reorg(anchored.block.height - 1, { drop: true })
  expect(ledger().transactionsByHash(anchored.txHash)).toEqual([])
  expect(chainBStatus().mempool).toBe(0)
  const job = await finished(anchored.jobId)
  expect(job).toMatchObject({ status: 'confirmed', attempt: 1, txHash: anchored.txHash, errorCode: null })
  // Gone for resubmitAfterBlocks blocks, then sent again: one transaction, in a later block.
  expect(job.blockHeight).toBeGreaterThan(anchored.block.height)
  expect(ledger().transactionsByHash(anchored.txHash)).toHaveLength(1)
  expect(ledger().transactionsByHash(anchored.txHash)[0].height).toBe(job.blockHeight)
  const verified = (await GET(`${CHAINB}/verifyDocument(documentId=${anchored.documentId},providedSha256='${anchored.sha256}')`, as('bob'))).data
  expect(verified).toMatchObject({ verified: true, anchoredTxHash: anchored.txHash, anchorHeight: job.blockHeight })
})
