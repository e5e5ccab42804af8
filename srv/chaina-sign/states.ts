import { SigningRequest } from '#cds-models/chainasign'
import { SigningFacts } from '#cds-models/ChainABuildSigning'

/**
 * The states of signing requests, signer types and chain states, as the model (db/chain-a-sign.cds)
 * declares them; a build's states as the transaction service answers them (build-signing.cds).
 */

export const SigningStatus = SigningRequest.status
export type SigningStatus = NonNullable<SigningRequest['status']>

export const SignerType = SigningRequest.signerType
export type SignerType = NonNullable<SigningRequest['signerType']>

export const ChainState = SigningRequest.chainState
export type ChainState = NonNullable<SigningRequest['chainState']>

export const BuildStatus = SigningFacts.status
export type BuildStatus = NonNullable<SigningFacts['status']>
