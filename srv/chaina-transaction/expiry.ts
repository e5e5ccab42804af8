import cds from '@sap/cds'
import { SpendLocks, TransactionBuilds } from '#cds-models/chainatx'
import { PENDING_STATES } from './builds.ts'
import { BuildStatus } from './states.ts'
import { now } from '../lib/moment.ts'

/**
 * The build expiry job's work (scheduled once in service.ts), for every owner's builds: pending
 * builds whose validity has passed become expired, lapsed signing claims are handed back (built),
 * and the locks of both, and every lapsed lock, are removed. Each UPDATE is guarded by the rule it
 * applies, so concurrent runs (several instances) change each build once. Reads do not wait for
 * it: the service's view answers a build's status as it stands.
 */

const { UPDATE, DELETE } = cds.ql

export async function expireBuilds() {
  const moment = now()
  await UPDATE.entity(TransactionBuilds).set({ status: BuildStatus.expired, signingUntil: null, updatedAt: moment })
    .where({ status: { in: PENDING_STATES }, expiresAt: { '<': moment } })
  await UPDATE.entity(TransactionBuilds).set({ status: BuildStatus.built, signingUntil: null, claimedBy: null, updatedAt: moment })
    .where({ status: BuildStatus.signing, signingUntil: { '<': moment } })
  await DELETE.from(SpendLocks).where`expiresAt < ${moment} or exists build[expiresAt < ${moment}]`
}
