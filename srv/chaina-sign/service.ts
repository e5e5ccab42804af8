import cds from '@sap/cds'
import {
  SigningRequests, HsmConfigurations, SigningPolicies, CreateSigningRequest, GetSigningRequest, VerifySignature,
  SubmitVerifiedTransaction, SignWithHsm, CancelSigningRequest, ListPendingRequests, GetAuditLog,
} from '#cds-models/ChainASignService'
import ChainABuildSigning, { type BuildsForgotten } from '#cds-models/ChainABuildSigning'
import { chainA } from '../chains/chain-a/index.ts'
import { parseAddress } from '../chains/chain-a/identifiers.ts'
import { ownExpands, ownedBy } from '../lib/ownership.ts'
import { scheduleJob, type ScheduledJob } from '../lib/scheduled-job.ts'
import { auditLog } from './audit.ts'
import { closeRecordsOfFormerChain, expireSigningRequests } from './expiry.ts'
import { closeHsmSigner, refreshHsmConfigurations, signWithHsm } from './hsm.ts'
import { checkPolicyWrite } from './policies.ts'
import { OPEN_STATES, cancelSigningRequest, checkSignerType, createSigningRequest, requestIn, requestRow, requiredId } from './requests.ts'
import { recordSignature, signedFromAnswer, verificationAnswer } from './signatures.ts'
import { SigningStatus } from './states.ts'
import { submitVerified } from './submit.ts'

const { SELECT } = cds.ql

export class ChainASignService extends cds.ApplicationService {
  /** The signing request expiry job, started once the services are served. */
  expiry?: ScheduledJob

  init() {
    this.before('READ', '*', ownExpands)
    this.before('READ', HsmConfigurations, () => refreshHsmConfigurations())
    this.before(['CREATE', 'UPDATE'], SigningPolicies, checkPolicyWrite)

    this.on(CreateSigningRequest, async req => requestRow(await createSigningRequest(req, req.data)))
    this.on(SignWithHsm, async req => requestRow(await signWithHsm(req, req.data.buildId, req.data.signerInfo)))
    this.on(VerifySignature, verifySignature)
    this.on(SubmitVerifiedTransaction, req => submitVerified(req, req.data))
    this.on(CancelSigningRequest, async req => requestRow(await cancelSigningRequest(req, req.data.signingRequestId)))
    this.on(GetSigningRequest, req => requestRow(requiredId(req.data.signingRequestId, 'signingRequestId')))
    this.on(ListPendingRequests, req => pendingRequests(req.data.address))
    this.on(GetAuditLog, req => auditLog(req.data.signingRequestId))

    cds.once('served', async () => {
      await closeRecordsOfForgottenBuilds()
      this.expiry = scheduleJob('signing request expiry', (await chainA()).settings.expiryIntervalMs, expireSigningRequests)
    })
    cds.on('shutdown', closeHsmSigner)
    return super.init()
  }
}

/** When the transaction service forgets the builds of a former chain, what was made on it is closed. */
async function closeRecordsOfForgottenBuilds() {
  const builds = await cds.connect.to(ChainABuildSigning)
  builds.on('BuildsForgotten', (msg: { data: BuildsForgotten }) => closeRecordsOfFormerChain(msg.data))
}

/** Verifies a signer's answer without submitting; the outcome is stored on the request and answered. */
async function verifySignature(req: cds.Request) {
  const { signingRequestId, signedTxCbor, signerType, signerInfo } = req.data
  const request = await requestIn(signingRequestId, [SigningStatus.pending, SigningStatus.signed], 'only a pending request takes a signature')
  checkSignerType(request, signerType)
  const outcome = await recordSignature(req, request, signedFromAnswer(request, signedTxCbor), { signerInfo })
  return verificationAnswer(request, outcome)
}

/** The caller's open requests (everyone's for an operator: pending, signed, verified), oldest first; of one sender address when given. */
async function pendingRequests(address?: string | null) {
  const where: Record<string, unknown> = { status: { in: OPEN_STATES }, ...ownedBy() }
  if (address) where.senderAddress = parseAddress(address, (await chainA()).networkName, 'address')
  return SELECT.from(SigningRequests).where(where).orderBy('createdAt', 'ID')
}
