import cds from '@sap/cds'
import { BuildInputs, TransactionSubmissions, type TransactionSubmission } from '#cds-models/chainatx'
import { TransactionBuilds as BuildsNow } from '#cds-models/ChainATransactionService'
import { chainA } from '../chains/chain-a/index.ts'
import { networkIdOf, parseTxHash } from '../chains/chain-a/identifiers.ts'
import { bodyHashOf, listOf, parseTransaction } from '../chains/chain-a/signing/witnesses.ts'
import { ApiError, badInput, isApiError, notFound } from '../lib/errors.ts'
import { ownedBy, ownerOf } from '../lib/ownership.ts'
import { PENDING_STATES, buildNow, settleBuild } from './builds.ts'
import { BuildStatus, SubmissionStatus } from './states.ts'

/**
 * Submission of signed transactions and their status up to confirmation. Each owner submits a
 * transaction once (a second submission answers 409); a submission belongs to the owner of its
 * build (the caller when there is none), and one owner's submissions never block or change
 * another's. When the ledger rejects it, the rejection is recorded (submission failed, build failed
 * with the ledger's reason) after the request's own changes are rolled back, and the caller gets
 * 400 TX_REJECTED with that reason.
 */

const { SELECT, UPDATE, UPSERT } = cds.ql

/** What runs when the request fails, after its own changes were rolled back (cds-types do not declare `req.on`). */
const onFailure = (req: cds.Request, listener: (error: unknown) => unknown) =>
  (req as unknown as { on(event: 'failed', listener: (error: unknown) => unknown): void }).on('failed', listener)

interface SignedTransaction {
  txHash: string
  bytes: Uint8Array
  spent: string[]
  outputAddresses: string[]
}

export async function submitSigned(srv: cds.Service, req: cds.Request, signedTxCbor: unknown, buildId?: string | null) {
  const signed = readSigned(signedTxCbor, (await chainA()).networkName)
  const build = buildId
    ? await pendingBuild(buildId, signed.txHash)
    : await SELECT.one.from(BuildsNow).columns('ID', 'owner', 'status').where({ txHash: signed.txHash, ...ownedBy() })
  const owner = build?.owner ?? ownerOf()
  const earlier = await refuseSecondSubmission(owner, signed.txHash)

  const submissionId = earlier?.ID ?? cds.utils.uuid()
  const submittedAt = new Date().toISOString()
  onFailure(req, error => recordRejection(error, submissionId, owner, signed, build?.ID ?? undefined, signedTxCbor as string))
  await UPSERT.into(TransactionSubmissions).entries({
    ID: submissionId, owner, build_ID: build?.ID ?? null, txHash: signed.txHash, status: SubmissionStatus.pending, signedTxCbor: signedTxCbor as string, submittedAt,
    errorCode: null, errorMessage: null,
  })
  await (await chainA()).port.submit(signed.bytes)
  await UPDATE.entity(TransactionSubmissions).set({ status: SubmissionStatus.submitted }).where({ ID: submissionId })
  if (build?.ID) await settleBuild(build.ID, BuildStatus.submitted)
  const inputAddresses = build ? (await SELECT.from(BuildInputs).columns('address').where({ build_ID: build.ID })).map(input => input.address!) : []
  await srv.emit('TransactionSubmitted', { txHash: signed.txHash, spent: signed.spent, addresses: [...new Set([...inputAddresses, ...signed.outputAddresses])] })
  return SELECT.one.from(TransactionSubmissions).where({ ID: submissionId })
}

interface TransactionStatus {
  txHash: string
  status: 'unknown' | SubmissionStatus
  confirmations: number
  blockHeight: number | null
  blockHash: string | null
  blockTime: string | null
  submissionId: string | null
  buildId: string | null
  errorMessage: string | null
}

/**
 * Where a transaction stands: on chain (with confirmations), or as the caller submitted it here
 * (another owner's submission does not count), or unknown (404).
 */
export async function transactionStatus(srv: cds.Service, txHashParameter: unknown): Promise<TransactionStatus> {
  const txHash = parseTxHash(txHashParameter, 'txHash')
  const submission = await SELECT.one.from(TransactionSubmissions).where({ txHash, ...ownedBy() })
  const { port } = await chainA()
  const [onChain, tip] = await Promise.all([port.transaction(txHash), port.tip()])
  const status: TransactionStatus = {
    txHash, status: submission?.status ?? 'unknown', confirmations: 0, blockHeight: null, blockHash: null, blockTime: null,
    submissionId: submission?.ID ?? null, buildId: submission?.build_ID ?? null, errorMessage: submission?.errorMessage ?? null,
  }
  if (onChain) {
    Object.assign(status, {
      status: SubmissionStatus.confirmed, confirmations: tip.height - onChain.blockHeight + 1, blockHeight: onChain.blockHeight,
      blockHash: onChain.blockHash, blockTime: new Date(onChain.blockTime * 1000).toISOString(),
    })
    if (submission && submission.status !== SubmissionStatus.confirmed) await markConfirmed(srv, submission, onChain)
  } else if (!submission) {
    throw notFound('TRANSACTION_NOT_FOUND', `Transaction ${txHash} is neither on chain nor submitted here`, 'txHash')
  }
  return status
}

async function markConfirmed(srv: cds.Service, submission: TransactionSubmission, onChain: { blockHeight: number; blockHash: string; outputs: { address: string }[]; inputs: { address: string; txHash: string; outputIndex: number }[] }) {
  await UPDATE.entity(TransactionSubmissions)
    .set({ status: SubmissionStatus.confirmed, confirmedAt: new Date().toISOString(), blockHeight: onChain.blockHeight, blockHash: onChain.blockHash })
    .where({ ID: submission.ID })
  if (submission.build_ID) await settleBuild(submission.build_ID, BuildStatus.confirmed)
  await srv.emit('TransactionSubmitted', {
    txHash: submission.txHash,
    spent: onChain.inputs.map(input => `${input.txHash}#${input.outputIndex}`),
    addresses: [...new Set([...onChain.inputs, ...onChain.outputs].map(part => part.address))],
  })
}

function readSigned(signedTxCbor: unknown, network: string): SignedTransaction {
  const tx = parseTransaction(signedTxCbor, 'signedTxCbor')
  const body = tx.body()
  const expected = networkIdOf(network)
  const outputAddresses = listOf(body.outputs()).map(output => {
    const address = output.address()
    if (address.network_id() !== expected) throw badInput('WRONG_NETWORK', `Output ${address.to_bech32()} is not on this deployment's network (${network})`, 'signedTxCbor')
    return address.to_bech32()
  })
  return {
    txHash: bodyHashOf(signedTxCbor as string),
    bytes: tx.to_bytes(),
    spent: listOf(body.inputs()).map(input => `${input.transaction_id().to_hex()}#${input.index()}`),
    outputAddresses,
  }
}

/** The caller's build (any for an operator) that the signed transaction is, still waiting to be submitted. */
async function pendingBuild(buildId: string, txHash: string) {
  const build = await buildNow(buildId)
  if (build.txHash !== txHash) throw badInput('BODY_HASH_MISMATCH', `The signed transaction ${txHash} is not build ${buildId} (${build.txHash}): its body was changed`, 'signedTxCbor')
  if (build.status === BuildStatus.submitted || build.status === BuildStatus.confirmed) throw new ApiError(409, 'TX_ALREADY_SUBMITTED', `Build ${buildId} was already submitted as ${txHash}`, { target: 'buildId' })
  if (!PENDING_STATES.includes(build.status!)) throw new ApiError(409, 'INVALID_BUILD_STATE', `Build ${buildId} is ${build.status}; rebuild it to submit again`, { target: 'buildId' })
  return build
}

/** Refuses a transaction the owner submitted before; answers the owner's earlier failed submission, which is tried again. */
async function refuseSecondSubmission(owner: string, txHash: string): Promise<{ ID: string } | undefined> {
  const earlier = await SELECT.one.from(TransactionSubmissions).columns('ID', 'status').where({ owner, txHash })
  if (earlier && earlier.status !== SubmissionStatus.failed) throw new ApiError(409, 'TX_ALREADY_SUBMITTED', `Transaction ${txHash} was already submitted (${earlier.status})`, { target: 'signedTxCbor' })
  return earlier ? { ID: earlier.ID! } : undefined
}

/** After the rollback of a rejected submission: remember the ledger's reason for the submission and the build. */
async function recordRejection(error: unknown, submissionId: string, owner: string, signed: SignedTransaction, buildId: string | undefined, signedTxCbor: string) {
  if (!isApiError(error) || error.code !== 'TX_REJECTED') return
  try {
    await cds.tx(async () => {
      await UPSERT.into(TransactionSubmissions).entries({
        ID: submissionId, owner, build_ID: buildId ?? null, txHash: signed.txHash, status: SubmissionStatus.failed, signedTxCbor,
        errorCode: error.code, errorMessage: error.message.slice(0, 2000), submittedAt: new Date().toISOString(),
      })
      if (buildId) await settleBuild(buildId, BuildStatus.failed, error.message)
    })
  } catch (failure) {
    cds.log('chaina-transaction').error('could not record the rejection of', signed.txHash, failure)
  }
}

