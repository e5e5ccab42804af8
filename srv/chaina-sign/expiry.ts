import cds from '@sap/cds'
import { SigningRequests, VerifiedTransactions } from '#cds-models/chainasign'
import type { ChainIdentity } from '#cds-models/ChainABuildSigning'
import { now } from '../lib/moment.ts'
import { audit } from './audit.ts'
import { BUILD_FORGOTTEN, OPEN_STATES, handBackBuild } from './requests.ts'
import { ChainState, SigningStatus } from './states.ts'

/**
 * Where signing requests end without anyone acting on them, for every owner's requests, each
 * audited as `system` for the request's owner:
 * - the expiry job (scheduled once in service.ts): open requests whose time has run out become
 *   expired, and their builds are handed back (the claim lapsed with them; releasing also covers a
 *   claim recorded before claims had an end). Reads do not wait for it: the service's view answers
 *   such a request expired already.
 * - when the transaction service forgets the builds of a former chain (BuildsForgotten): the open
 *   requests of that chain expire with BUILD_FORGOTTEN, and every request and verified transaction
 *   of it is marked former.
 * Each change is a guarded UPDATE from the states it may start in, so concurrent runs (several
 * instances) make and audit it once.
 */

const { SELECT, UPDATE } = cds.ql

export async function expireSigningRequests() {
  const moment = now()
  const stale = await SELECT.from(SigningRequests).columns('ID', 'owner', 'build_ID', 'expiresAt').where({ status: { in: OPEN_STATES }, expiresAt: { '<': moment } })
  for (const request of stale) {
    const expired = await UPDATE.entity(SigningRequests).set({ status: SigningStatus.expired, updatedAt: moment })
      .where({ ID: request.ID, status: { in: OPEN_STATES }, expiresAt: { '<': moment } })
    if (expired !== 1) continue
    await handBackBuild({ ID: request.ID!, build_ID: request.build_ID! })
    audit({ kind: 'expired', signingRequestId: request.ID!, owner: request.owner!, actor: 'system', details: { buildId: request.build_ID!, expiresAt: String(request.expiresAt) } })
  }
}

const FORGOTTEN_REASON = 'its build was made on a chain the upstream no longer serves (a restarted devnet or another network); build and sign it again'

/** Closes what was made on another chain than `chain`, the one the transaction service makes builds on now. */
export async function closeRecordsOfFormerChain(chain: ChainIdentity) {
  const moment = now()
  const { network, networkMagic } = chain
  const systemStart = new Date(chain.systemStart!).toISOString()
  // `!=` is null-safe in CQL: a record made before records carried their chain counts as former.
  const open = await SELECT.from(SigningRequests).columns('ID', 'owner', 'build_ID').where({ status: { in: OPEN_STATES } })
    .and`(network != ${network} or networkMagic != ${networkMagic} or systemStart != ${systemStart})`
  for (const request of open) {
    const expired = await UPDATE.entity(SigningRequests)
      .set({ status: SigningStatus.expired, chainState: ChainState.former, failureCode: BUILD_FORGOTTEN, failureReason: FORGOTTEN_REASON, updatedAt: moment })
      .where({ ID: request.ID, status: { in: OPEN_STATES } })
    if (expired !== 1) continue
    audit({
      kind: 'expired', signingRequestId: request.ID!, owner: request.owner!, actor: 'system',
      details: { buildId: request.build_ID!, reason: 'build forgotten: the upstream is another chain', code: BUILD_FORGOTTEN },
    })
  }
  await UPDATE.entity(SigningRequests).set({ chainState: ChainState.former }).where({ chainState: ChainState.current })
    .and`(network != ${network} or networkMagic != ${networkMagic} or systemStart != ${systemStart})`
  await UPDATE.entity(VerifiedTransactions).set({ chainState: ChainState.former }).where({ chainState: ChainState.current })
    .and`(network != ${network} or networkMagic != ${networkMagic} or systemStart != ${systemStart})`
}
