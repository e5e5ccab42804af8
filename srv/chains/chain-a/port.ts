/**
 * The chain-A port: what the services need from chain A (Cardano), independent of the upstream.
 *
 * Conventions:
 * - Amounts of lovelace and asset quantities are integer strings (they exceed 2^53).
 * - Times are unix seconds; hashes are lowercase hex; addresses and ids are bech32.
 * - A read that finds nothing answers `null` (or an empty list for collections); upstream
 *   failures throw an ApiError (UPSTREAM_UNAVAILABLE 503, UPSTREAM_RATE_LIMITED 429, ...).
 */

/** A native asset amount; `unit` is policy id (56 hex) + asset name (0-64 hex). Never 'lovelace'. */
export interface AssetQuantity {
  unit: string
  quantity: string
}

export interface ChainBlock {
  hash: string
  height: number
  slot: number
  epoch: number
  epochSlot: number
  time: number
  slotLeader: string
  size: number
  txCount: number
  output: string | null
  fees: string | null
  previousBlock: string | null
  confirmations: number
}

export interface ChainEpoch {
  epoch: number
  startTime: number
  endTime: number
  firstBlockTime: number
  lastBlockTime: number
  blockCount: number
  txCount: number
  output: string
  fees: string
  activeStake: string | null
}

export interface ChainProtocolParameters {
  epoch: number
  minFeeA: number
  minFeeB: number
  maxBlockSize: number
  maxTxSize: number
  maxBlockHeaderSize: number
  keyDeposit: string
  poolDeposit: string
  eMax: number
  nOpt: number
  a0: number
  rho: number
  tau: number
  protocolMajorVer: number
  protocolMinorVer: number
  minPoolCost: string
  coinsPerUtxoSize: string
  priceMem: number | null
  priceStep: number | null
  maxTxExMem: string | null
  maxTxExSteps: string | null
  maxBlockExMem: string | null
  maxBlockExSteps: string | null
  maxValSize: string | null
  collateralPercent: number | null
  maxCollateralInputs: number | null
  govActionDeposit: string | null
  drepDeposit: string | null
  minFeeRefScriptCostPerByte: number | null
  /** Cost models as a JSON string (language name -> array or map of costs). */
  costModels: string | null
}

/** What an output holds, wherever it is seen: spent or made by a transaction, or unspent at an address. */
export interface ChainOutputContent {
  address: string
  lovelace: string
  assets: AssetQuantity[]
  dataHash: string | null
  inlineDatum: string | null
  referenceScriptHash: string | null
}

export interface ChainTxInput extends ChainOutputContent {
  txHash: string
  outputIndex: number
  collateral: boolean
  reference: boolean
}

export interface ChainTxOutput extends ChainOutputContent {
  outputIndex: number
  collateral: boolean
  /** Hash of the transaction that spent this output, when the upstream knows it. */
  consumedBy: string | null
}

export interface ChainTxMetadata {
  /** Metadata label as a decimal string (labels are unsigned 64-bit). */
  label: string
  /** The label's value as JSON text. */
  json: string
}

export interface ChainTransaction {
  hash: string
  blockHash: string
  blockHeight: number
  blockTime: number
  slot: number
  index: number
  fee: string
  deposit: string
  size: number
  invalidBefore: string | null
  invalidHereafter: string | null
  validContract: boolean
  inputs: ChainTxInput[]
  outputs: ChainTxOutput[]
  metadata: ChainTxMetadata[]
  assetMintOrBurnCount: number
  withdrawalCount: number
  delegationCount: number
  stakeCertCount: number
  poolUpdateCount: number
  redeemerCount: number
}

export interface ChainAddress {
  address: string
  stakeAddress: string | null
  /** 'byron' or 'shelley' as the upstream reports it. */
  era: string
  script: boolean
  lovelace: string
  assets: AssetQuantity[]
}

export interface ChainUtxo extends ChainOutputContent {
  txHash: string
  outputIndex: number
  blockHash: string
}

export interface ChainAddressTransaction {
  txHash: string
  txIndex: number
  blockHeight: number
  blockTime: number
}

export interface ChainAccount {
  stakeAddress: string
  active: boolean
  activeEpoch: number | null
  controlledAmount: string
  rewardsSum: string
  withdrawalsSum: string
  /** Null where the upstream does not report it (Ogmios): these two, as the pool and network figures below. */
  reservesSum: string | null
  treasurySum: string | null
  withdrawableAmount: string
  poolId: string | null
  drepId: string | null
}

export interface ChainPool {
  poolId: string
  hex: string
  vrfKey: string
  blocksMinted: number
  blocksEpoch: number
  liveStake: string
  /** The pool's share of the live stake; null where the upstream does not report it (Koios). */
  liveSize: number | null
  liveSaturation: number
  liveDelegators: number | null
  /** The stake of the epoch's snapshot; null where the upstream reports only the live stake (Ogmios). */
  activeStake: string | null
  activeSize: number | null
  declaredPledge: string
  livePledge: string
  marginCost: number
  fixedCost: string
  rewardAccount: string
  owners: string[]
  retiring: boolean | null
  ticker: string | null
  name: string | null
  homepage: string | null
  description: string | null
}

/** A registered pool as the pool list reports it: its figures and metadata, without the registration details. */
export interface ChainPoolSummary {
  poolId: string
  hex: string
  activeStake: string | null
  liveStake: string
  liveSaturation: number
  blocksMinted: number
  declaredPledge: string
  marginCost: number
  fixedCost: string
  ticker: string | null
  name: string | null
  homepage: string | null
  description: string | null
}

/** A stake account delegating to a pool or a DRep, with the stake it delegates. */
export interface ChainDelegator {
  stakeAddress: string
  amount: string
}

export interface ChainDrep {
  drepId: string
  hex: string
  amount: string
  hasScript: boolean
  retired: boolean
  expired: boolean
  lastActiveEpoch: number | null
}

export interface ChainAssetHistoryEntry {
  txHash: string
  action: 'minted' | 'burned'
  amount: string
}

export interface ChainNetwork {
  maxSupply: string
  totalSupply: string
  /** Null where the upstream does not report it (Ogmios: it would be a sum over every unspent output). */
  circulatingSupply: string | null
  /** Null where the upstream does not report it (Koios). */
  lockedSupply: string | null
  treasurySupply: string
  reservesSupply: string
  /** Null where the upstream does not report it (Koios). */
  liveStake: string | null
  /** Null where the upstream does not report it (Ogmios). */
  activeStake: string | null
}

export interface ChainGenesis {
  activeSlotsCoefficient: number
  updateQuorum: number
  maxLovelaceSupply: string
  networkMagic: number
  epochLength: number
  systemStart: number
  slotsPerKesPeriod: number
  slotLength: number
  maxKesEvolutions: number
  securityParam: number
}

/** The upstream's largest page of a list. */
export const LIST_PAGE_SIZE = 100

/**
 * One page (from 1) of an upstream list of at most LIST_PAGE_SIZE items, the list read in chain
 * order (`asc`: oldest first) or from its end (`desc`).
 */
export interface ListPage {
  page: number
  order: 'asc' | 'desc'
}

export interface ChainAPort {
  /** Network name this port talks to: 'preprod', 'preview', 'mainnet' or 'devnet'. */
  readonly networkName: string
  tip(): Promise<ChainBlock>
  block(hashOrHeight: string | number): Promise<ChainBlock | null>
  epoch(epoch: number): Promise<ChainEpoch | null>
  latestEpoch(): Promise<ChainEpoch>
  protocolParameters(epoch?: number): Promise<ChainProtocolParameters | null>
  /** A transaction with its inputs, outputs and metadata. */
  transaction(hash: string): Promise<ChainTransaction | null>
  address(address: string): Promise<ChainAddress | null>
  /** Every unspent output at the address (all pages). */
  addressUtxos(address: string): Promise<ChainUtxo[]>
  /** The address's transactions, newest first, at most `limit`. */
  addressTransactions(address: string, limit: number): Promise<ChainAddressTransaction[]>
  assetHistory(unit: string, limit: number): Promise<ChainAssetHistoryEntry[] | null>
  account(stakeAddress: string): Promise<ChainAccount | null>
  pool(poolId: string): Promise<ChainPool | null>
  drep(drepId: string): Promise<ChainDrep | null>
  /** Up to `count` (at most LIST_PAGE_SIZE) epochs after `epoch`, oldest first; empty past the current one. */
  epochsAfter(epoch: number, count: number): Promise<ChainEpoch[]>
  /** Up to `count` (at most LIST_PAGE_SIZE) blocks after the block at `height`, oldest first; empty past the tip. */
  blocksAfter(height: number, count: number): Promise<ChainBlock[]>
  /** Hashes of a block's transactions in block order; null when the block is unknown. */
  blockTransactions(hashOrHeight: string | number, page: ListPage): Promise<string[] | null>
  /** Hashes of an epoch's blocks in chain order; null when the epoch is unknown. */
  epochBlocks(epoch: number, page: ListPage): Promise<string[] | null>
  /** The address's transactions in chain order; empty when the address never appeared on chain. */
  addressTransactionPage(address: string, page: ListPage): Promise<ChainAddressTransaction[]>
  /** Mint and burn events of the asset in chain order; null when it was never minted. */
  assetHistoryPage(unit: string, page: ListPage): Promise<ChainAssetHistoryEntry[] | null>
  /** Registered pools in registration order. */
  pools(page: ListPage): Promise<ChainPoolSummary[]>
  /** Registered DReps in registration order. */
  dreps(page: ListPage): Promise<ChainDrep[]>
  /** The accounts delegating their stake to the pool; null when the pool is unknown. */
  poolDelegators(poolId: string, page: ListPage): Promise<ChainDelegator[] | null>
  /** The accounts delegating their votes to the DRep; null when the DRep is unknown. */
  drepDelegators(drepId: string, page: ListPage): Promise<ChainDelegator[] | null>
  /** The addresses that carry the stake address; null when the account is unknown. */
  accountAddresses(stakeAddress: string, page: ListPage): Promise<string[] | null>
  network(): Promise<ChainNetwork>
  genesis(): Promise<ChainGenesis>
  /** Submits a signed transaction (CBOR bytes); answers its hash. */
  submit(cbor: Uint8Array): Promise<string>
  /**
   * For an upstream whose chain index this process keeps (the ogmios kind): follow the chain from
   * the newest of these points the node knows, unless a block as old is held already. The follower
   * gives its newest indexed blocks when it resumes, so both indexes meet after a restart.
   */
  followFrom?(points: { slot: number; hash: string }[]): Promise<void>
  /** How far back the upstream's history reaches, when not to the chain's start: said in a not-found answer. */
  coverage?(): string | undefined
}
