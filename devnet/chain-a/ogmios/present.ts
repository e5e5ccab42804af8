import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { listOf } from '../../../srv/chains/chain-a/csl.ts'
import { poolIdOf } from '../addresses.ts'
import { deriveKey, toHex } from '../crypto.ts'
import type { Ledger, Pool } from '../ledger.ts'
import { GENESIS } from '../params.ts'
import { parametersJson } from '../api/present.ts'
import type { Block, Certificate, LedgerTx, Output, OutputData, PoolParams } from '../types.ts'
import type { Value } from '../values.ts'

/**
 * The ledger's records in Ogmios v6's JSON shapes (the Cardano JSON schema of ogmios.dev): blocks
 * of type `praos` in era `conway`, transactions, outputs, values, certificates, protocol
 * parameters, stake pools, genesis configurations and era summaries. Lovelace and asset
 * quantities are `bigint` (written as JSON integers by `json.ts`).
 */

export type Json = unknown

export const ada = (lovelace: bigint) => ({ ada: { lovelace } })

/** A decimal fraction as Ogmios' exact ratio `numerator/denominator`, reduced. */
export function ratio(value: number | string): string {
  const text = typeof value === 'number' ? value.toFixed(12).replace(/0+$/, '').replace(/\.$/, '') : value
  const [whole, fraction = ''] = text.split('.')
  let numerator = BigInt(whole + fraction)
  let denominator = 10n ** BigInt(fraction.length)
  const divisor = gcd(numerator < 0n ? -numerator : numerator, denominator)
  if (divisor > 1n) { numerator /= divisor; denominator /= divisor }
  return `${numerator}/${denominator}`
}

const fraction = (numerator: bigint, denominator: bigint) => {
  const divisor = gcd(numerator, denominator) || 1n
  return `${numerator / divisor}/${denominator / divisor}`
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b]
  return a
}

export function value(v: Value) {
  const json: Record<string, Record<string, bigint>> = { ada: { lovelace: v.coin } }
  for (const [unit, quantity] of [...v.assets].sort(([a], [b]) => a.localeCompare(b))) {
    const policy = unit.slice(0, 56)
    json[policy] ??= {}
    json[policy][unit.slice(56)] = quantity
  }
  return json
}

export const outputReference = (ref: string) => {
  const at = ref.lastIndexOf('#')
  return { transaction: { id: ref.slice(0, at) }, index: Number(ref.slice(at + 1)) }
}

// ---- scripts ------------------------------------------------------------------------------

const LANGUAGES: Record<number, string> = {
  [CSL.LanguageKind.PlutusV1]: 'plutus:v1',
  [CSL.LanguageKind.PlutusV2]: 'plutus:v2',
  [CSL.LanguageKind.PlutusV3]: 'plutus:v3',
}

function nativeJson(script: CSL.NativeScript): Json {
  const nested = (list: CSL.NativeScripts) => listOf(list).map(nativeJson)
  switch (script.kind()) {
    case CSL.NativeScriptKind.ScriptPubkey: return { clause: 'signature', from: script.as_script_pubkey()!.addr_keyhash().to_hex() }
    case CSL.NativeScriptKind.ScriptAll: return { clause: 'all', from: nested(script.as_script_all()!.native_scripts()) }
    case CSL.NativeScriptKind.ScriptAny: return { clause: 'any', from: nested(script.as_script_any()!.native_scripts()) }
    case CSL.NativeScriptKind.ScriptNOfK: {
      const some = script.as_script_n_of_k()!
      return { clause: 'some', atLeast: BigInt(some.n()), from: nested(some.native_scripts()) }
    }
    case CSL.NativeScriptKind.TimelockStart: return { clause: 'after', slot: Number(script.as_timelock_start()!.slot_bignum().to_str()) }
    default: return { clause: 'before', slot: Number(script.as_timelock_expiry()!.slot_bignum().to_str()) }
  }
}

const nativeScript = (script: CSL.NativeScript) => ({ language: 'native', json: nativeJson(script), cbor: script.to_hex() })
const plutusScript = (script: CSL.PlutusScript) => ({ language: LANGUAGES[script.language_version().kind()] ?? 'plutus:v3', cbor: toHex(script.bytes()) })

/** A reference script (CBOR of the output's script_ref) as Ogmios' Script. */
export function referenceScript(hex: string): Json {
  const ref = CSL.ScriptRef.from_hex(hex)
  return ref.is_native_script() ? nativeScript(ref.native_script()!) : plutusScript(ref.plutus_script()!)
}

// ---- outputs ------------------------------------------------------------------------------

export function transactionOutput(output: OutputData) {
  return {
    address: output.address,
    value: value(output.value),
    ...(output.inlineDatum ? { datum: output.inlineDatum } : output.dataHash ? { datumHash: output.dataHash } : {}),
    ...(output.referenceScript ? { script: referenceScript(output.referenceScript) } : {}),
  }
}

/** An unspent output as `queryLedgerState/utxo` lists it. */
export const utxoEntry = (output: Output) => ({ transaction: { id: output.txHash }, index: output.index, ...transactionOutput(output) })

// ---- credentials, pools, certificates -----------------------------------------------------

/** The credential behind a stake address: its hash and whether a key or a script. */
export function stakeCredential(stakeAddress: string): { credential: string; from: 'verificationKey' | 'script' } {
  const reward = CSL.RewardAddress.from_address(CSL.Address.from_bech32(stakeAddress))!
  const credential = reward.payment_cred()
  const key = credential.to_keyhash()
  return key ? { credential: key.to_hex(), from: 'verificationKey' } : { credential: credential.to_scripthash()!.to_hex(), from: 'script' }
}

function delegateRepresentative(drep: string) {
  if (drep === 'drep_always_abstain') return { type: 'abstain' }
  if (drep === 'drep_always_no_confidence') return { type: 'noConfidence' }
  return { type: 'registered', id: drep, from: 'verificationKey' }
}

export function stakePool(pool: PoolParams) {
  return {
    id: poolIdOf(pool.hex),
    vrfVerificationKeyHash: pool.vrfKeyHash,
    owners: pool.owners.map(owner => stakeCredential(owner).credential),
    cost: ada(pool.cost),
    margin: fraction(pool.marginPpm, 1_000_000n),
    pledge: ada(pool.pledge),
    rewardAccount: pool.rewardAccount,
    metadata: { url: pool.metadata.url, hash: pool.metadata.hash },
    // Devnet pools announce no relays.
    relays: [] as Json[],
  }
}

function certificate(cert: Certificate): Json {
  switch (cert.kind) {
    case 'registration':
      return { type: 'stakeCredentialRegistration', ...stakeCredential(cert.stakeAddress), ...(cert.explicitDeposit ? { deposit: ada(cert.deposit) } : {}) }
    case 'deregistration':
      return { type: 'stakeCredentialDeregistration', ...stakeCredential(cert.stakeAddress), ...(cert.refund > 0n ? { deposit: ada(cert.refund) } : {}) }
    case 'delegation':
      return { type: 'stakeDelegation', ...stakeCredential(cert.stakeAddress), stakePool: { id: poolIdOf(cert.pool) } }
    case 'vote_delegation':
      return { type: 'stakeDelegation', ...stakeCredential(cert.stakeAddress), delegateRepresentative: delegateRepresentative(cert.drep) }
    case 'pool_registration':
      return { type: 'stakePoolRegistration', stakePool: stakePool(cert.pool) }
    case 'drep_registration':
      return { type: 'delegateRepresentativeRegistration', delegateRepresentative: delegateRepresentative(cert.drep), deposit: ada(cert.deposit) }
  }
}

// ---- transactions -------------------------------------------------------------------------

const PURPOSES: Record<number, string> = {
  [CSL.RedeemerTagKind.Spend]: 'spend',
  [CSL.RedeemerTagKind.Mint]: 'mint',
  [CSL.RedeemerTagKind.Cert]: 'publish',
  [CSL.RedeemerTagKind.Reward]: 'withdraw',
  [CSL.RedeemerTagKind.Vote]: 'vote',
  [CSL.RedeemerTagKind.VotingProposal]: 'propose',
}

/** A metadatum in Ogmios' schema-less JSON, or undefined when it has bytes or non-text keys (then only its CBOR is given). */
function metadatumJson(datum: CSL.TransactionMetadatum): Json | undefined {
  switch (datum.kind()) {
    case CSL.TransactionMetadatumKind.Int: return BigInt(datum.as_int().to_str())
    case CSL.TransactionMetadatumKind.Text: return datum.as_text()
    case CSL.TransactionMetadatumKind.Bytes: return undefined
    case CSL.TransactionMetadatumKind.MetadataList: {
      const items = listOf(datum.as_list()).map(metadatumJson)
      return items.every(item => item !== undefined) ? items : undefined
    }
    default: {
      const map = datum.as_map()
      const json: Record<string, Json> = {}
      for (const key of listOf(map.keys())) {
        if (key.kind() !== CSL.TransactionMetadatumKind.Text) return undefined
        const item = metadatumJson(map.get(key))
        if (item === undefined) return undefined
        json[key.as_text()] = item
      }
      return json
    }
  }
}

/** What only the submitted bytes hold: witnesses, scripts, datums, redeemers, metadata and a few body fields. */
function fromBytes(bytes: Uint8Array) {
  const fixed = CSL.FixedTransaction.from_bytes(bytes)
  const body = fixed.body()
  const witnesses = fixed.witness_set()
  const scripts: Record<string, Json> = {}
  for (const script of listOf(witnesses.native_scripts())) scripts[script.hash().to_hex()] = nativeScript(script)
  for (const script of listOf(witnesses.plutus_scripts())) scripts[script.hash().to_hex()] = plutusScript(script)
  const datums: Record<string, string> = {}
  for (const datum of listOf(witnesses.plutus_data())) datums[CSL.hash_plutus_data(datum).to_hex()] = datum.to_hex()
  const redeemers = listOf(witnesses.redeemers()).map(redeemer => ({
    validator: { purpose: PURPOSES[redeemer.tag().kind()], index: Number(redeemer.index().to_str()) },
    redeemer: redeemer.data().to_hex(),
    executionUnits: { memory: Number(redeemer.ex_units().mem().to_str()), cpu: Number(redeemer.ex_units().steps().to_str()) },
  }))
  const labels: Record<string, Json> = {}
  const metadata = fixed.auxiliary_data()?.metadata()
  for (const label of listOf(metadata?.keys())) {
    const datum = metadata!.get(label)
    if (!datum) continue
    const json = metadatumJson(datum)
    labels[label.to_str()] = json === undefined ? { cbor: datum.to_hex() } : { json }
  }
  const auxiliaryHash = body.auxiliary_data_hash()?.to_hex()
  const network = body.network_id()
  return {
    signatories: listOf(witnesses.vkeys()).map(witness => ({ key: toHex(witness.vkey().public_key().as_bytes()), signature: witness.signature().to_hex() })),
    scripts, datums, redeemers,
    metadata: auxiliaryHash && metadata ? { hash: auxiliaryHash, labels } : undefined,
    totalCollateral: body.total_collateral() ? BigInt(body.total_collateral()!.to_str()) : undefined,
    scriptIntegrityHash: body.script_data_hash()?.to_hex(),
    requiredExtraSignatories: listOf(body.required_signers()).map(hash => hash.to_hex()),
    network: network ? (network.kind() === CSL.NetworkIdKind.Mainnet ? 'mainnet' : 'testnet') : undefined,
  }
}

const nonEmpty = <T>(list: T[]) => (list.length ? list : undefined)
const nonEmptyObject = (object: Record<string, unknown>) => (Object.keys(object).length ? object : undefined)

/** A transaction in Ogmios' shape; `cbor` only when asked for (and never for the genesis distribution, which has none). */
export function transaction(tx: LedgerTx, includeCbor: boolean) {
  const extra = tx.cbor ? fromBytes(tx.cbor) : undefined
  const mint: Record<string, Record<string, bigint>> = {}
  for (const [unit, quantity] of tx.mint) (mint[unit.slice(0, 56)] ??= {})[unit.slice(56)] = quantity
  const withdrawals: Record<string, Json> = {}
  for (const { stakeAddress, amount } of tx.withdrawals) withdrawals[stakeAddress] = ada(amount)
  const json = {
    id: tx.hash,
    spends: tx.validContract ? 'inputs' : 'collaterals',
    inputs: tx.inputs.map(outputReference),
    references: nonEmpty(tx.referenceInputs.map(outputReference)),
    collaterals: nonEmpty(tx.collateral.map(outputReference)),
    totalCollateral: extra?.totalCollateral === undefined ? undefined : ada(extra.totalCollateral),
    collateralReturn: tx.collateralReturn ? transactionOutput(tx.collateralReturn) : undefined,
    outputs: tx.outputs.map(transactionOutput),
    certificates: nonEmpty(tx.certificates.map(certificate)),
    withdrawals: nonEmptyObject(withdrawals),
    fee: ada(tx.fee),
    validityInterval: {
      ...(tx.invalidBefore === null ? {} : { invalidBefore: Number(tx.invalidBefore) }),
      ...(tx.invalidHereafter === null ? {} : { invalidAfter: Number(tx.invalidHereafter) }),
    },
    mint: nonEmptyObject(mint),
    network: extra?.network,
    scriptIntegrityHash: extra?.scriptIntegrityHash,
    requiredExtraSignatories: nonEmpty(extra?.requiredExtraSignatories ?? []),
    metadata: extra?.metadata,
    signatories: extra?.signatories ?? [],
    scripts: nonEmptyObject(extra?.scripts ?? {}),
    datums: nonEmptyObject(extra?.datums ?? {}),
    redeemers: nonEmpty(extra?.redeemers ?? []),
    treasury: tx.treasuryDonation > 0n ? { donation: ada(tx.treasuryDonation) } : undefined,
    cbor: includeCbor && tx.cbor ? toHex(tx.cbor) : undefined,
  }
  return json
}

// ---- blocks -------------------------------------------------------------------------------

export const point = (block: Block) => ({ slot: block.slot, id: block.hash })
export const tip = (block: Block) => ({ slot: block.slot, id: block.hash, height: block.height })

/** The cold verification key of a devnet pool: derived from the seed, as its pool id is. */
function coldKey(ledger: Ledger, pool: Pool): string | undefined {
  const index = ledger.genesis.pools.findIndex(p => p.params.hex === pool.hex)
  return index < 0 ? undefined : toHex(deriveKey(ledger.seed, `pool:${index}:cold`).to_public().as_bytes())
}

/**
 * A block as chain synchronisation delivers it. The issuer is the pool that made it: its cold
 * verification key and VRF key (both derived from the devnet's seed), and its operational
 * certificate (counter 0; the devnet's stand-in for the hot key, which it has no KES key for, in
 * `kes.verificationKey`, and the KES period of the slot). The devnet draws no VRF proofs, so
 * `leaderValue` and `nonce` have no proof or output.
 */
export function block(ledger: Ledger, b: Block, includeCbor: boolean) {
  const pool = b.poolHex ? ledger.pools.get(b.poolHex) : undefined
  const verificationKey = pool && coldKey(ledger, pool)
  return {
    type: 'praos',
    era: 'conway',
    id: b.hash,
    ancestor: b.previousBlock ?? 'genesis',
    height: b.height,
    size: { bytes: b.size },
    slot: b.slot,
    transactions: b.txs.map(hash => transaction(ledger.txs.get(hash)!, includeCbor)),
    protocol: { version: { major: ledger.params.protocolMajorVer, minor: ledger.params.protocolMinorVer } },
    issuer: {
      verificationKey: verificationKey ?? '00'.repeat(32),
      vrfVerificationKey: pool ? toHex(pool.vrfKey) : '00'.repeat(32),
      operationalCertificate: {
        count: Number(b.opCertCounter ?? 0),
        kes: { period: Math.floor(b.slot / GENESIS.slotsPerKesPeriod), verificationKey: b.opCert ?? '00'.repeat(32) },
      },
      leaderValue: {},
    },
  }
}

// ---- protocol parameters, genesis, eras ---------------------------------------------------

export function protocolParameters(ledger: Ledger) {
  const p = ledger.params
  const bf = parametersJson(ledger, ledger.latestEpoch)
  return {
    minFeeCoefficient: p.minFeeA,
    minFeeConstant: ada(BigInt(p.minFeeB)),
    // Conway's tiered reference-script fee: base per byte, ×1.2 every 25 KiB.
    minFeeReferenceScripts: { range: 25_600, base: p.minFeeRefScriptCostPerByte, multiplier: 1.2 },
    minUtxoDepositCoefficient: Number(p.coinsPerUtxoByte),
    minUtxoDepositConstant: ada(0n),
    maxBlockBodySize: { bytes: p.maxBlockSize },
    maxBlockHeaderSize: { bytes: p.maxBlockHeaderSize },
    maxTransactionSize: { bytes: p.maxTxSize },
    maxValueSize: { bytes: p.maxValSize },
    maxReferenceScriptsSize: { bytes: 204_800 },
    stakeCredentialDeposit: ada(p.keyDeposit),
    stakePoolDeposit: ada(p.poolDeposit),
    stakePoolRetirementEpochBound: p.eMax,
    stakePoolPledgeInfluence: ratio(p.a0),
    minStakePoolCost: ada(p.minPoolCost),
    desiredNumberOfStakePools: p.nOpt,
    monetaryExpansion: ratio(p.rho),
    treasuryExpansion: ratio(p.tau),
    collateralPercentage: p.collateralPercent,
    maxCollateralInputs: p.maxCollateralInputs,
    plutusCostModels: { 'plutus:v1': p.costModels.PlutusV1, 'plutus:v2': p.costModels.PlutusV2, 'plutus:v3': p.costModels.PlutusV3 },
    scriptExecutionPrices: { memory: ratio(p.priceMem), cpu: ratio(p.priceStep) },
    maxExecutionUnitsPerTransaction: { memory: Number(p.maxTxExMem), cpu: Number(p.maxTxExSteps) },
    maxExecutionUnitsPerBlock: { memory: Number(p.maxBlockExMem), cpu: Number(p.maxBlockExSteps) },
    stakePoolVotingThresholds: {
      noConfidence: ratio(bf.pvt_motion_no_confidence),
      constitutionalCommittee: { default: ratio(bf.pvt_committee_normal), stateOfNoConfidence: ratio(bf.pvt_committee_no_confidence) },
      hardForkInitiation: ratio(bf.pvt_hard_fork_initiation),
      protocolParametersUpdate: { security: ratio(bf.pvt_p_p_security_group) },
    },
    constitutionalCommitteeMinSize: p.committeeMinSize,
    constitutionalCommitteeMaxTermLength: p.committeeMaxTermLength,
    governanceActionLifetime: p.govActionLifetime,
    governanceActionDeposit: ada(p.govActionDeposit),
    delegateRepresentativeVotingThresholds: {
      noConfidence: ratio(bf.dvt_motion_no_confidence),
      constitution: ratio(bf.dvt_update_to_constitution),
      constitutionalCommittee: { default: ratio(bf.dvt_committee_normal), stateOfNoConfidence: ratio(bf.dvt_committee_no_confidence) },
      hardForkInitiation: ratio(bf.dvt_hard_fork_initiation),
      protocolParametersUpdate: {
        network: ratio(bf.dvt_p_p_network_group),
        economic: ratio(bf.dvt_p_p_economic_group),
        technical: ratio(bf.dvt_p_p_technical_group),
        governance: ratio(bf.dvt_p_p_gov_group),
      },
      treasuryWithdrawals: ratio(bf.dvt_treasury_withdrawal),
    },
    delegateRepresentativeDeposit: ada(p.drepDeposit),
    delegateRepresentativeMaxIdleTime: p.drepActivity,
    version: { major: p.protocolMajorVer, minor: p.protocolMinorVer },
  }
}

/** The system start as Ogmios writes UTC times: whole seconds, `Z`. */
export const startTime = (ledger: Ledger) => new Date(ledger.systemStartMs).toISOString().replace(/\.\d{3}Z$/, 'Z')

export function genesisConfiguration(ledger: Ledger, era: string): Json {
  const p = ledger.params
  switch (era) {
    case 'byron':
      // The devnet starts in Conway: the Byron genesis has no keys, delegations, funds or vouchers.
      return {
        era: 'byron', genesisKeyHashes: [], genesisDelegations: {}, startTime: startTime(ledger),
        initialFunds: {}, initialVouchers: {}, securityParameter: ledger.securityParam, networkMagic: GENESIS.networkMagic,
      }
    case 'shelley': {
      const genesisTxs = ledger.genesis.transactions
      const initialFunds: Record<string, Json> = {}
      for (const tx of genesisTxs) for (const output of tx.outputs) {
        const funds = initialFunds[output.address] as { ada: { lovelace: bigint } } | undefined
        initialFunds[output.address] = ada((funds?.ada.lovelace ?? 0n) + output.value.coin)
      }
      const stakePools: Record<string, Json> = {}
      const delegators: Record<string, string> = {}
      for (const tx of genesisTxs) for (const cert of tx.certificates) {
        if (cert.kind === 'pool_registration') stakePools[poolIdOf(cert.pool.hex)] = stakePool(cert.pool)
        if (cert.kind === 'delegation') delegators[stakeCredential(cert.stakeAddress).credential] = poolIdOf(cert.pool)
      }
      return {
        era: 'shelley',
        startTime: startTime(ledger),
        networkMagic: GENESIS.networkMagic,
        network: 'testnet',
        activeSlotsCoefficient: ratio(GENESIS.activeSlotsCoefficient),
        securityParameter: ledger.securityParam,
        epochLength: ledger.epochLength,
        slotsPerKesPeriod: GENESIS.slotsPerKesPeriod,
        maxKesEvolutions: GENESIS.maxKesEvolutions,
        slotLength: { milliseconds: BigInt(ledger.slotLengthMs) },
        updateQuorum: GENESIS.updateQuorum,
        maxLovelaceSupply: GENESIS.maxLovelaceSupply,
        initialParameters: protocolParameters(ledger),
        // No genesis delegates: the devnet's pools make every block.
        initialDelegates: [],
        initialFunds,
        initialStakePools: { stakePools, delegators },
      }
    }
    case 'alonzo': {
      const pp = protocolParameters(ledger)
      return {
        era: 'alonzo',
        updatableParameters: {
          minUtxoDepositCoefficient: pp.minUtxoDepositCoefficient,
          collateralPercentage: pp.collateralPercentage,
          plutusCostModels: { 'plutus:v1': p.costModels.PlutusV1 },
          maxCollateralInputs: pp.maxCollateralInputs,
          maxExecutionUnitsPerBlock: pp.maxExecutionUnitsPerBlock,
          maxExecutionUnitsPerTransaction: pp.maxExecutionUnitsPerTransaction,
          maxValueSize: pp.maxValueSize,
          scriptExecutionPrices: pp.scriptExecutionPrices,
        },
      }
    }
    default: {
      const pp = protocolParameters(ledger)
      return {
        era: 'conway',
        // The devnet has no constitution document and no constitutional committee.
        constitution: { guardrails: null, metadata: { url: '', hash: '00'.repeat(32) } },
        constitutionalCommittee: { members: [], quorum: '0/1' },
        updatableParameters: {
          stakePoolVotingThresholds: pp.stakePoolVotingThresholds,
          constitutionalCommitteeMinSize: pp.constitutionalCommitteeMinSize,
          constitutionalCommitteeMaxTermLength: pp.constitutionalCommitteeMaxTermLength,
          governanceActionLifetime: pp.governanceActionLifetime,
          governanceActionDeposit: pp.governanceActionDeposit,
          delegateRepresentativeVotingThresholds: pp.delegateRepresentativeVotingThresholds,
          delegateRepresentativeDeposit: pp.delegateRepresentativeDeposit,
          delegateRepresentativeMaxIdleTime: pp.delegateRepresentativeMaxIdleTime,
        },
      }
    }
  }
}

const ORIGIN_BOUND = { time: { seconds: 0n }, slot: 0, epoch: 0 }

/** Where the current era (Conway, from slot 0) began. */
export const eraStart = () => ORIGIN_BOUND

/**
 * The hard-fork history: the devnet starts in Conway at slot 0, so Byron to Babbage are empty eras
 * (start = end = origin), as on a test network that forks to Conway at epoch 0. The safe zone is
 * 3k/f slots.
 */
export function eraSummaries(ledger: Ledger) {
  const parameters = {
    epochLength: ledger.epochLength,
    slotLength: { milliseconds: BigInt(ledger.slotLengthMs) },
    safeZone: Math.round((3 * ledger.securityParam) / GENESIS.activeSlotsCoefficient),
  }
  const empty = ['byron', 'shelley', 'allegra', 'mary', 'alonzo', 'babbage'].map(() => ({ start: ORIGIN_BOUND, end: ORIGIN_BOUND, parameters }))
  return [...empty, { start: ORIGIN_BOUND, parameters }]
}
