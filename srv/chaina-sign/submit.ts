import cds from '@sap/cds'
import { VerifiedTransactions } from '#cds-models/chainasign'
import ChainATransactionService, { type TransactionSubmission } from '#cds-models/ChainATransactionService'
import { policyRefusal } from '../chains/chain-a/signing/policies.ts'
import { isApiError } from '../lib/errors.ts'
import { afterRollback } from './after-rollback.ts'
import { audit } from './audit.ts'
import { policyViolation } from './policies.ts'
import {
  OPEN_STATES, actorOf, buildFacts, checkSignerType, refusedTransition, requestIn, requestRow, senderAddressesOf, transition, type RequestRow,
} from './requests.ts'
import { recordSignature, signatureInvalid, signedFromAnswer } from './signatures.ts'
import { ChainState, SigningStatus } from './states.ts'

/**
 * Submission of a verified request's transaction through the transaction service, so its rules
 * apply as they are: one submission per transaction (409), and a ledger rejection is recorded there
 * after the rollback and answered 400 TX_REJECTED. The policies are checked again first: they may
 * have changed since the request was created. The verified transaction is recorded for the
 * request's owner on the request's chain, so the same hash on another chain (a devnet restarted
 * from the same seed) or of another owner is a record of its own.
 */

const { INSERT } = cds.ql

interface SubmitParameters {
  signingRequestId?: string | null
  signedTxCbor?: string | null
  signerType?: string | null
  signerInfo?: string | null
}

export async function submitVerified(req: cds.Request, p: SubmitParameters) {
  let request = await requestIn(p.signingRequestId, OPEN_STATES, 'only a pending, signed or verified request can be submitted')
  checkSignerType(request, p.signerType)
  await refuseByPolicy(req, request)

  if (request.status !== SigningStatus.verified) {
    const outcome = await recordSignature(req, request, signedFromAnswer(request, p.signedTxCbor), { signerInfo: p.signerInfo })
    if (outcome.status !== SigningStatus.verified) throw signatureInvalid(outcome.result)
    request = await requestRow(request.ID)
  }

  const signedTxCbor = request.signedTxCbor!
  afterRollback(req, error => recordRejection(error, request, signedTxCbor, actorOf(req)))
  const transactions = await cds.connect.to(ChainATransactionService)
  const submission = (await transactions.SubmitSignedTransaction({ signedTxCbor, buildId: request.build_ID })) as TransactionSubmission & { ID: string; txHash: string }

  const submittedAt = new Date().toISOString()
  if (!(await transition(request.ID, [SigningStatus.verified], SigningStatus.submitted, { submittedAt, submission_ID: submission.ID }))) {
    throw await refusedTransition(request.ID, 'only a verified request can be submitted')
  }
  await INSERT.into(VerifiedTransactions).entries({
    ID: cds.utils.uuid(), txHash: submission.txHash, owner: request.owner, signingRequest_ID: request.ID, build_ID: request.build_ID, signerType: request.signerType,
    network: request.network, networkMagic: request.networkMagic, systemStart: request.systemStart, chainState: ChainState.current,
    signerKeyHashes: JSON.stringify(JSON.parse(request.verification ?? '{}').signerKeyHashes ?? []),
    verifiedAt: request.verifiedAt, submittedAt, submission_ID: submission.ID,
  })
  audit({ kind: 'submitted', signingRequestId: request.ID, owner: request.owner, actor: actorOf(req), details: { txHash: submission.txHash, submissionId: submission.ID } })
  return submission
}

/** A policy that refuses the request now answers 403; the refusal stays in the audit log, the request as it was. */
async function refuseByPolicy(req: cds.Request, request: RequestRow) {
  const expiresInSeconds = Math.round((Date.parse(String(request.expiresAt)) - Date.parse(String(request.createdAt))) / 1000)
  const senderAddresses = senderAddressesOf(await buildFacts(request.build_ID))
  const violation = await policyViolation({ unsignedTxCbor: request.unsignedTxCbor, signerType: request.signerType, senderAddresses, expiresInSeconds })
  if (!violation) return
  afterRollback(req, async () => audit({
    kind: 'policy-refused', signingRequestId: request.ID, owner: request.owner, actor: actorOf(req),
    details: { stage: 'submit', buildId: request.build_ID, signerType: request.signerType, policy: violation.policy, rule: violation.rule, message: violation.message },
  }))
  throw policyRefusal(violation)
}

/** After the rollback of a submission the ledger rejected: the request (found the caller's before) failed, with the ledger's reason. */
async function recordRejection(error: unknown, request: RequestRow, signedTxCbor: string, actor: string) {
  if (!isApiError(error) || error.code !== 'TX_REJECTED') return
  const { ID: id, owner } = request
  const failed = await transition(id, OPEN_STATES, SigningStatus.failed, { signedTxCbor, failureCode: error.code, failureReason: error.message.slice(0, 2000) }, { owner })
  if (failed) audit({ kind: 'failed', signingRequestId: id, owner, actor, details: { code: error.code, message: error.message } })
}
