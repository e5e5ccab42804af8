import cds from '@sap/cds'
import { BuildInputs, TransactionBuilds } from '#cds-models/chainatx'
import { ClaimBuildForSigning, ReleaseBuild, SigningFactsOf, type ChainIdentity, type SigningFacts } from '#cds-models/ChainABuildSigning'
import { buildNow, extendSpendLocks } from './builds.ts'
import { chainA } from '../chains/chain-a/index.ts'
import { now } from '../lib/moment.ts'
import { BuildStatus } from './states.ts'

/**
 * The builds' side of signing (build-signing.cds): the transaction service alone changes a build's
 * status; the signing service asks here. A claim holds a built build for one signing request until
 * the request's expiry (never beyond the build's validity) and keeps its outputs locked as long; it
 * lapses by itself then, so a request that simply runs out needs no release.
 */

const { SELECT, UPDATE } = cds.ql

export class ChainABuildSigning extends cds.ApplicationService {
  init() {
    this.on(SigningFactsOf, req => signingFacts(req.data.buildId!))
    this.on(ClaimBuildForSigning, req => claim(req.data.buildId!, req.data.signingRequestId!, req.data.until!))
    this.on(ReleaseBuild, req => release(req.data.buildId!, req.data.signingRequestId!))
    return super.init()
  }
}

/** The caller's build as it stands, with what it spends and the chain it was made on. */
async function signingFacts(buildId: string): Promise<SigningFacts> {
  const build = await buildNow(buildId)
  const [spent, chain] = await Promise.all([
    SELECT.from(BuildInputs).columns('txHash', 'outputIndex', 'address').where({ build_ID: buildId }).orderBy('inputIndex'),
    chainA().then(service => service.identity()),
  ])
  return {
    ...chain, ID: build.ID, owner: build.owner, status: build.status, txHash: build.txHash, unsignedTxCbor: build.unsignedTxCbor,
    senderAddress: build.senderAddress, changeAddress: build.changeAddress, expiresAt: build.expiresAt, signingUntil: build.signingUntil,
    claimedBy: build.claimedBy, spent,
  } satisfies SigningFacts & ChainIdentity
}

/**
 * built → signing for the request, from a built build of the caller's whose validity has not passed
 * (or whose earlier claim lapsed); answers the facts after the attempt, whether it applied or not.
 */
async function claim(buildId: string, signingRequestId: string, until: string): Promise<SigningFacts> {
  const moment = now()
  const build = await buildNow(buildId)
  const end = build.expiresAt && Date.parse(build.expiresAt) < Date.parse(until) ? build.expiresAt : new Date(until).toISOString()
  const claimed = await UPDATE.entity(TransactionBuilds).set({ status: BuildStatus.signing, signingUntil: end, claimedBy: signingRequestId, updatedAt: moment })
    .where({ ID: buildId, owner: build.owner })
    .and`(status = ${BuildStatus.built} or (status = ${BuildStatus.signing} and signingUntil < ${moment}))`
    .and`(expiresAt is null or expiresAt >= ${moment})`
  if (claimed === 1) await extendSpendLocks(build, end)
  return signingFacts(buildId)
}

/** signing → built, only for the request that holds the claim (a claim from before claims were recorded has none). */
async function release(buildId: string, signingRequestId: string): Promise<boolean> {
  const released = await UPDATE.entity(TransactionBuilds).set({ status: BuildStatus.built, signingUntil: null, claimedBy: null, updatedAt: now() })
    .where({ ID: buildId, status: BuildStatus.signing })
    .and`(claimedBy = ${signingRequestId} or claimedBy is null)`
  return released === 1
}
