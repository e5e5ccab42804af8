import cds from '@sap/cds'
import { BuildAssets, BuildInputs, BuildMetadata, BuildOutputs, SpendLocks, TransactionBuilds, type TransactionBuild } from '#cds-models/chainatx'
import { TransactionBuilds as BuildsNow, type TransactionBuild as BuildNow } from '#cds-models/ChainATransactionService'
import { builderFor, type BuildResult, type OutputRef, type ScriptSpendRequest } from '../chains/chain-a/builders/index.ts'
import { describeAsset } from '../chains/chain-a/assets.ts'
import { chainA } from '../chains/chain-a/index.ts'
import type { AssetQuantity } from '../chains/chain-a/port.ts'
import { ApiError, notFound } from '../lib/errors.ts'
import { ownedBy, ownerOf } from '../lib/ownership.ts'
import { runWrite, tableOf } from '../lib/plain-sql.ts'
import { settleAll } from '../lib/settle-all.ts'
import { chainContext, timeOfSlot } from './chain-context.ts'
import { now } from '../lib/moment.ts'
import { BuildStatus, type BuildKind } from './states.ts'
import { planBuild, type BuildParameters, type PlannedBuild } from './requests.ts'

/**
 * Builds: one row per unsigned transaction with what it spends, creates, mints and carries, owned
 * by the caller, and a lock on every output it spends so no other pending build of the same owner
 * selects them. A lock lasts what signing needs (spendLockSeconds, extended to a signing
 * request's expiry, and to the build's validity once submitted), never beyond the build's validity;
 * a pending build's locks never exclude anything from another owner's builds (a submitted one's do:
 * the ledger accepted the spend). Transitions are guarded UPDATEs on the caller's own builds (all of
 * them for an operator): cancel only from built or signing, rebuild only a failed or expired build.
 * A build is read as it stands (BuildsNow, the service's view): expired once its validity has
 * passed, built again once a signing claim lapsed, whether or not the expiry job (expiry.ts) has
 * recorded it yet; the guards of the transitions judge by the same moment.
 */

const { SELECT, INSERT, UPDATE, DELETE } = cds.ql

export const PENDING_STATES: BuildStatus[] = [BuildStatus.built, BuildStatus.signing]
const SELECTION_ATTEMPTS = 3

export const defaultBuilder = async () => (await chainA()).settings.builder

/** Builds for the caller, or for the owner of the build it rebuilds. */
export async function createBuild(kind: BuildKind, parameters: BuildParameters, builderName?: string | null, rebuiltFrom?: { ID: string; owner: string }): Promise<string> {
  const owner = rebuiltFrom?.owner ?? ownerOf()
  const builder = builderFor(builderName || (await defaultBuilder()))
  const context = await chainContext()
  const plan = planBuild(kind, parameters, context.network)
  const scriptInputs = plan.scriptSpend ? [await scriptInput(plan.scriptSpend)] : undefined
  for (let attempt = 0; attempt < SELECTION_ATTEMPTS; attempt++) {
    const [utxos, excludedUtxos] = await settleAll([(await chainA()).port.addressUtxos(plan.sender), lockedOutputs(owner, plan.sender)])
    const result = await builder.build({
      utxos, changeAddress: plan.change, protocolParameters: context.protocolParameters, currentSlot: context.currentSlot,
      networkId: context.networkId, slotConfig: context.slotConfig, excludedUtxos, outputs: plan.outputs, mint: plan.mint,
      metadataJson: plan.metadataJson, scriptInputs,
    })
    const id = cds.utils.uuid()
    const expiresAt = result.validity.invalidHereafter === null ? null : timeOfSlot(context.slotConfig, result.validity.invalidHereafter).toISOString()
    if (await lockSpentOutputs(id, owner, result, plan.sender, await lockedUntil(expiresAt))) {
      await record(id, owner, kind, plan, parameters, result, context.network, expiresAt, rebuiltFrom?.ID)
      return id
    }
  }
  throw new ApiError(409, 'UTXO_CONTENTION', `Your other builds of ${plan.sender} keep taking the same outputs; try again`, { target: 'senderAddress' })
}

/** Cancels a build of the caller's that is not yet submitted (nor expired); its outputs are free again. */
export async function cancelBuild(id: string) {
  const moment = now()
  const affected = await UPDATE.entity(TransactionBuilds).set({ status: BuildStatus.cancelled, signingUntil: null, claimedBy: null, updatedAt: moment })
    .where({ ID: id, status: { in: PENDING_STATES }, ...ownedBy() }).and`(expiresAt is null or expiresAt >= ${moment})`
  if (affected !== 1) await refuseTransition(id, BuildStatus.cancelled, 'only a build that is built or signing can be cancelled')
  await DELETE.from(SpendLocks).where({ build_ID: id })
}

/** Builds a failed or expired build of the caller's again: new inputs, a new validity interval, a new build of the same owner. */
export async function rebuild(id: string, builderName?: string | null): Promise<string> {
  const old = await buildNow(id)
  if (old.status !== BuildStatus.failed && old.status !== BuildStatus.expired)
    throw new ApiError(409, 'INVALID_BUILD_STATE', `Build ${id} is ${old.status}; only a failed or expired build can be rebuilt`, { target: 'buildId' })
  const { requestJson } = (await SELECT.one.from(TransactionBuilds).columns('requestJson').where({ ID: id }))!
  return createBuild(old.kind!, JSON.parse(requestJson!), builderName || old.builder, { ID: id, owner: old.owner })
}

/** A build of the caller's (any for an operator) as it stands now; another owner's answers 404 like one that does not exist. */
export async function buildNow(id: string): Promise<BuildNow & { ID: string; owner: string }> {
  const build = await SELECT.one.from(BuildsNow).where({ ID: id, ...ownedBy() })
  if (!build) throw notFound('BUILD_NOT_FOUND', `There is no build ${id}`, 'buildId')
  return build as BuildNow & { ID: string; owner: string }
}

type LockedBuild = Pick<TransactionBuild, 'senderAddress' | 'expiresAt'> & { ID: string; owner: string }

/**
 * Keeps the outputs a build spends locked until `until` (a signing request's expiry, or the build's
 * validity once submitted), never beyond the build's validity. A lapsed lock is taken again unless
 * another build of the same owner has taken the output meanwhile.
 */
export async function extendSpendLocks(build: LockedBuild, until: string) {
  const end = build.expiresAt ? new Date(Math.min(Date.parse(until), Date.parse(build.expiresAt))).toISOString() : until
  const inputs = await SELECT.from(BuildInputs).columns('txHash', 'outputIndex', 'address').where({ build_ID: build.ID })
  for (const input of inputs) await lockOutput(build.ID, build.owner, { txHash: input.txHash!, outputIndex: input.outputIndex!, address: input.address ?? build.senderAddress ?? null }, end)
}

/**
 * Locks an output for a build of the owner until `until`: a new lock, the build's own lock
 * extended, or a lock that no longer holds taken over (it lapsed, or its build's validity passed,
 * though the expiry job has not removed it yet). False when another build of the owner holds it.
 */
async function lockOutput(buildId: string, owner: string, output: OutputRef & { address: string | null }, until: string): Promise<boolean> {
  const locks = tableOf(SpendLocks)
  const sql = `INSERT INTO ${locks} (owner, txHash, outputIndex, build_ID, address, expiresAt) VALUES (?, ?, ?, ?, ?, ?) `
    + 'ON CONFLICT (owner, txHash, outputIndex) DO UPDATE SET build_ID = excluded.build_ID, address = excluded.address, expiresAt = excluded.expiresAt '
    + `WHERE ${locks}.build_ID = excluded.build_ID OR ${locks}.expiresAt <= ? `
    + `OR EXISTS (SELECT 1 FROM ${tableOf(TransactionBuilds)} AS b WHERE b.ID = ${locks}.build_ID AND b.expiresAt < ?)`
  const moment = now()
  return (await runWrite(sql, [owner, output.txHash, output.outputIndex, buildId, output.address, until, moment, moment])) === 1
}

type Settlement = typeof BuildStatus.submitted | typeof BuildStatus.confirmed | typeof BuildStatus.failed

/** The states a settlement may start in. */
const SETTLED_FROM: Record<Settlement, BuildStatus[]> = {
  submitted: PENDING_STATES,
  confirmed: [BuildStatus.submitted, ...PENDING_STATES],
  failed: [...PENDING_STATES, BuildStatus.submitted],
}

/**
 * Settles a build (the caller's was checked before, or the settlement follows the chain): submitted
 * (its outputs stay locked until it is confirmed, at most until its validity ends), confirmed or
 * failed (freed).
 */
export async function settleBuild(id: string, status: Settlement, failureReason?: string) {
  const failure = failureReason ? { failureReason: failureReason.slice(0, 2000) } : {}
  const affected = await UPDATE.entity(TransactionBuilds).set({ status, signingUntil: null, updatedAt: now(), ...failure }).where({ ID: id, status: { in: SETTLED_FROM[status] } })
  if (status !== BuildStatus.submitted) await DELETE.from(SpendLocks).where({ build_ID: id })
  else if (affected === 1) {
    const build = (await SELECT.one.from(TransactionBuilds).columns('ID', 'owner', 'senderAddress', 'expiresAt').where({ ID: id }))!
    await extendSpendLocks(build as LockedBuild, build.expiresAt ?? (await lockedUntil(null)))
  }
}

/** Why a transition of the caller's build did not apply: 404 for no such build of the caller's (another owner's too), 409 for its state now. */
async function refuseTransition(id: string, to: BuildStatus, rule: string): Promise<never> {
  const build = await buildNow(id)
  throw new ApiError(409, 'INVALID_BUILD_STATE', `Build ${id} is ${build.status} and cannot become ${to}: ${rule}`, { target: 'buildId' })
}

/**
 * The outputs of an address a new build of the owner must not select: those the owner's pending
 * builds hold, and those a submitted build spends (already spent in the mempool, for everyone; only
 * a transaction the ledger accepted gets there). Other owners' pending builds do not count, nor
 * locks that lapsed or whose build's validity has passed (the expiry job removes them later).
 */
async function lockedOutputs(owner: string, address: string): Promise<OutputRef[]> {
  const moment = now()
  const locks = await SELECT.from(SpendLocks).columns('txHash', 'outputIndex')
    .where`address = ${address} and expiresAt > ${moment} and (owner = ${owner} or build.status = ${BuildStatus.submitted})`
    .and`(build.expiresAt is null or build.expiresAt > ${moment})`
  return locks.map(lock => ({ txHash: lock.txHash!, outputIndex: lock.outputIndex! }))
}

/** When a new build's locks lapse: after the chain-a option spendLockSeconds, or with the build's validity if that ends first. */
async function lockedUntil(validUntil: string | null): Promise<string> {
  const lapse = Date.now() + (await chainA()).settings.spendLockSeconds * 1000
  return new Date(validUntil ? Math.min(lapse, Date.parse(validUntil)) : lapse).toISOString()
}

/**
 * Locks every output the build spends (inputs and collateral) for its owner. An output another
 * build of the same owner locked meanwhile makes this answer false (and take back its own locks)
 * instead of failing the request.
 */
async function lockSpentOutputs(buildId: string, owner: string, result: BuildResult, sender: string, until: string): Promise<boolean> {
  for (const input of [...result.inputs, ...result.collateral]) {
    if (!(await lockOutput(buildId, owner, { txHash: input.txHash, outputIndex: input.outputIndex, address: input.address ?? sender }, until))) {
      await DELETE.from(SpendLocks).where({ build_ID: buildId })
      return false
    }
  }
  return true
}

/** The script-locked output a Plutus spend takes, as the chain has it now (and unspent). */
async function scriptInput(spend: NonNullable<PlannedBuild['scriptSpend']>): Promise<ScriptSpendRequest> {
  const { port } = await chainA()
  const tx = await port.transaction(spend.txHash)
  const output = tx?.outputs.find(o => o.outputIndex === spend.outputIndex)
  if (!output) throw notFound('OUTPUT_NOT_FOUND', `There is no output ${spend.txHash}#${spend.outputIndex} on chain`, 'scriptTxHash')
  const utxo = (await port.addressUtxos(output.address)).find(u => u.txHash === spend.txHash && u.outputIndex === spend.outputIndex)
  if (!utxo) throw new ApiError(409, 'UTXO_SPENT', `Output ${spend.txHash}#${spend.outputIndex} has already been spent`, { target: 'scriptTxHash' })
  return { utxo, validator: spend.validator, redeemerJson: spend.redeemerJson, datumJson: spend.datumJson }
}

async function record(id: string, owner: string, kind: BuildKind, plan: PlannedBuild, parameters: BuildParameters, result: BuildResult, network: string, expiresAt: string | null, rebuiltFrom?: string) {
  const moment = now()
  await INSERT.into(TransactionBuilds).entries({
    ID: id, owner, status: BuildStatus.built, kind, builder: result.builder, network, senderAddress: plan.sender, recipientAddress: plan.recipient,
    changeAddress: plan.change, lovelaceAmount: plan.lovelaceAmount, txHash: result.txBodyHash, unsignedTxCbor: result.unsignedTxCbor,
    fee: result.fee, size: result.size, invalidBefore: result.validity.invalidBefore, invalidHereafter: result.validity.invalidHereafter,
    expiresAt, requiredSigners: JSON.stringify(result.requiredSigners), requestJson: JSON.stringify(parameters), rebuiltFrom: rebuiltFrom ?? null,
    createdAt: moment, updatedAt: moment,
  })
  const spent = [...result.inputs.map(input => ({ ...input, isCollateral: false })), ...result.collateral.map(input => ({ ...input, isCollateral: true }))]
  await insertAll(BuildInputs, spent.map((input, inputIndex) => ({
    build_ID: id, inputIndex, txHash: input.txHash, outputIndex: input.outputIndex, address: input.address, lovelace: input.lovelace,
    isScript: input.isScript, isCollateral: input.isCollateral,
  })))
  await insertAll(BuildOutputs, result.outputs.map(output => ({
    build_ID: id, outputIndex: output.outputIndex, address: output.address, lovelace: output.lovelace, isChange: output.isChange,
    datumHash: output.datumHash, inlineDatum: output.inlineDatum,
  })))
  await insertAll(BuildAssets, [
    ...spent.flatMap((input, position) => assetRows(id, 'input', position, input.assets)),
    ...result.outputs.flatMap(output => assetRows(id, 'output', output.outputIndex, output.assets)),
    ...assetRows(id, 'mint', 0, result.mint),
  ])
  await insertAll(BuildMetadata, result.metadata.map(entry => ({ build_ID: id, label: entry.label, payload: entry.json })))
}

const assetRows = (buildId: string, role: string, position: number, assets: AssetQuantity[]) =>
  assets.map(asset => ({ build_ID: buildId, role, position, unit: asset.unit, ...describeAsset(asset.unit), quantity: asset.quantity }))

async function insertAll(entity: Parameters<typeof INSERT.into>[0], entries: object[]) {
  if (entries.length) await INSERT.into(entity).entries(entries)
}
