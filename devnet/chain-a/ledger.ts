import { refOf } from '../../srv/chains/chain-a/csl.ts'
import { assetFingerprint, bech32, blake2b256, blake2b256Hex, fromHex, seededRandom, toHex } from './crypto.ts'
import { drepIdOf, poolIdOf } from './addresses.ts'
import { LedgerRuleError } from './decode.ts'
import { buildGenesis, type Genesis } from './genesis.ts'
import { PendingView } from './mempool.ts'
import { GENESIS, PROTOCOL_PARAMETERS, type ProtocolParameters } from './params.ts'
import { createdOutputs, spentRefs, type Block, type Certificate, type Inclusion, type LedgerTx, type Output, type PoolParams, type TxRecord } from './types.ts'
import type { SlotConfig } from '../../srv/chains/chain-a/plutus.ts'
import type { AccountState, LedgerView, ValidationContext } from './candidate.ts'
import { validateTransaction } from './validate.ts'

/**
 * The devnet's ledger: UTxO set, transactions, blocks, epochs, stake accounts, pools, DReps,
 * native assets and metadata, all derived from applying validated transactions in block order.
 *
 * Time: slot = floor((now - systemStart) / slotLength). A new block takes the clock's slot, or the
 * tip's slot + 1 when blocks are requested faster than slots pass (tests). Transactions are
 * validated at that same "next block" slot, and re-validated when a block is built.
 */

export interface LedgerOptions {
  seed: string
  wallets: number
  slotLengthMs: number
  epochLength: number
  securityParam: number
  /** Unix milliseconds of slot 0 (whole seconds). */
  systemStartMs: number
  /** Mixed into the genesis transaction hashes, so that chains from the same seed share no transaction hash. */
  genesisNonce?: string
}

/** Told of every accepted submission and every produced block, e.g. to keep the chain on disk. */
export interface LedgerJournal {
  submitted(tx: LedgerTx): void
  produced(block: Block): void
}

export interface RewardEntry { epoch: number; amount: bigint; pool: string; type: 'leader' | 'member' }
export interface DelegationEntry { activeEpoch: number; txHash: string; amount: bigint; pool: string; txSlot: number; blockTime: number; blockHeight: number }

export interface Account {
  stakeAddress: string
  registered: boolean
  deposit: bigint
  pool: string | null
  drep: string | null
  activeEpoch: number | null
  rewards: bigint
  rewardsSum: bigint
  withdrawalsSum: bigint
  rewardHistory: RewardEntry[]
  delegations: DelegationEntry[]
  addresses: Set<string>
}

export interface Pool extends PoolParams {
  id: string
  vrfKey: Uint8Array
  registrations: string[]
  retirements: string[]
  blocks: string[]
  blocksEpoch: number
}

export interface Drep {
  hex: string
  id: string
  deposit: bigint
  registeredEpoch: number
  lastActiveEpoch: number
}

export interface AssetState {
  unit: string
  policyId: string
  nameHex: string
  fingerprint: string
  quantity: bigint
  initialMintTx: string
  history: { txHash: string; action: 'minted' | 'burned'; amount: bigint }[]
  txs: string[]
  onchainMetadata: Record<string, unknown> | null
  onchainStandard: 'CIP25v1' | 'CIP25v2' | null
}

export interface EpochState {
  epoch: number
  blocks: string[]
  txCount: number
  output: bigint
  fees: bigint
  /** Active stake snapshot taken when the epoch began: delegated stake per account and per pool. */
  stake: Map<string, { pool: string; amount: bigint }>
  poolStake: Map<string, bigint>
  activeStake: bigint
  nonce: string
  /** Where the lovelace sat when the epoch began (its first block not yet applied). */
  totals: EpochTotals
}

/** The pots at an epoch's start: what Koios' `/totals` reports per epoch. */
export interface EpochTotals {
  circulation: bigint
  treasury: bigint
  rewards: bigint
  reserves: bigint
  fees: bigint
  depositsStake: bigint
  depositsDrep: bigint
}

interface AddressHistory {
  outputs: string[]
  txs: string[]
}

/** Where the lovelace of the maximum supply sits; the parts always add up to the maximum supply. */
interface Pots {
  reserves: bigint
  treasury: bigint
  /** Fees of the current epoch, paid out at its end. */
  fees: bigint
  deposits: bigint
}

const HEADER_FIELDS_SIZE = 8 + 8 + 32 + 28 + 32 + 32

export class Ledger implements LedgerView {
  readonly params: ProtocolParameters = PROTOCOL_PARAMETERS
  readonly seed: string
  readonly slotLengthMs: number
  readonly epochLength: number
  readonly securityParam: number
  readonly systemStartMs: number
  readonly genesis: Genesis
  journal: LedgerJournal | undefined

  readonly outputs = new Map<string, Output>()
  readonly txs = new Map<string, TxRecord>()
  readonly blocks: Block[] = []
  readonly epochs = new Map<number, EpochState>()
  readonly accounts = new Map<string, Account>()
  readonly pools = new Map<string, Pool>()
  readonly dreps = new Map<string, Drep>()
  readonly assets = new Map<string, AssetState>()
  readonly labels = new Map<string, string[]>()
  readonly addresses = new Map<string, AddressHistory>()
  readonly pots: Pots = { reserves: 0n, treasury: 0n, fees: 0n, deposits: 0n }
  /** Lovelace in unspent outputs, and the part of it locked at script addresses. */
  utxoCoin = 0n
  scriptLockedCoin = 0n

  private readonly blockHeights = new Map<string, number>()
  private readonly unspentByAddress = new Map<string, Set<string>>()
  private readonly unspentByStake = new Map<string, Set<string>>()
  private readonly unspentByAsset = new Map<string, Set<string>>()
  private mempool: LedgerTx[] = []
  private pending: PendingView
  private readonly options: LedgerOptions
  /** The slot of the newest block a rollback removed: the blocks of the fork come after it. */
  private rolledBackSlot = -1

  constructor(options: LedgerOptions) {
    this.options = options
    this.seed = options.seed
    this.slotLengthMs = options.slotLengthMs
    this.epochLength = options.epochLength
    this.securityParam = options.securityParam
    this.systemStartMs = options.systemStartMs
    this.genesis = buildGenesis(options.seed, options.wallets, options.genesisNonce)
    this.pending = new PendingView(this)
    this.applyGenesis()
  }

  // ---- LedgerView -------------------------------------------------------------------------

  output(ref: string) {
    const output = this.outputs.get(ref)
    return output && !output.spentBy ? output : undefined
  }

  account(stakeAddress: string): AccountState | undefined {
    const account = this.accounts.get(stakeAddress)
    return account && { registered: account.registered, deposit: account.deposit, rewards: account.rewards, drep: account.drep }
  }

  poolRegistered(hex: string) {
    return this.pools.has(hex)
  }

  drepRegistered(key: string) {
    return this.dreps.has(key)
  }

  transactionLocation(hash: string) {
    return this.txs.has(hash) ? 'chain' as const : undefined
  }

  // ---- time -------------------------------------------------------------------------------

  get tip(): Block {
    return this.blocks[this.blocks.length - 1]
  }

  get systemStart(): number {
    return this.systemStartMs / 1000
  }

  clockSlot(now = Date.now()): number {
    return Math.max(0, Math.floor((now - this.systemStartMs) / this.slotLengthMs))
  }

  /** The slot of the next block, which is also the slot transactions are validated at. */
  nextSlot(): number {
    return Math.max(this.clockSlot(), this.tip.slot + 1, this.rolledBackSlot + 1)
  }

  slotTime(slot: number): number {
    return this.systemStart + Math.floor((slot * this.slotLengthMs) / 1000)
  }

  epochOf(slot: number): number {
    return Math.floor(slot / this.epochLength)
  }

  // ---- transactions and blocks ------------------------------------------------------------

  /** Validates a transaction against the ledger plus the mempool and queues it; answers its hash. */
  submit(bytes: Uint8Array): string {
    const tx = validateTransaction(bytes, this.validationContext(this.pending, this.nextSlot()))
    // Journaled first: a transaction that could not be kept is not accepted either.
    this.journal?.submitted(tx)
    this.mempool.push(tx)
    this.pending.record(tx)
    return tx.hash
  }

  validationContext(view: LedgerView, slot: number): ValidationContext {
    return { view, slot, params: this.params, slotConfig: this.slotConfig }
  }

  /** Slot-to-time conversion for script contexts: slot 0 is the system start. */
  get slotConfig(): SlotConfig {
    return { zeroTimeMs: this.systemStartMs, zeroSlot: 0, slotLengthMs: this.slotLengthMs }
  }

  /** Transactions accepted but not yet in a block, in arrival order. */
  mempoolTransactions(): readonly LedgerTx[] {
    return this.mempool
  }

  /** The ledger with pending transactions applied (what wallets build on). */
  get pendingView(): PendingView {
    return this.pending
  }

  produceBlock(): Block {
    const slot = this.nextSlot()
    this.closeEpochsBefore(slot)
    const { included, remaining } = this.selectTransactions(slot)
    const block = this.appendBlock(slot, included)
    this.mempool = []
    this.pending = new PendingView(this)
    for (const tx of remaining) this.requeue(tx)
    this.journal?.produced(block)
    return block
  }

  /**
   * Applies a block of a saved chain again: its slot and its transactions, each validated at that
   * slot as when the block was made. Throws a LedgerRuleError when one no longer validates.
   */
  replayBlock(slot: number, transactions: Uint8Array[]): Block {
    this.closeEpochsBefore(slot)
    const view = new PendingView(this)
    const included = transactions.map(bytes => {
      const tx = validateTransaction(bytes, this.validationContext(view, slot))
      view.record(tx)
      return tx
    })
    return this.appendBlock(slot, included)
  }

  /**
   * Removes the newest `depth` blocks, as a node does when it switches to a fork: the ledger is
   * rebuilt from the genesis with the blocks before them, each applied again at its slot (as a
   * restart replays a saved chain). The removed blocks' transactions, then the mempool's, go back to
   * the mempool when they still validate. The next blocks come in later slots than the removed
   * ones, so they form a fork with other hashes even when they hold the same transactions.
   * Refused for a chain kept on disk: its log only grows. Answers the removed blocks, oldest first.
   */
  rollBack(depth: number): Block[] {
    if (this.journal) throw new Error('a devnet chain kept in a state folder cannot roll back: its log only grows')
    if (!Number.isInteger(depth) || depth < 1 || depth >= this.blocks.length) {
      throw new RangeError(`rollBack takes 1 to ${this.blocks.length - 1} blocks (the genesis block stays), got ${depth}`)
    }
    const kept = this.blocks.slice(1, this.blocks.length - depth)
    const removed = this.blocks.slice(this.blocks.length - depth)
    const returning = [...removed.flatMap(block => block.txs.map(hash => this.txs.get(hash)!)), ...this.mempool]
    const rebuilt = new Ledger(this.options)
    for (const block of kept) rebuilt.replayBlock(block.slot, block.txs.map(hash => this.txs.get(hash)!.cbor!))
    if (rebuilt.tip.hash !== (kept[kept.length - 1] ?? this.blocks[0]).hash) throw new Error('the rebuilt chain does not end in the block before the removed ones')
    this.adopt(rebuilt)
    this.rolledBackSlot = Math.max(this.rolledBackSlot, removed[removed.length - 1].slot)
    for (const tx of returning) this.requeue(tx)
    return removed
  }

  /** Takes over the state of a rebuilt ledger, keeping its own containers (the API and the activity generator hold this ledger). */
  private adopt(rebuilt: Ledger) {
    const containers: [Map<unknown, unknown>, Map<unknown, unknown>][] = [
      [this.outputs, rebuilt.outputs], [this.txs, rebuilt.txs], [this.epochs, rebuilt.epochs], [this.accounts, rebuilt.accounts],
      [this.pools, rebuilt.pools], [this.dreps, rebuilt.dreps], [this.assets, rebuilt.assets], [this.labels, rebuilt.labels],
      [this.addresses, rebuilt.addresses], [this.blockHeights, rebuilt.blockHeights], [this.unspentByAddress, rebuilt.unspentByAddress],
      [this.unspentByStake, rebuilt.unspentByStake], [this.unspentByAsset, rebuilt.unspentByAsset],
    ]
    for (const [own, theirs] of containers) {
      own.clear()
      for (const [key, value] of theirs) own.set(key, value)
    }
    this.blocks.splice(0, this.blocks.length, ...rebuilt.blocks)
    Object.assign(this.pots, rebuilt.pots)
    this.utxoCoin = rebuilt.utxoCoin
    this.scriptLockedCoin = rebuilt.scriptLockedCoin
    this.mempool = []
    this.pending = new PendingView(this)
  }

  private closeEpochsBefore(slot: number) {
    const epoch = this.epochOf(slot)
    while (this.currentEpoch < epoch) this.closeEpoch(this.currentEpoch)
  }

  private appendBlock(slot: number, included: LedgerTx[]): Block {
    const pool = this.slotLeader(slot, this.epochOf(slot))
    const block = this.sealBlock(slot, included, pool)
    included.forEach((tx, index) => this.applyTransaction(tx, this.inclusion(block, index)))
    this.recordBlock(block, included)
    return block
  }

  private selectTransactions(slot: number) {
    const view = new PendingView(this)
    const included: LedgerTx[] = []
    const remaining: LedgerTx[] = []
    let size = 0
    for (const tx of this.mempool) {
      if (remaining.length > 0 || size + tx.size > this.params.maxBlockSize) {
        remaining.push(tx)
        continue
      }
      const revalidated = this.revalidate(tx, view, slot)
      if (!revalidated) continue
      view.record(revalidated)
      included.push(revalidated)
      size += tx.size
    }
    return { included, remaining }
  }

  /** A pending transaction that no longer validates (e.g. its validity interval passed) is dropped. */
  private revalidate(tx: LedgerTx, view: LedgerView, slot: number): LedgerTx | undefined {
    try {
      return validateTransaction(tx.cbor!, this.validationContext(view, slot))
    } catch (error) {
      if (error instanceof LedgerRuleError) return undefined
      throw error
    }
  }

  private requeue(tx: LedgerTx) {
    const revalidated = this.revalidate(tx, this.pending, this.nextSlot())
    if (!revalidated) return
    this.mempool.push(revalidated)
    this.pending.record(revalidated)
  }

  /** Stake-weighted choice among the pools by the epoch's active stake, from a seeded draw per slot. */
  private slotLeader(slot: number, epoch: number): Pool {
    const pools = [...this.pools.values()]
    const stakes = pools.map(pool => this.epochs.get(epoch)?.poolStake.get(pool.hex) ?? 0n)
    const total = stakes.reduce((a, b) => a + b, 0n)
    const draw = seededRandom(this.seed, `leader:${slot}`)()
    if (total === 0n) return pools[Math.floor(draw * pools.length)]
    let point = (total * BigInt(Math.floor(draw * 1e9))) / 1_000_000_000n
    for (let i = 0; i < pools.length; i++) {
      if (point < stakes[i]) return pools[i]
      point -= stakes[i]
    }
    return pools[pools.length - 1]
  }

  private sealBlock(slot: number, txs: LedgerTx[], pool: Pool | null): Block {
    const previous = this.blocks.length ? this.tip : null
    const height = previous ? previous.height + 1 : 0
    const bodyHash = blake2b256(Buffer.concat([Buffer.from(this.seed), ...txs.map(tx => fromHex(tx.hash))]))
    const header = Buffer.concat([
      u64(height), u64(slot),
      previous ? fromHex(previous.hash) : new Uint8Array(32),
      pool ? fromHex(pool.hex) : new Uint8Array(28),
      bodyHash,
      pool ? pool.vrfKey : new Uint8Array(32),
    ])
    const epoch = this.epochOf(slot)
    return {
      hash: blake2b256Hex(header),
      height,
      slot,
      epoch,
      epochSlot: slot - epoch * this.epochLength,
      time: this.slotTime(slot),
      slotLeader: pool ? pool.id : `ShelleyGenesis-${toHex(bodyHash).slice(0, 16)}`,
      poolHex: pool?.hex ?? null,
      size: HEADER_FIELDS_SIZE + txs.reduce((sum, tx) => sum + tx.size, 0),
      txs: txs.map(tx => tx.hash),
      fees: txs.reduce((sum, tx) => sum + tx.fee, 0n),
      output: txs.reduce((sum, tx) => sum + createdOutputs(tx).reduce((s, [, o]) => s + o.value.coin, 0n), 0n),
      previousBlock: previous?.hash ?? null,
      vrfKey: pool ? bech32('vrf_vk', pool.vrfKey) : null,
      opCert: pool ? blake2b256Hex(`opcert:${pool.hex}`) : null,
      opCertCounter: pool ? '0' : null,
    }
  }

  private inclusion(block: Block, index: number): Inclusion {
    return { blockHash: block.hash, blockHeight: block.height, blockTime: block.time, slot: block.slot, index }
  }

  private recordBlock(block: Block, txs: LedgerTx[]) {
    this.blocks.push(block)
    this.blockHeights.set(block.hash, block.height)
    const epoch = this.epochs.get(block.epoch)!
    epoch.blocks.push(block.hash)
    epoch.txCount += txs.length
    epoch.fees += block.fees
    epoch.output += block.output
    if (block.poolHex) {
      const pool = this.pools.get(block.poolHex)!
      pool.blocks.push(block.hash)
      pool.blocksEpoch += 1
    }
  }

  block(hashOrHeight: string | number): Block | undefined {
    const height = typeof hashOrHeight === 'number' ? hashOrHeight : this.blockHeights.get(hashOrHeight)
    return height === undefined ? undefined : this.blocks[height]
  }

  /** The epoch of the tip, or a later one once its boundary has been processed. */
  get currentEpoch(): number {
    return this.epochs.size - 1
  }

  get latestEpoch(): EpochState {
    return this.epochs.get(this.currentEpoch)!
  }

  // ---- applying transactions --------------------------------------------------------------

  private applyTransaction(tx: LedgerTx, inclusion: Inclusion) {
    const record: TxRecord = { ...tx, included: inclusion }
    this.txs.set(tx.hash, record)
    const touched = new Set<string>()
    const units = new Set<string>(tx.validContract ? tx.mint.keys() : [])
    for (const ref of spentRefs(tx)) {
      const spent = this.spend(ref, tx.hash)
      touched.add(spent.address)
      for (const unit of spent.value.assets.keys()) units.add(unit)
    }
    for (const [index, data] of createdOutputs(tx)) {
      const output: Output = { ...data, ref: refOf({ txHash: tx.hash, outputIndex: index }), txHash: tx.hash, index, blockHash: inclusion.blockHash, spentBy: null }
      this.create(output)
      touched.add(output.address)
      for (const unit of output.value.assets.keys()) units.add(unit)
    }
    for (const address of touched) this.addressHistory(address).txs.push(tx.hash)
    this.pots.fees += tx.fee
    // A transaction whose scripts failed has no other effect than paying its collateral.
    if (tx.validContract) this.applyEffects(record)
    for (const unit of units) this.assets.get(unit)?.txs.push(tx.hash)
  }

  private applyEffects(tx: TxRecord) {
    for (const cert of tx.certificates) this.applyCertificate(cert, tx)
    for (const { stakeAddress, amount } of tx.withdrawals) {
      const account = this.accounts.get(stakeAddress)!
      account.rewards -= amount
      account.withdrawalsSum += amount
    }
    this.applyMint(tx)
    for (const { label } of tx.metadata) listOf(this.labels, label).push(tx.hash)
    this.pots.deposits += tx.deposit
    this.pots.treasury += tx.treasuryDonation
  }

  private spend(ref: string, txHash: string): Output {
    const output = this.outputs.get(ref)!
    output.spentBy = txHash
    this.unspentByAddress.get(output.address)?.delete(ref)
    if (output.stakeAddress) this.unspentByStake.get(output.stakeAddress)?.delete(ref)
    for (const unit of output.value.assets.keys()) this.unspentByAsset.get(unit)?.delete(ref)
    this.utxoCoin -= output.value.coin
    if (output.payment?.type === 'script') this.scriptLockedCoin -= output.value.coin
    return output
  }

  private create(output: Output) {
    this.outputs.set(output.ref, output)
    setOf(this.unspentByAddress, output.address).add(output.ref)
    this.addressHistory(output.address).outputs.push(output.ref)
    if (output.stakeAddress) {
      setOf(this.unspentByStake, output.stakeAddress).add(output.ref)
      this.accountOf(output.stakeAddress).addresses.add(output.address)
    }
    for (const unit of output.value.assets.keys()) setOf(this.unspentByAsset, unit).add(output.ref)
    this.utxoCoin += output.value.coin
    if (output.payment?.type === 'script') this.scriptLockedCoin += output.value.coin
  }

  private addressHistory(address: string): AddressHistory {
    let history = this.addresses.get(address)
    if (!history) this.addresses.set(address, (history = { outputs: [], txs: [] }))
    return history
  }

  private accountOf(stakeAddress: string): Account {
    let account = this.accounts.get(stakeAddress)
    if (!account) {
      account = { stakeAddress, registered: false, deposit: 0n, pool: null, drep: null, activeEpoch: null, rewards: 0n, rewardsSum: 0n, withdrawalsSum: 0n, rewardHistory: [], delegations: [], addresses: new Set() }
      this.accounts.set(stakeAddress, account)
    }
    return account
  }

  private applyCertificate(cert: Certificate, tx: TxRecord) {
    const epoch = this.epochOf(tx.included.slot)
    switch (cert.kind) {
      case 'registration': {
        Object.assign(this.accountOf(cert.stakeAddress), { registered: true, deposit: cert.deposit, rewards: 0n })
        break
      }
      case 'deregistration': {
        Object.assign(this.accountOf(cert.stakeAddress), { registered: false, deposit: 0n, pool: null, drep: null, activeEpoch: null })
        break
      }
      case 'delegation': {
        const account = this.accountOf(cert.stakeAddress)
        // A delegation counts from the next epoch's stake snapshot on.
        account.pool = cert.pool
        account.activeEpoch = tx.included.blockHeight === 0 ? 0 : epoch + 1
        account.delegations.push({ activeEpoch: account.activeEpoch, txHash: tx.hash, amount: this.controlledStake(cert.stakeAddress), pool: cert.pool, txSlot: tx.included.slot, blockTime: tx.included.blockTime, blockHeight: tx.included.blockHeight })
        break
      }
      case 'vote_delegation': {
        this.accountOf(cert.stakeAddress).drep = cert.drep
        const drep = this.dreps.get(cert.drep)
        if (drep) drep.lastActiveEpoch = epoch
        break
      }
      case 'pool_registration': {
        const existing = this.pools.get(cert.pool.hex)
        this.pools.set(cert.pool.hex, {
          ...cert.pool,
          id: poolIdOf(cert.pool.hex),
          vrfKey: this.genesis.pools.find(p => p.params.hex === cert.pool.hex)?.vrfKey ?? fromHex(cert.pool.vrfKeyHash),
          registrations: [...(existing?.registrations ?? []), tx.hash],
          retirements: existing?.retirements ?? [],
          blocks: existing?.blocks ?? [],
          blocksEpoch: existing?.blocksEpoch ?? 0,
        })
        break
      }
      case 'drep_registration': {
        this.dreps.set(cert.drep, { hex: cert.drep, id: drepIdOf(cert.drep), deposit: cert.deposit, registeredEpoch: epoch, lastActiveEpoch: epoch })
        break
      }
    }
  }

  private applyMint(tx: TxRecord) {
    for (const [unit, quantity] of tx.mint) {
      let asset = this.assets.get(unit)
      if (!asset) {
        asset = { unit, policyId: unit.slice(0, 56), nameHex: unit.slice(56), fingerprint: assetFingerprint(unit.slice(0, 56), unit.slice(56)), quantity: 0n, initialMintTx: tx.hash, history: [], txs: [], onchainMetadata: null, onchainStandard: null }
        this.assets.set(unit, asset)
      }
      asset.quantity += quantity
      asset.history.push({ txHash: tx.hash, action: quantity > 0n ? 'minted' : 'burned', amount: quantity > 0n ? quantity : -quantity })
      if (quantity > 0n) Object.assign(asset, cip25Metadata(tx, asset))
    }
  }

  // ---- stake ------------------------------------------------------------------------------

  unspentAt(address: string): Output[] {
    return [...(this.unspentByAddress.get(address) ?? [])].map(ref => this.outputs.get(ref)!)
  }

  unspentWithAsset(unit: string): Output[] {
    return [...(this.unspentByAsset.get(unit) ?? [])].map(ref => this.outputs.get(ref)!)
  }

  unspentAtStake(stakeAddress: string): Output[] {
    return [...(this.unspentByStake.get(stakeAddress) ?? [])].map(ref => this.outputs.get(ref)!)
  }

  /** Lovelace controlled by a stake credential: its unspent outputs plus withdrawable rewards. */
  controlledStake(stakeAddress: string): bigint {
    const utxo = this.unspentAtStake(stakeAddress).reduce((sum, output) => sum + output.value.coin, 0n)
    return utxo + (this.accounts.get(stakeAddress)?.rewards ?? 0n)
  }

  /** Live stake: what delegated, registered accounts control now. */
  liveStake(): { accounts: Map<string, { pool: string; amount: bigint }>; pools: Map<string, bigint>; total: bigint } {
    const accounts = new Map<string, { pool: string; amount: bigint }>()
    const pools = new Map<string, bigint>()
    let total = 0n
    for (const account of this.accounts.values()) {
      if (!account.registered || !account.pool) continue
      const amount = this.controlledStake(account.stakeAddress)
      accounts.set(account.stakeAddress, { pool: account.pool, amount })
      pools.set(account.pool, (pools.get(account.pool) ?? 0n) + amount)
      total += amount
    }
    return { accounts, pools, total }
  }

  private openEpoch(epoch: number) {
    const live = this.liveStake()
    this.epochs.set(epoch, {
      epoch, blocks: [], txCount: 0, output: 0n, fees: 0n,
      stake: live.accounts, poolStake: live.pools, activeStake: live.total,
      nonce: blake2b256Hex(`${this.seed}:nonce:${epoch}:${this.blocks.length ? this.tip.hash : ''}`),
      totals: this.totals(),
    })
    for (const pool of this.pools.values()) pool.blocksEpoch = 0
  }

  /**
   * Epoch boundary. Rewards for the closing epoch, as a documented simplification of the Shelley
   * formula: the pot is reserves × rho × min(1, blocks made / blocks expected) plus the epoch's
   * fees; tau of it goes to the treasury; the rest is shared among pools by their share of the
   * epoch's blocks. A pool's operator takes the fixed cost plus the margin of the remainder (as
   * `leader` reward), and delegators share the rest by their snapshot stake (`member` rewards).
   * Rewards of unregistered accounts and rounding go back to the reserves.
   */
  private closeEpoch(epoch: number) {
    const state = this.epochs.get(epoch)!
    const blocksByPool = new Map<string, number>()
    for (const hash of state.blocks) {
      const pool = this.block(hash)!.poolHex
      if (pool) blocksByPool.set(pool, (blocksByPool.get(pool) ?? 0) + 1)
    }
    const blockCount = BigInt(state.blocks.length)
    const expectedBlocks = BigInt(Math.max(1, Math.round(this.epochLength * GENESIS.activeSlotsCoefficient)))
    const performance = blockCount < expectedBlocks ? blockCount : expectedBlocks
    const expansion = (this.pots.reserves * ppm(this.params.rho) * performance) / (1_000_000n * expectedBlocks)
    const pot = expansion + this.pots.fees
    const treasuryCut = (pot * ppm(this.params.tau)) / 1_000_000n
    const distributable = pot - treasuryCut
    let paid = 0n
    for (const [hex, blocks] of blocksByPool) {
      const pool = this.pools.get(hex)!
      const poolReward = (distributable * BigInt(blocks)) / blockCount
      const cost = poolReward < pool.cost ? poolReward : pool.cost
      const margin = ((poolReward - cost) * pool.marginPpm) / 1_000_000n
      const members = poolReward - cost - margin
      paid += this.credit(pool.rewardAccount, { epoch, amount: cost + margin, pool: hex, type: 'leader' })
      const poolStake = state.poolStake.get(hex) ?? 0n
      if (poolStake === 0n) continue
      for (const [stakeAddress, { pool: delegatedTo, amount }] of state.stake) {
        if (delegatedTo === hex) paid += this.credit(stakeAddress, { epoch, amount: (members * amount) / poolStake, pool: hex, type: 'member' })
      }
    }
    this.pots.reserves += distributable - paid - expansion
    this.pots.treasury += treasuryCut
    this.pots.fees = 0n
    this.openEpoch(epoch + 1)
  }

  /** The pots now; DRep deposits are split from the stake key and pool deposits. */
  private totals(): EpochTotals {
    const depositsDrep = [...this.dreps.values()].reduce((sum, drep) => sum + drep.deposit, 0n)
    return {
      circulation: this.utxoCoin,
      treasury: this.pots.treasury,
      rewards: [...this.accounts.values()].reduce((sum, account) => sum + account.rewards, 0n),
      reserves: this.pots.reserves,
      fees: this.pots.fees,
      depositsStake: this.pots.deposits - depositsDrep,
      depositsDrep,
    }
  }

  private credit(stakeAddress: string, entry: RewardEntry): bigint {
    const account = this.accounts.get(stakeAddress)
    if (!account?.registered || entry.amount === 0n) return 0n
    account.rewards += entry.amount
    account.rewardsSum += entry.amount
    account.rewardHistory.push(entry)
    return entry.amount
  }

  // ---- genesis ----------------------------------------------------------------------------

  private applyGenesis() {
    this.epochs.set(0, { epoch: 0, blocks: [], txCount: 0, output: 0n, fees: 0n, stake: new Map(), poolStake: new Map(), activeStake: 0n, nonce: '', totals: this.totals() })
    const block = this.sealBlock(0, this.genesis.transactions, null)
    this.genesis.transactions.forEach((tx, index) => this.applyTransaction(tx, this.inclusion(block, index)))
    this.pots.reserves = GENESIS.maxLovelaceSupply - this.utxoCoin - this.pots.deposits
    this.openEpoch(0)
    this.recordBlock(block, this.genesis.transactions)
  }

  /** Total of all pots, accounts and outputs: always the maximum supply (a ledger invariant). */
  accountedSupply(): bigint {
    const rewards = [...this.accounts.values()].reduce((sum, account) => sum + account.rewards, 0n)
    return this.pots.reserves + this.pots.treasury + this.pots.fees + this.pots.deposits + this.utxoCoin + rewards
  }
}

const u64 = (n: number) => {
  const bytes = Buffer.alloc(8)
  bytes.writeBigUInt64BE(BigInt(n))
  return bytes
}

const ppm = (fraction: number) => BigInt(Math.round(fraction * 1_000_000))

function listOf(map: Map<string, string[]>, key: string): string[] {
  let list = map.get(key)
  if (!list) map.set(key, (list = []))
  return list
}

function setOf(map: Map<string, Set<string>>, key: string): Set<string> {
  let set = map.get(key)
  if (!set) map.set(key, (set = new Set()))
  return set
}

/** CIP-25 metadata (label 721) of the asset in its minting transaction, if present. */
function cip25Metadata(tx: TxRecord, asset: AssetState): Pick<AssetState, 'onchainMetadata' | 'onchainStandard'> | undefined {
  const label = objectOf(tx.metadata.find(m => m.label === '721')?.json)
  const byPolicy = objectOf(label?.[asset.policyId] ?? label?.['0x' + asset.policyId])
  const utf8Name = Buffer.from(asset.nameHex, 'hex').toString('utf8')
  const entry = objectOf(byPolicy?.[utf8Name] ?? byPolicy?.[asset.nameHex] ?? byPolicy?.['0x' + asset.nameHex])
  if (!label || !entry) return undefined
  const wellFormed = typeof entry.name === 'string' && (typeof entry.image === 'string' || (Array.isArray(entry.image) && entry.image.every((part: unknown) => typeof part === 'string')))
  const standard = wellFormed ? (Number(label.version) === 2 ? 'CIP25v2' : 'CIP25v1') : null
  return { onchainMetadata: entry, onchainStandard: standard }
}

const objectOf = (value: unknown) => (value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined)
