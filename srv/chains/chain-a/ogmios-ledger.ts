import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { ApiError } from '../../lib/errors.ts'
import { decodeAddress } from './csl.ts'
import type { KupoClient } from './kupo.ts'
import { OgmiosRpcError, type OgmiosRpc } from './ogmios-rpc.ts'
import { LIST_PAGE_SIZE } from './port.ts'
import type {
  ChainAccount,
  ChainAddress,
  ChainDelegator,
  ChainDrep,
  ChainGenesis,
  ChainNetwork,
  ChainPool,
  ChainPoolSummary,
  ChainProtocolParameters,
  ChainUtxo,
  ListPage,
} from './port.ts'
import { UpstreamCalls } from './upstream-calls.ts'
import { upstreamStatusError } from './upstream-errors.ts'
import { assetList } from './value.ts'

/**
 * The ledger-state reads of the chain-A port over Ogmios v6 (JSON-RPC: protocol parameters, stake
 * pools, reward accounts, DReps, treasury and reserves, genesis and submission) and
 * Kupo (outputs by address and by stake credential), with the figures only the chain-sync index
 * knows (blocks per pool, withdrawals, an account's active epoch).
 *
 * What neither Ogmios nor Kupo reports is null where the port allows it: pool metadata (ticker,
 * name, homepage, description: off-chain), a DRep's last active epoch (Ogmios gives its mandate,
 * which the ledger also extends over dormant epochs), the supply locked in scripts, and the figures
 * that cannot be summed from them at a bearable cost: a pool's active stake and share (the epoch's
 * snapshot), its live delegator count and pending retirement, the total active stake, the
 * circulating supply (a sum over the whole UTxO set) and an account's MIR sums.
 *
 * Ogmios answers the ledger state at its tip only, so `protocolParameters(epoch)` knows the
 * current epoch's parameters and answers null for any other epoch. Ogmios lists pools and DReps
 * by their key (hash) order, not by registration: the lists are given in that order, by hex id.
 */

/** What the chain-sync index answers: figures Ogmios does not report. */
export interface IndexFigures {
  poolBlockCounts(poolId: string, epoch: number): { total: number; epoch: number }
  accountTotals(stakeAddress: string): { withdrawalsSum: string; activeEpoch: number | null }
  currentEpoch(): Promise<number>
}

export interface OgmiosLedgerOptions {
  rpc: OgmiosRpc
  kupo: KupoClient
  network: string
  figures: IndexFigures
  /** Further tries of a read whose connection failed or timed out (never of a submission); none by default. */
  retries?: number
}

// ---- Ogmios's JSON ---------------------------------------------------------------------------

/** Integers beyond 2^53 arrive as bigint. */
type Integer = number | bigint
interface Ada { ada: { lovelace: Integer } }
interface Bytes { bytes: Integer }
interface Budget { memory: Integer; cpu: Integer }
type Origin = 'verificationKey' | 'script'

interface OgmiosParameters {
  minFeeCoefficient: Integer
  minFeeConstant: Ada
  minFeeReferenceScripts?: { range: number; base: number; multiplier: number }
  minUtxoDepositCoefficient: Integer
  maxBlockBodySize: Bytes
  maxBlockHeaderSize: Bytes
  maxTransactionSize?: Bytes
  maxValueSize?: Bytes
  stakeCredentialDeposit: Ada
  stakePoolDeposit: Ada
  stakePoolRetirementEpochBound: Integer
  stakePoolPledgeInfluence: string
  minStakePoolCost: Ada
  desiredNumberOfStakePools: Integer
  monetaryExpansion: string
  treasuryExpansion: string
  collateralPercentage?: Integer
  maxCollateralInputs?: Integer
  plutusCostModels?: Record<string, Integer[]>
  scriptExecutionPrices?: { memory: string; cpu: string }
  maxExecutionUnitsPerTransaction?: Budget
  maxExecutionUnitsPerBlock?: Budget
  governanceActionDeposit?: Ada
  delegateRepresentativeDeposit?: Ada
  version: { major: number; minor: number }
}

interface OgmiosPool {
  id: string
  vrfVerificationKeyHash: string
  owners: string[]
  cost: Ada
  margin: string
  pledge: Ada
  rewardAccount: string
  stake?: Ada
}

type DrepChoice = { type: 'registered'; id: string; from: Origin } | { type: 'abstain' } | { type: 'noConfidence' }

interface RewardAccountSummary {
  credential: string
  from: Origin
  stakePool?: { id: string }
  delegateRepresentative?: DrepChoice
  rewards: Ada
  deposit: Ada
}

type DrepSummary =
  | { type: 'registered'; id: string; from: Origin; mandate: { epoch: number }; deposit: Ada; stake: Ada; delegators?: { credential: string; from: Origin }[] }
  | { type: 'abstain' | 'noConfidence'; stake: Ada }
type RegisteredDrep = Extract<DrepSummary, { type: 'registered' }>

interface ShelleyGenesis {
  startTime: string
  networkMagic: number
  activeSlotsCoefficient: string
  securityParameter: Integer
  epochLength: Integer
  slotsPerKesPeriod: Integer
  maxKesEvolutions: Integer
  slotLength: { milliseconds: Integer }
  updateQuorum: Integer
  maxLovelaceSupply: Integer
}

interface Pots { treasury: Ada; reserves: Ada }


const lovelace = (amount: Ada | undefined) => BigInt(amount?.ada.lovelace ?? 0)
const text = (value: Integer | undefined) => (value === undefined ? null : String(value))
const numberOrNull = (value: Integer | undefined) => (value === undefined ? null : Number(value))

/** Ogmios's exact ratios (`n/d`) as numbers. */
function ratio(value: string): number {
  const [numerator, denominator = '1'] = value.split('/')
  return Number(numerator) / Number(denominator)
}

// ---- the reads ---------------------------------------------------------------------------------

export class OgmiosLedgerReads {
  private readonly rpc: OgmiosRpc
  private readonly kupo: KupoClient
  private readonly networkId: number
  private readonly figures: IndexFigures
  private readonly calls: UpstreamCalls
  private genesisConfiguration: Promise<ShelleyGenesis> | undefined

  constructor(options: OgmiosLedgerOptions) {
    this.rpc = options.rpc
    this.kupo = options.kupo
    this.networkId = options.network === 'mainnet' ? 1 : 0
    this.figures = options.figures
    // The connection's failures are ApiErrors already; a refused query is turned into one by `query`.
    this.calls = new UpstreamCalls(options.retries ?? 0, error => error)
  }

  /** The current epoch's parameters; Ogmios has no other epoch's, so another epoch answers null. */
  async protocolParameters(epoch?: number): Promise<ChainProtocolParameters | null> {
    const [current, parameters] = await Promise.all([this.figures.currentEpoch(), this.query<OgmiosParameters>('queryLedgerState/protocolParameters')])
    if (epoch !== undefined && epoch !== current) return null
    return toProtocolParameters(parameters, current)
  }

  async address(address: string): Promise<ChainAddress | null> {
    const parsed = decodeAddress(address)
    if (!parsed) return null
    const value = await this.kupo.balance(address)
    if (value.coin === 0n && !(await this.kupo.seen(address))) return null
    const byron = Boolean(CSL.ByronAddress.from_address(parsed))
    return {
      address,
      stakeAddress: byron ? null : stakeAddressOfBase(parsed),
      era: byron ? 'byron' : 'shelley',
      script: parsed.payment_cred()?.kind() === CSL.CredKind.Script,
      lovelace: String(value.coin),
      assets: assetList(value.assets),
    }
  }

  async addressUtxos(address: string): Promise<ChainUtxo[]> {
    return this.kupo.utxos(address)
  }

  async account(stakeAddress: string): Promise<ChainAccount | null> {
    const credential = stakeCredentialOf(stakeAddress)
    if (!credential) return null
    const [[summary], unspent] = await Promise.all([
      this.query<RewardAccountSummary[]>('queryLedgerState/rewardAccountSummaries', { [credential.script ? 'scripts' : 'keys']: [credential.hash] }),
      this.kupo.balance(`*/${credential.hash}`),
    ])
    const totals = this.figures.accountTotals(stakeAddress)
    const known = summary || unspent.coin > 0n || totals.activeEpoch !== null || BigInt(totals.withdrawalsSum) > 0n || (await this.kupo.seen(`*/${credential.hash}`))
    if (!known) return null
    const rewards = lovelace(summary?.rewards)
    return {
      stakeAddress,
      active: summary !== undefined,
      activeEpoch: totals.activeEpoch,
      controlledAmount: String(unspent.coin + rewards),
      // Rewards only land in a registered account and leave it only by withdrawal (deregistering needs an empty one).
      rewardsSum: String(rewards + BigInt(totals.withdrawalsSum)),
      withdrawalsSum: totals.withdrawalsSum,
      reservesSum: null,
      treasurySum: null,
      withdrawableAmount: String(rewards),
      poolId: summary?.stakePool?.id ?? null,
      drepId: summary?.delegateRepresentative ? drepLabel(summary.delegateRepresentative) : null,
    }
  }

  async pool(poolId: string): Promise<ChainPool | null> {
    const id = canonicalPoolId(poolId)
    if (!id) return null
    const pools = await this.stakePools()
    const pool = pools.find(candidate => candidate.id === id)
    if (!pool) return null
    const [epoch, saturationPoint, livePledge] = await Promise.all([this.figures.currentEpoch(), this.saturationPoint(), this.controlledStake(pool.owners)])
    const blocks = this.figures.poolBlockCounts(pool.id, epoch)
    const liveStake = lovelace(pool.stake)
    const totalLiveStake = pools.reduce((sum, other) => sum + lovelace(other.stake), 0n)
    return {
      poolId: pool.id,
      hex: poolHex(pool.id),
      vrfKey: pool.vrfVerificationKeyHash,
      blocksMinted: blocks.total,
      blocksEpoch: blocks.epoch,
      liveStake: String(liveStake),
      liveSize: totalLiveStake > 0n ? Number(liveStake) / Number(totalLiveStake) : 0,
      liveSaturation: saturation(liveStake, saturationPoint),
      liveDelegators: null,
      activeStake: null,
      activeSize: null,
      declaredPledge: String(lovelace(pool.pledge)),
      livePledge: String(livePledge),
      marginCost: ratio(pool.margin),
      fixedCost: String(lovelace(pool.cost)),
      rewardAccount: pool.rewardAccount,
      owners: pool.owners.map(owner => this.stakeAddressOfKey(owner)),
      retiring: null,
      ...NO_POOL_METADATA,
    }
  }

  /** The registered pools, by hex id (Ogmios's order; it does not know the registration order). */
  async pools(page: ListPage): Promise<ChainPoolSummary[]> {
    const [pools, epoch, saturationPoint] = await Promise.all([this.stakePools(), this.figures.currentEpoch(), this.saturationPoint()])
    const ordered = pools.sort((a, b) => compareText(poolHex(a.id), poolHex(b.id)))
    return pageOf(ordered, page).map(pool => ({
      poolId: pool.id,
      hex: poolHex(pool.id),
      activeStake: null,
      liveStake: String(lovelace(pool.stake)),
      liveSaturation: saturation(lovelace(pool.stake), saturationPoint),
      blocksMinted: this.figures.poolBlockCounts(pool.id, epoch).total,
      declaredPledge: String(lovelace(pool.pledge)),
      marginCost: ratio(pool.margin),
      fixedCost: String(lovelace(pool.cost)),
      ...NO_POOL_METADATA,
    }))
  }

  /** A registered DRep; null for one that retired (Ogmios lists registered DReps only) or never registered. */
  async drep(drepId: string): Promise<ChainDrep | null> {
    const credential = drepCredentialOf(drepId)
    if (!credential) return null
    const [summaries, epoch] = await Promise.all([
      this.query<DrepSummary[]>('queryLedgerState/delegateRepresentatives', { [credential.script ? 'scripts' : 'keys']: [credential.hash] }),
      this.figures.currentEpoch(),
    ])
    const found = summaries.find(isRegistered)
    return found ? toDrep(found, epoch) : null
  }

  /**
   * The accounts delegating their votes to a registered DRep, as the ledger has them (all of them,
   * whenever they delegated), by stake address; each one's amount is what it controls: its unspent
   * outputs (Kupo) and its rewards. Null for a DRep Ogmios does not list.
   */
  async drepDelegators(drepId: string, page: ListPage): Promise<ChainDelegator[] | null> {
    const credential = drepCredentialOf(drepId)
    if (!credential) return null
    const summaries = await this.query<DrepSummary[]>('queryLedgerState/delegateRepresentatives', { [credential.script ? 'scripts' : 'keys']: [credential.hash] })
    const found = summaries.find(isRegistered)
    if (!found) return null
    const delegators = (found.delegators ?? []).map(delegator => ({ ...delegator, stakeAddress: this.stakeAddressOf(delegator.credential, delegator.from === 'script') }))
    const wanted = pageOf(delegators.sort((a, b) => compareText(a.stakeAddress, b.stakeAddress)), page)
    if (!wanted.length) return []
    const byKind = (script: boolean) => wanted.filter(delegator => (delegator.from === 'script') === script).map(delegator => delegator.credential)
    const [summariesOfPage, ...balances] = await Promise.all([
      this.query<RewardAccountSummary[]>('queryLedgerState/rewardAccountSummaries', { keys: byKind(false), scripts: byKind(true) }),
      ...wanted.map(delegator => this.kupo.balance(`*/${delegator.credential}`)),
    ])
    const rewards = new Map(summariesOfPage.map(summary => [summary.credential, lovelace(summary.rewards)]))
    return wanted.map((delegator, i) => ({ stakeAddress: delegator.stakeAddress, amount: String(balances[i].coin + (rewards.get(delegator.credential) ?? 0n)) }))
  }

  /** The registered DReps, by hex id (Ogmios's order; it does not know the registration order). */
  async dreps(page: ListPage): Promise<ChainDrep[]> {
    const [summaries, epoch] = await Promise.all([this.query<DrepSummary[]>('queryLedgerState/delegateRepresentatives'), this.figures.currentEpoch()])
    const ordered = summaries.filter(isRegistered).sort((a, b) => compareText(a.id, b.id))
    return pageOf(ordered, page).map(drep => toDrep(drep, epoch))
  }

  async network(): Promise<ChainNetwork> {
    const [genesis, pots, pools] = await Promise.all([this.shelleyGenesis(), this.query<Pots>('queryLedgerState/treasuryAndReserves'), this.stakePools()])
    const maxSupply = BigInt(genesis.maxLovelaceSupply)
    const reserves = lovelace(pots.reserves)
    return {
      maxSupply: String(maxSupply),
      totalSupply: String(maxSupply - reserves),
      circulatingSupply: null,
      lockedSupply: null,
      treasurySupply: String(lovelace(pots.treasury)),
      reservesSupply: String(reserves),
      liveStake: String(pools.reduce((sum, pool) => sum + lovelace(pool.stake), 0n)),
      activeStake: null,
    }
  }

  async genesis(): Promise<ChainGenesis> {
    return toGenesis(await this.shelleyGenesis())
  }

  /** Submits a signed transaction; a ledger rejection is 400 TX_REJECTED, a connection lost meanwhile 503 SUBMIT_UNCONFIRMED. */
  async submit(cbor: Uint8Array): Promise<string> {
    const submitted = await this.calls.call('submit', () => this.rpc.request<{ transaction?: { id?: unknown } }>('submitTransaction', { transaction: { cbor: hex(cbor) } }).catch(error => {
      throw submissionError(error)
    }))
    const id = submitted?.transaction?.id
    if (typeof id !== 'string') throw new ApiError(503, 'UPSTREAM_UNAVAILABLE', 'chain-A upstream (Ogmios) accepted the transaction but answered no transaction hash')
    return id
  }

  /** One ledger-state query; an error answer becomes 503 UPSTREAM_UNAVAILABLE naming the query. */
  private query<T>(method: string, params?: Record<string, unknown>): Promise<T> {
    return this.calls.call('read', () => this.rpc.request<T>(method, params).catch(error => {
      throw error instanceof OgmiosRpcError ? new ApiError(503, 'UPSTREAM_UNAVAILABLE', `chain-A upstream (Ogmios) refused ${method}: ${error.code} ${error.message}`) : error
    }))
  }

  /** Every registered pool with its live stake. */
  private async stakePools(): Promise<OgmiosPool[]> {
    return Object.values(await this.query<Record<string, OgmiosPool>>('queryLedgerState/stakePools', { includeStake: true }))
  }

  /** The Shelley genesis configuration: it never changes, so it is asked for once. */
  private shelleyGenesis(): Promise<ShelleyGenesis> {
    this.genesisConfiguration ??= this.query<ShelleyGenesis>('queryNetwork/genesisConfiguration', { era: 'shelley' }).catch(error => {
      this.genesisConfiguration = undefined
      throw error
    })
    return this.genesisConfiguration
  }

  /** The stake at which a pool saturates: the supply out of the reserves shared by the desired number of pools. */
  private async saturationPoint(): Promise<number> {
    const [genesis, pots, parameters] = await Promise.all([
      this.shelleyGenesis(),
      this.query<Pots>('queryLedgerState/treasuryAndReserves'),
      this.query<OgmiosParameters>('queryLedgerState/protocolParameters'),
    ])
    return Number(BigInt(genesis.maxLovelaceSupply) - lovelace(pots.reserves)) / Number(parameters.desiredNumberOfStakePools)
  }

  /** What the stake keys control together: their unspent outputs (Kupo) and their rewards (Ogmios). */
  private async controlledStake(keyHashes: string[]): Promise<bigint> {
    if (!keyHashes.length) return 0n
    const [summaries, ...balances] = await Promise.all([
      this.query<RewardAccountSummary[]>('queryLedgerState/rewardAccountSummaries', { keys: keyHashes }),
      ...keyHashes.map(hash => this.kupo.balance(`*/${hash}`)),
    ])
    const rewards = summaries.reduce((sum, summary) => sum + lovelace(summary.rewards), 0n)
    return balances.reduce((sum, balance) => sum + balance.coin, rewards)
  }

  private stakeAddressOfKey(keyHash: string): string {
    return this.stakeAddressOf(keyHash, false)
  }

  private stakeAddressOf(hash: string, script: boolean): string {
    const credential = script ? CSL.Credential.from_scripthash(CSL.ScriptHash.from_hex(hash)) : CSL.Credential.from_keyhash(CSL.Ed25519KeyHash.from_hex(hash))
    return CSL.RewardAddress.new(this.networkId, credential).to_address().to_bech32()
  }
}

// ---- mappings ------------------------------------------------------------------------------------

const NO_POOL_METADATA = { ticker: null, name: null, homepage: null, description: null }

/** Ogmios names the Plutus languages `plutus:v1`…; the port, as Blockfrost, `PlutusV1`…. */
const LANGUAGES: Record<string, string> = { 'plutus:v1': 'PlutusV1', 'plutus:v2': 'PlutusV2', 'plutus:v3': 'PlutusV3' }

function costModelsJson(models: Record<string, Integer[]> | undefined): string | null {
  if (!models) return null
  return JSON.stringify(Object.fromEntries(Object.entries(models).map(([language, costs]) => [LANGUAGES[language] ?? language, costs.map(Number)])))
}

function toProtocolParameters(p: OgmiosParameters, epoch: number): ChainProtocolParameters {
  return {
    epoch,
    minFeeA: Number(p.minFeeCoefficient),
    minFeeB: Number(lovelace(p.minFeeConstant)),
    maxBlockSize: Number(p.maxBlockBodySize.bytes),
    maxTxSize: Number(p.maxTransactionSize?.bytes ?? 0),
    maxBlockHeaderSize: Number(p.maxBlockHeaderSize.bytes),
    keyDeposit: String(lovelace(p.stakeCredentialDeposit)),
    poolDeposit: String(lovelace(p.stakePoolDeposit)),
    eMax: Number(p.stakePoolRetirementEpochBound),
    nOpt: Number(p.desiredNumberOfStakePools),
    a0: ratio(p.stakePoolPledgeInfluence),
    rho: ratio(p.monetaryExpansion),
    tau: ratio(p.treasuryExpansion),
    protocolMajorVer: p.version.major,
    protocolMinorVer: p.version.minor,
    minPoolCost: String(lovelace(p.minStakePoolCost)),
    coinsPerUtxoSize: String(p.minUtxoDepositCoefficient),
    priceMem: p.scriptExecutionPrices ? ratio(p.scriptExecutionPrices.memory) : null,
    priceStep: p.scriptExecutionPrices ? ratio(p.scriptExecutionPrices.cpu) : null,
    maxTxExMem: text(p.maxExecutionUnitsPerTransaction?.memory),
    maxTxExSteps: text(p.maxExecutionUnitsPerTransaction?.cpu),
    maxBlockExMem: text(p.maxExecutionUnitsPerBlock?.memory),
    maxBlockExSteps: text(p.maxExecutionUnitsPerBlock?.cpu),
    maxValSize: text(p.maxValueSize?.bytes),
    collateralPercent: numberOrNull(p.collateralPercentage),
    maxCollateralInputs: numberOrNull(p.maxCollateralInputs),
    govActionDeposit: p.governanceActionDeposit ? String(lovelace(p.governanceActionDeposit)) : null,
    drepDeposit: p.delegateRepresentativeDeposit ? String(lovelace(p.delegateRepresentativeDeposit)) : null,
    minFeeRefScriptCostPerByte: p.minFeeReferenceScripts?.base ?? null,
    costModels: costModelsJson(p.plutusCostModels),
  }
}

function toGenesis(genesis: ShelleyGenesis): ChainGenesis {
  return {
    activeSlotsCoefficient: ratio(genesis.activeSlotsCoefficient),
    updateQuorum: Number(genesis.updateQuorum),
    maxLovelaceSupply: String(genesis.maxLovelaceSupply),
    networkMagic: genesis.networkMagic,
    epochLength: Number(genesis.epochLength),
    systemStart: Math.floor(Date.parse(genesis.startTime) / 1000),
    slotsPerKesPeriod: Number(genesis.slotsPerKesPeriod),
    slotLength: Number(genesis.slotLength.milliseconds) / 1000,
    maxKesEvolutions: Number(genesis.maxKesEvolutions),
    securityParam: Number(genesis.securityParameter),
  }
}

const isRegistered = (summary: DrepSummary): summary is RegisteredDrep => summary.type === 'registered'

/** A DRep's id as Blockfrost gives it: CIP-105 bech32 of its key (`drep1…`) or script (`drep_script1…`) hash. */
function drepIdOf(hash: string, script: boolean): string {
  return script ? CSL.ScriptHash.from_hex(hash).to_bech32('drep_script') : CSL.Ed25519KeyHash.from_hex(hash).to_bech32('drep')
}

function drepLabel(choice: DrepChoice): string {
  if (choice.type === 'abstain') return 'drep_always_abstain'
  if (choice.type === 'noConfidence') return 'drep_always_no_confidence'
  return drepIdOf(choice.id, choice.from === 'script')
}

/** A DRep counts as active through its mandate's epoch. */
function toDrep(drep: RegisteredDrep, currentEpoch: number): ChainDrep {
  return {
    drepId: drepIdOf(drep.id, drep.from === 'script'),
    hex: drep.id,
    amount: String(lovelace(drep.stake)),
    hasScript: drep.from === 'script',
    retired: false,
    expired: currentEpoch > drep.mandate.epoch,
    lastActiveEpoch: null,
  }
}

const saturation = (stake: bigint, saturationPoint: number) => (saturationPoint > 0 ? Number(stake) / saturationPoint : 0)

// ---- errors --------------------------------------------------------------------------------------

/** Submission errors (3000–3999) and undecodable bytes (-32602) are the ledger's verdict; other codes are Ogmios's trouble. */
const isVerdict = (code: number) => code === -32602 || (code >= 3000 && code < 4000)

/** JSON of an error's data, integers beyond 2^53 written as digits. */
const dataText = (data: unknown) => (data === undefined || data === null ? '' : ` ${JSON.stringify(data, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value)).slice(0, 1000)}`)

function submissionError(error: unknown): unknown {
  if (!(error instanceof OgmiosRpcError)) return error
  if (isVerdict(error.code)) return upstreamStatusError(400, 'submit', `${error.message}${dataText(error.data)}`)
  return new ApiError(503, 'UPSTREAM_UNAVAILABLE', `chain-A upstream (Ogmios) could not take the transaction: ${error.code} ${error.message}`)
}

// ---- identifiers ---------------------------------------------------------------------------------

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')
const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const poolHex = (poolId: string) => CSL.Ed25519KeyHash.from_bech32(poolId).to_hex()

/** A pool id (bech32 or hex) as Ogmios names pools: bech32; undefined when malformed. */
function canonicalPoolId(poolId: string): string | undefined {
  try {
    return /^[0-9a-fA-F]{56}$/.test(poolId) ? CSL.Ed25519KeyHash.from_hex(poolId.toLowerCase()).to_bech32('pool') : CSL.Ed25519KeyHash.from_bech32(poolId).to_bech32('pool')
  } catch {
    return undefined
  }
}

interface Credential { hash: string; script: boolean }

function credentialOf(credential: CSL.Credential): Credential {
  const key = credential.to_keyhash()
  return key ? { hash: key.to_hex(), script: false } : { hash: credential.to_scripthash()!.to_hex(), script: true }
}

function stakeCredentialOf(stakeAddress: string): Credential | undefined {
  const address = decodeAddress(stakeAddress)
  const reward = address && CSL.RewardAddress.from_address(address)
  return reward ? credentialOf(reward.payment_cred()) : undefined
}

/** A DRep id in any bech32 form (CIP-105 or CIP-129) or a key hash in hex; undefined when malformed. */
function drepCredentialOf(drepId: string): Credential | undefined {
  if (/^[0-9a-fA-F]{56}$/.test(drepId)) return { hash: drepId.toLowerCase(), script: false }
  try {
    const drep = CSL.DRep.from_bech32(drepId)
    const key = drep.to_key_hash()
    if (key) return { hash: key.to_hex(), script: false }
    const script = drep.to_script_hash()
    return script ? { hash: script.to_hex(), script: true } : undefined
  } catch {
    return undefined
  }
}

/** The stake address a base address carries; null for other addresses. */
function stakeAddressOfBase(address: CSL.Address): string | null {
  const base = CSL.BaseAddress.from_address(address)
  return base ? CSL.RewardAddress.new(address.network_id(), base.stake_cred()).to_address().to_bech32() : null
}

/** One page of a list held whole, in the port's order. */
function pageOf<T>(items: T[], { page, order }: ListPage): T[] {
  const ordered = order === 'asc' ? items : [...items].reverse()
  return ordered.slice((page - 1) * LIST_PAGE_SIZE, page * LIST_PAGE_SIZE)
}
