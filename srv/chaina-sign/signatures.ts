import type cds from '@sap/cds'
import { signedCborFromCli } from '../chains/chain-a/signing/cardano-cli.ts'
import { verifySignedTransaction, type VerificationResult } from '../chains/chain-a/signing/verify.ts'
import { mergeSignerAnswer, type SignedTransaction } from '../chains/chain-a/signing/witnesses.ts'
import { ApiError, badInput } from '../lib/errors.ts'
import { audit, type AuditNote } from './audit.ts'
import { SignerType, SigningStatus } from './states.ts'
import { actorOf, buildAwaitingSignature, handBackBuild, refusedTransition, transition, type BuildFacts, type RequestRow } from './requests.ts'

/**
 * What a signer answers, merged into the request's original transaction and verified against its
 * build: every signature over the body hash, and signers covering the inputs' owners and the
 * body's required signers. The outcome is stored on the request (verified, or failed with the
 * problems found).
 */

interface SignatureOutcome {
  result: VerificationResult
  status: typeof SigningStatus.verified | typeof SigningStatus.failed
}

/** The signed transaction from a browser wallet (witness set or transaction) or cardano-cli (the signed file or its cborHex). */
export function signedFromAnswer(request: RequestRow, answer: unknown): SignedTransaction {
  if (request.signerType === SignerType.hsm) {
    throw badInput('SIGNER_TYPE_MISMATCH', `Signing request ${request.ID} is signed by the HSM: use SignWithHsm`, 'signedTxCbor')
  }
  if (typeof answer !== 'string' || !answer.trim()) throw badInput('MISSING_PARAMETER', 'signedTxCbor is required: the signer\'s answer', 'signedTxCbor')
  return mergeSignerAnswer(request.unsignedTxCbor, request.signerType === SignerType['cardano-cli'] ? signedCborFromCli(answer) : answer)
}

/** Stores the signed transaction (pending|signed → signed) and the verification's outcome (→ verified or failed). */
export async function recordSignature(req: cds.Request, request: RequestRow, signed: SignedTransaction, extra: { signerInfo?: string | null; signerDetails?: AuditNote['details'] } = {}): Promise<SignatureOutcome> {
  const build = await buildAwaitingSignature(request)
  const result = await verifyAgainstBuild(request, build, signed.cborHex)
  const at = new Date().toISOString()
  const signerInfoChange = extra.signerInfo ? { signerInfo: extra.signerInfo } : {}
  const { pending, signed: signedState, verified, failed } = SigningStatus
  if (!(await transition(request.ID, [pending, signedState], signedState, { signedTxCbor: signed.cborHex, signedAt: at, ...signerInfoChange }))) {
    throw await refusedTransition(request.ID, 'only a pending request takes a signature')
  }
  const verification = JSON.stringify(summaryOf(result))
  const status = result.valid ? verified : failed
  if (result.valid) await transition(request.ID, [signedState], verified, { verifiedAt: at, verification })
  else {
    await transition(request.ID, [signedState], failed, { verification, failureCode: 'SIGNATURE_INVALID', failureReason: describeFailure(result).slice(0, 2000) })
    await handBackBuild(request)
  }
  const actor = actorOf(req)
  const owner = request.owner
  audit(
    { kind: 'signed', signingRequestId: request.ID, owner, actor, details: { answerKind: signed.answerKind, witnessCount: signed.vkeyWitnessCount, addedWitnesses: signed.addedWitnesses, ...extra.signerDetails } },
    { kind: status, signingRequestId: request.ID, owner, actor, details: { txHash: result.txHash, ...summaryOf(result) } },
  )
  return { result, status }
}

/** 400 SIGNATURE_INVALID: what is wrong with a signed transaction that was to be submitted. */
export const signatureInvalid = (result: VerificationResult) =>
  new ApiError(400, 'SIGNATURE_INVALID', `The signed transaction does not verify: ${describeFailure(result)}`, { target: 'signedTxCbor' })

/** The answer of VerifySignature. */
export const verificationAnswer = (request: RequestRow, outcome: SignatureOutcome) => ({
  signingRequestId: request.ID, status: outcome.status, txHash: outcome.result.txHash, ...summaryOf(outcome.result),
})

function verifyAgainstBuild(request: RequestRow, build: BuildFacts, signedCbor: string): Promise<VerificationResult> {
  const owners = Object.fromEntries((build.spent ?? []).map(input => [`${input.txHash}#${input.outputIndex}`, input.address!]))
  return verifySignedTransaction(signedCbor, { expectedBodyHash: request.txHash, inputOwners: owners })
}

function summaryOf(result: VerificationResult) {
  const { valid, witnessCount, signerKeyHashes, invalidSignatures, problems } = result
  return { valid, witnessCount, signerKeyHashes, missingSigners: result.missingSigners.map(m => ({ keyHash: m.keyHash, neededFor: m.neededFor })), invalidSignatures, problems }
}

function describeFailure(result: VerificationResult): string {
  return [
    ...result.invalidSignatures.map(hash => `the signature of ${hash} does not verify against the body hash`),
    ...result.missingSigners.map(missing => `no signature of ${missing.keyHash} (needed for ${missing.neededFor})`),
    ...result.problems,
  ].join('; ')
}
