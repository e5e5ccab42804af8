import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { ApiError } from '../../lib/errors.ts'
import { OgmiosRpcError, type OgmiosRpc } from './ogmios-rpc.ts'
import { LIST_PAGE_SIZE } from './port.ts'
import type {
  ChainAddressTransaction,
  ChainAssetHistoryEntry,
  ChainBlock,
  ChainDelegator,
  ChainEpoch,
  ChainOutputContent,
  ChainTransaction,
  ChainTxMetadata,
  ListPage,
} from './port.ts'
import * as map from './ogmios-mappers.ts'

export interface ChainSyncIndexOptions {
  rpc: OgmiosRpc
  /** Where chain sync starts: 'origin', 'tip' (the node's tip when started), or a point { slot, id }. */
  from: 'origin' | 'tip' | map.OgmiosPoint
  /** The most blocks held; older ones are evicted (default 2160). */
  maxBlocks?: number
  /** Resolves an input's output that the index does not hold (created before its start): wired to Kupo by the adapter; may answer null. */
  resolveOutput?: (txHash: string, index: number) => Promise<ChainOutputContent | null>
  /** How long a read waits for the index to hold the node's tip (default 60 s). */
  catchUpTimeoutMs?: number
  /**
   * The outputs the genesis block made, in transaction order (wired to Kupo by the adapter): chain
   * synchronisation does not deliver that block. Without it the genesis block is held empty.
   */
  genesisOutputs?: (genesis: map.OgmiosPoint) => Promise<GenesisOutput[]>
}

/** An output of the genesis block: the pseudo transaction that made it, its place, what it holds. */
export interface GenesisOutput {
  txHash: string
  /** The pseudo transaction's place in the block (one that made no output is not seen). */
  txIndex: number
  outputIndex: number
  content: ChainOutputContent
}

const DEFAULT_MAX_BLOCKS = 2160
const DEFAULT_CATCH_UP_MS = 60_000
/** Tries at reading the genesis block's outputs before it is held without them. */
const GENESIS_ATTEMPTS = 3
const NO_COUNTS = { assetMintOrBurnCount: 0, withdrawalCount: 0, delegationCount: 0, stakeCertCount: 0, poolUpdateCount: 0, redeemerCount: 0 }
/** nextBlock requests kept in flight: Ogmios answers them back to back while the index applies blocks. */
const IN_FLIGHT = 50
/** The newest held blocks offered as intersections on reconnection; older ones follow at doubling distances. */
const RECENT_POINTS = 10
/** Pause before synchronisation is set up again after it failed on a connection that stayed open. */
const RETRY_MS = 1000
/** Ogmios' error code of findIntersection when none of the points is on the chain. */
const NO_INTERSECTION = 1000

type Undo = () => void
type Point = map.OgmiosPoint | 'origin'

type NextBlock =
  | { direction: 'forward'; block: map.OgmiosBlock; tip?: map.OgmiosTip | 'origin' }
  | { direction: 'backward'; point: Point; tip?: map.OgmiosTip | 'origin' }

interface HeldInput {
  ref: map.InputReference
  /** The spent output's content; null while neither the index nor the resolver knew it. */
  content: ChainOutputContent | null
}

interface HeldTx {
  hash: string
  block: HeldBlock
  index: number
  fee: bigint
  deposit: bigint
  size: number
  invalidBefore: string | null
  invalidHereafter: string | null
  validContract: boolean
  inputs: HeldInput[]
  outputs: { outputIndex: number; content: ChainOutputContent }[]
  metadata: ChainTxMetadata[]
  counts: ReturnType<typeof map.transactionCounts>
}

interface HeldBlock extends map.BlockFigures, map.SlotPlace {
  txs: HeldTx[]
  output: bigint
  fees: bigint
  /** Reverses what applying the block changed (run newest first): for rollbacks. */
  undo: Undo[]
  /** Forgets what only this block referenced: for eviction, when it is the oldest held. */
  evict: Undo[]
}

interface HeldOutput {
  content: ChainOutputContent
  spentBy: string | null
}

interface Delegation {
  registered: boolean
  pool: string | null
  activeEpoch: number | null
}

interface AccountState extends Delegation {
  withdrawals: bigint
  /** Addresses carrying the stake address, in the order first seen, with how many held outputs (or the genesis) name them. */
  addresses: Map<string, number>
  /** How many held transactions refer to the account; at zero it is forgotten, unless the genesis names it. */
  references: number
  pinned: boolean
}

interface Waiter {
  target: map.OgmiosTip
  /** How many blocks the index had applied when the wait began. */
  since: number
  resolve: () => void
  reject: (error: unknown) => void
  timer: NodeJS.Timeout
}

interface ShelleyGenesis {
  network?: string
  initialFunds?: Record<string, unknown>
  initialStakePools?: { delegators?: Record<string, string> }
}

interface UtxoEntry { address: string; value: map.OgmiosValue }

const pageOf = <T>(items: readonly T[], page: ListPage): T[] => {
  const ordered = page.order === 'desc' ? [...items].reverse() : items
  return ordered.slice((page.page - 1) * LIST_PAGE_SIZE, page.page * LIST_PAGE_SIZE)
}

const pageCount = (count: number) => Math.min(LIST_PAGE_SIZE, Math.max(1, Math.floor(count)))

const sum = <T>(items: readonly T[], of: (item: T) => bigint) => items.reduce((total, item) => total + of(item), 0n)

const isHeight = (value: string | number): value is number | `${number}` => typeof value === 'number' || /^\d+$/.test(value)

const unavailable = (message: string) => new ApiError(503, 'UPSTREAM_UNAVAILABLE', message)

const isTip = (tip: unknown): tip is map.OgmiosTip =>
  typeof tip === 'object' && tip !== null && Number.isSafeInteger((tip as map.OgmiosTip).slot) && typeof (tip as map.OgmiosTip).id === 'string'

/**
 * The chain as Ogmios' chain synchronisation delivers it, held in memory for what Ogmios and Kupo
 * do not answer: blocks, transactions by hash, address and asset histories, epochs, delegations.
 * It holds the newest `maxBlocks` blocks; the oldest is evicted with everything only it referred
 * to, and whatever is older reads as unknown (null or empty). Rollbacks reverse what the dropped
 * blocks changed. On every (re)connection it finds its intersection again from its newest blocks.
 *
 * An epoch is answered only when every block of it since the index's start is held: from the
 * epoch after the one of the newest point not held (the start point, or the newest evicted block).
 */
export class ChainSyncIndex {
  private readonly rpc: OgmiosRpc
  private readonly from: ChainSyncIndexOptions['from']
  private readonly maxBlocks: number
  private readonly resolveOutput?: ChainSyncIndexOptions['resolveOutput']
  private readonly genesisOutputs?: ChainSyncIndexOptions['genesisOutputs']
  private readonly catchUpTimeoutMs: number

  private readonly blocks: HeldBlock[] = []
  private readonly blocksByHash = new Map<string, HeldBlock>()
  private readonly txs = new Map<string, HeldTx>()
  private readonly outputs = new Map<string, HeldOutput>()
  private readonly addressTxs = new Map<string, HeldTx[]>()
  private readonly assetEvents = new Map<string, ChainAssetHistoryEntry[]>()
  private readonly epochs = new Map<number, HeldBlock[]>()
  private readonly accounts = new Map<string, AccountState>()

  /** Whether following stopped: it could not be set up, or a block could not be applied (until it is set up anew). */
  private stalled = false
  /** Points the read index reached, given when its follower resumes: following starts from the newest the node knows. */
  private resumePoints: map.OgmiosPoint[] = []
  /** The newest point whose block is not held: where following started, or the newest evicted block. */
  private floor: Point | null = null
  private clock: map.SlotClock | undefined
  private networkId: number | undefined
  private genesisSeeded = false
  private started = false
  private closed = false
  /** Bumped at every (re)synchronisation: answers to the requests of an earlier one are dropped. */
  private generation = 0
  private work: Promise<void> = Promise.resolve()
  private waiters: Waiter[] = []
  /** Blocks applied so far (rolled back or not): tells waiters whether a block came since they began. */
  private applied = 0
  private lastError: unknown
  /** The node's tip as the newest applied answer of chain synchronisation reported it. */
  private reportedTip: map.OgmiosTip | 'origin' | undefined

  constructor(options: ChainSyncIndexOptions) {
    this.rpc = options.rpc
    this.from = options.from
    this.maxBlocks = Math.max(1, Math.floor(options.maxBlocks ?? DEFAULT_MAX_BLOCKS))
    this.resolveOutput = options.resolveOutput
    this.genesisOutputs = options.genesisOutputs
    this.catchUpTimeoutMs = options.catchUpTimeoutMs ?? DEFAULT_CATCH_UP_MS
  }

  /** Begins following the chain; idempotent. */
  start(): void {
    if (this.started || this.closed) return
    this.started = true
    this.rpc.onConnect(() => void this.synchronise())
  }

  /** Stops following; reads waiting for the tip fail. */
  close(): void {
    this.closed = true
    this.generation++
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer)
      waiter.reject(unavailable('the chain-A index was closed'))
    }
  }

  get heldFrom(): { slot: number; hash: string; height: number } | null {
    const oldest = this.blocks[0]
    return oldest ? { slot: oldest.slot, hash: oldest.hash, height: oldest.height } : null
  }

  /**
   * Follows the chain from the newest of these points the node knows (falling back to where
   * following starts), unless a block as old as the newest is held already: the follower resumes
   * its read index from there, so the two meet after a restart. The connection is opened anew for it.
   */
  async followFrom(points: { slot: number; hash: string }[]): Promise<void> {
    const wanted = points.map(point => ({ slot: point.slot, id: point.hash })).sort((a, b) => b.slot - a.slot)
    const oldest = this.blocks[0]
    if (!wanted.length || (oldest && oldest.slot <= wanted[0].slot)) return
    this.resumePoints = wanted
    this.work = this.work.then(() => this.dropAll())
    await this.work
    this.rpc.reconnect()
  }

  /** Waits until the index holds the node's current tip (at most catchUpTimeoutMs). */
  async caughtUp(): Promise<void> {
    if (this.closed) throw unavailable('the chain-A index was closed')
    this.start()
    const tip = await this.rpc.request<map.OgmiosTip | 'origin'>('queryNetwork/tip')
    if (tip !== 'origin' && !isTip(tip)) throw unavailable(`chain-A upstream (Ogmios) answered a tip that is none: ${JSON.stringify(tip).slice(0, 100)}`)
    if (tip === 'origin' || this.reached(tip, this.applied)) return
    if (this.stalled) throw unavailable(this.behindMessage(tip))
    await new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        target: tip, since: this.applied, resolve, reject,
        timer: setTimeout(() => {
          this.waiters = this.waiters.filter(other => other !== waiter)
          reject(unavailable(this.behindMessage(tip)))
        }, this.catchUpTimeoutMs),
      }
      this.waiters.push(waiter)
    })
  }

  // ---- port-shaped reads ------------------------------------------------------------------

  async tip(): Promise<ChainBlock> {
    await this.caughtUp()
    const tip = this.blocks.at(-1)
    if (!tip) throw unavailable('the chain-A index holds no block yet: it serves the blocks made since it started following the chain')
    return this.toBlock(tip)
  }

  async block(hashOrHeight: string | number): Promise<ChainBlock | null> {
    await this.caughtUp()
    const block = this.heldBlock(hashOrHeight)
    return block ? this.toBlock(block) : null
  }

  async blocksAfter(height: number, count: number): Promise<ChainBlock[]> {
    await this.caughtUp()
    const oldest = this.blocks[0]
    if (!oldest || height + 1 < oldest.height) return []
    const at = height + 1 - oldest.height
    return this.blocks.slice(at, at + pageCount(count)).map(block => this.toBlock(block))
  }

  async epoch(epoch: number): Promise<ChainEpoch | null> {
    await this.caughtUp()
    return this.knownEpoch(epoch) ? this.toEpoch(epoch) : null
  }

  async latestEpoch(): Promise<ChainEpoch> {
    await this.caughtUp()
    const tip = this.blocks.at(-1)
    if (!tip) throw unavailable('the chain-A index holds no block yet, so no current epoch')
    return this.toEpoch(tip.epoch)
  }

  async epochsAfter(epoch: number, count: number): Promise<ChainEpoch[]> {
    await this.caughtUp()
    const wanted = Array.from({ length: pageCount(count) }, (_, i) => epoch + 1 + i)
    return wanted.filter(n => this.knownEpoch(n)).map(n => this.toEpoch(n))
  }

  async transaction(hash: string): Promise<ChainTransaction | null> {
    await this.caughtUp()
    const tx = this.txs.get(hash.toLowerCase())
    if (!tx) return null
    const inputs = await Promise.all(tx.inputs.map(async input => map.toTxInput(input.ref, input.content ?? (await this.resolve(input.ref)) ?? map.UNKNOWN_OUTPUT)))
    return {
      hash: tx.hash,
      blockHash: tx.block.hash,
      blockHeight: tx.block.height,
      blockTime: tx.block.time,
      slot: tx.block.slot,
      index: tx.index,
      fee: String(tx.fee),
      deposit: String(tx.deposit),
      size: tx.size,
      invalidBefore: tx.invalidBefore,
      invalidHereafter: tx.invalidHereafter,
      validContract: tx.validContract,
      inputs,
      outputs: tx.outputs.map(({ outputIndex, content }) => ({
        ...content, outputIndex, collateral: !tx.validContract, consumedBy: this.outputs.get(map.refOf(tx.hash, outputIndex))?.spentBy ?? null,
      })),
      metadata: tx.metadata,
      ...tx.counts,
    }
  }

  async addressTransactions(address: string, limit: number): Promise<ChainAddressTransaction[]> {
    await this.caughtUp()
    const history = this.addressTxs.get(address) ?? []
    return [...history].reverse().slice(0, Math.max(0, Math.floor(limit))).map(toAddressTransaction)
  }

  async addressTransactionPage(address: string, page: ListPage): Promise<ChainAddressTransaction[]> {
    await this.caughtUp()
    return pageOf(this.addressTxs.get(address) ?? [], page).map(toAddressTransaction)
  }

  async assetHistory(unit: string, limit: number): Promise<ChainAssetHistoryEntry[] | null> {
    await this.caughtUp()
    const events = this.assetEvents.get(unit.toLowerCase())
    return events ? [...events].reverse().slice(0, Math.max(0, Math.floor(limit))) : null
  }

  async assetHistoryPage(unit: string, page: ListPage): Promise<ChainAssetHistoryEntry[] | null> {
    await this.caughtUp()
    const events = this.assetEvents.get(unit.toLowerCase())
    return events ? pageOf(events, page) : null
  }

  async blockTransactions(hashOrHeight: string | number, page: ListPage): Promise<string[] | null> {
    await this.caughtUp()
    const block = this.heldBlock(hashOrHeight)
    return block ? pageOf(block.txs.map(tx => tx.hash), page) : null
  }

  async epochBlocks(epoch: number, page: ListPage): Promise<string[] | null> {
    await this.caughtUp()
    if (!this.knownEpoch(epoch)) return null
    return pageOf((this.epochs.get(epoch) ?? []).map(block => block.hash), page)
  }

  /** Registered accounts whose newest known delegation is to the pool; null when the ledger knows no such pool. */
  async poolDelegators(poolId: string, page: ListPage): Promise<ChainDelegator[] | null> {
    await this.caughtUp()
    if (!(await this.poolRegistered(poolId))) return null
    return this.delegators(pageOf(this.accountsWhere(account => account.pool === poolId), page))
  }

  async accountAddresses(stakeAddress: string, page: ListPage): Promise<string[] | null> {
    await this.caughtUp()
    const account = this.accounts.get(stakeAddress)
    return account ? pageOf([...account.addresses.keys()], page) : null
  }

  // ---- figures other reads need -----------------------------------------------------------

  /** Blocks the pool made among those held, and among them those of the epoch. */
  poolBlockCounts(poolId: string, epoch: number): { total: number; epoch: number } {
    const made = this.blocks.filter(block => block.slotLeader === poolId)
    return { total: made.length, epoch: made.filter(block => block.epoch === epoch).length }
  }

  /** Withdrawals the held transactions made from the account, and the epoch its newest known delegation counts from. */
  accountTotals(stakeAddress: string): { withdrawalsSum: string; activeEpoch: number | null } {
    const account = this.accounts.get(stakeAddress)
    return { withdrawalsSum: String(account?.withdrawals ?? 0n), activeEpoch: account?.activeEpoch ?? null }
  }

  // ---- reads' helpers ---------------------------------------------------------------------

  private heldBlock(hashOrHeight: string | number): HeldBlock | undefined {
    if (isHeight(hashOrHeight)) {
      const oldest = this.blocks[0]
      return oldest && this.blocks[Number(hashOrHeight) - oldest.height]
    }
    return this.blocksByHash.get(hashOrHeight.toLowerCase())
  }

  private toBlock(block: HeldBlock): ChainBlock {
    const empty = block.txs.length === 0
    return {
      hash: block.hash,
      height: block.height,
      slot: block.slot,
      epoch: block.epoch,
      epochSlot: block.epochSlot,
      time: block.time,
      slotLeader: block.slotLeader,
      size: block.size,
      txCount: block.txs.length,
      output: empty ? null : String(block.output),
      fees: empty ? null : String(block.fees),
      previousBlock: block.previousBlock,
      confirmations: this.blocks.at(-1)!.height - block.height,
    }
  }

  private knownEpoch(epoch: number): boolean {
    const tip = this.blocks.at(-1)
    if (!tip || !this.clock || epoch < 0 || epoch > tip.epoch) return false
    return this.floor === 'origin' || (this.floor !== null && this.clock.epochStart(epoch) > this.floor.slot)
  }

  /**
   * An epoch from its held blocks. Its active stake is null: it is the ledger's stake snapshot,
   * which neither chain synchronisation nor a ledger-state query of Ogmios reports in lovelace.
   */
  private toEpoch(epoch: number): ChainEpoch {
    const clock = this.clock!
    const blocks = this.epochs.get(epoch) ?? []
    const startTime = clock.slotTime(clock.epochStart(epoch))
    return {
      epoch,
      startTime,
      endTime: clock.slotTime(clock.epochStart(epoch + 1)),
      firstBlockTime: blocks[0]?.time ?? startTime,
      lastBlockTime: blocks.at(-1)?.time ?? startTime,
      blockCount: blocks.length,
      txCount: blocks.reduce((count, block) => count + block.txs.length, 0),
      output: String(sum(blocks, block => block.output)),
      fees: String(sum(blocks, block => block.fees)),
      activeStake: null,
    }
  }

  private async poolRegistered(poolId: string): Promise<boolean> {
    try {
      const pools = await this.rpc.request<Record<string, unknown>>('queryLedgerState/stakePools', { stakePools: [{ id: poolId }] })
      return Object.keys(pools ?? {}).length > 0
    } catch (error) {
      // A malformed pool id is no pool.
      if (error instanceof OgmiosRpcError) return false
      throw error
    }
  }

  private accountsWhere(test: (account: AccountState) => boolean): string[] {
    return [...this.accounts].filter(([, account]) => account.registered && test(account)).map(([stakeAddress]) => stakeAddress)
  }

  /**
   * The stake each account controls, as Blockfrost's live stake: its rewards (from the ledger) plus
   * the unspent outputs at the addresses the index knows carry it (outputs at addresses it never
   * saw are missed).
   */
  private async delegators(stakeAddresses: string[]): Promise<ChainDelegator[]> {
    if (!stakeAddresses.length) return []
    const credentials = stakeAddresses.map(stakeAddress => ({ stakeAddress, ...credentialOf(stakeAddress) }))
    const addresses = stakeAddresses.flatMap(stakeAddress => [...(this.accounts.get(stakeAddress)?.addresses.keys() ?? [])])
    const [summaries, utxo] = await Promise.all([
      this.rpc.request<map.OgmiosRewardAccountSummary[] | Record<string, map.OgmiosRewardAccountSummary>>('queryLedgerState/rewardAccountSummaries', credentialParams(credentials)),
      addresses.length ? this.rpc.request<UtxoEntry[]>('queryLedgerState/utxo', { addresses }) : Promise.resolve([]),
    ])
    const rewards = new Map<string, bigint>()
    for (const [key, summary] of Object.entries(summaries ?? {})) rewards.set(summary.credential ?? key, map.rewardsOf(summary))
    const held = new Map<string, bigint>()
    for (const entry of utxo) {
      const stakeAddress = map.stakeAddressOfAddress(entry.address)
      if (stakeAddress) held.set(stakeAddress, (held.get(stakeAddress) ?? 0n) + BigInt(entry.value.ada.lovelace))
    }
    return credentials.map(({ stakeAddress, hash }) => ({ stakeAddress, amount: String((held.get(stakeAddress) ?? 0n) + (rewards.get(hash) ?? 0n)) }))
  }

  private async resolve(ref: map.InputReference): Promise<ChainOutputContent | null> {
    const held = this.outputs.get(map.refOf(ref.txHash, ref.outputIndex))
    if (held) return held.content
    if (!this.resolveOutput) return null
    try {
      return await this.resolveOutput(ref.txHash, ref.outputIndex)
    } catch {
      return null
    }
  }

  // ---- catching up ------------------------------------------------------------------------

  /**
   * Whether the index is at the node's tip: its newest block is that tip, or a later block it
   * applied since (the tip itself may have been rolled back before the index got to it). Holding
   * the tip with newer blocks after it is not enough: those are blocks the node has since dropped.
   */
  private reached(tip: map.OgmiosTip, since: number): boolean {
    const newest = this.blocks.at(-1)
    if (!newest) return (this.floor !== null && this.floor !== 'origin' && this.floor.id === tip.id) || this.onlyGenesis(tip)
    return newest.hash === tip.id || (this.applied > since && newest.slot > tip.slot)
  }

  /**
   * A chain of the genesis block alone, as chain synchronisation reported it: that block holds the
   * initial distribution, which the genesis configuration describes and no nextBlock delivers.
   */
  private onlyGenesis(tip: map.OgmiosTip): boolean {
    const reported = this.reportedTip
    return this.floor === 'origin' && reported !== undefined && reported !== 'origin' && reported.height === 0 && reported.id === tip.id
  }

  private notifyWaiters(): void {
    for (const waiter of [...this.waiters]) {
      if (!this.reached(waiter.target, waiter.since)) continue
      clearTimeout(waiter.timer)
      this.waiters = this.waiters.filter(other => other !== waiter)
      waiter.resolve()
    }
  }

  /** Following stopped: reads waiting for the tip, and those to come until it runs again, fail at once, saying why. */
  private stall(error: unknown): void {
    this.lastError = error
    this.stalled = true
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer)
      waiter.reject(unavailable(this.behindMessage(waiter.target)))
    }
  }

  private behindMessage(tip: map.OgmiosTip): string {
    const newest = this.blocks.at(-1)
    const held = newest ? `it holds blocks up to #${newest.height} (slot ${newest.slot})` : 'it holds no block yet'
    const reason = this.lastError instanceof Error ? `; last synchronisation error: ${this.lastError.message}` : ''
    const behind = this.stalled ? 'stopped following, short of' : 'has not caught up within ' + Math.round(this.catchUpTimeoutMs / 1000) + ' s with'
    return `the chain-A index ${behind} the node's tip (slot ${tip.slot}): ${held}${reason}`
  }

  // ---- chain synchronisation --------------------------------------------------------------

  /** After every (re)connection: the time and network facts, the intersection, then nextBlock requests in flight. */
  private async synchronise(): Promise<void> {
    if (this.closed) return
    this.stalled = false
    const generation = ++this.generation
    try {
      await this.loadChainFacts()
      if (generation !== this.generation) return
      if (!(await this.intersect(await this.intersectionPoints()))) {
        // None of the held (or resume) points is on the chain any more: start over from where following starts.
        this.work = this.work.then(() => this.dropAll())
        await this.work
        this.resumePoints = []
        if (!(await this.intersect(await this.startPoints()))) throw new Error('the node found no intersection with the starting point')
      }
      if (generation !== this.generation) return
      for (let i = 0; i < IN_FLIGHT; i++) this.requestNext(generation)
    } catch (error) {
      if (generation !== this.generation) return
      this.stall(error)
      setTimeout(() => {
        if (generation === this.generation) void this.synchronise()
      }, RETRY_MS).unref()
    }
  }

  private async loadChainFacts(): Promise<void> {
    const [eras, start, genesis] = await Promise.all([
      this.rpc.request<map.OgmiosEraSummary[]>('queryLedgerState/eraSummaries'),
      this.rpc.request<string>('queryNetwork/startTime'),
      this.networkId === undefined ? this.rpc.request<ShelleyGenesis>('queryNetwork/genesisConfiguration', { era: 'shelley' }) : Promise.resolve(undefined),
    ])
    this.clock = new map.SlotClock(eras, start)
    if (genesis) {
      this.networkId = genesis.network === 'mainnet' ? 1 : 0
      if (this.from === 'origin' && !this.genesisSeeded) this.seedGenesis(genesis)
    }
  }

  /**
   * The genesis's funds and delegations, which chain synchronisation does not deliver as blocks:
   * the accounts and addresses they name, registered and delegated from epoch 0. They stay for good
   * (the genesis is never rolled back nor evicted).
   */
  private seedGenesis(genesis: ShelleyGenesis): void {
    this.genesisSeeded = true
    for (const address of Object.keys(genesis.initialFunds ?? {})) {
      const stakeAddress = map.stakeAddressOfAddress(address)
      if (stakeAddress) this.pinnedAccount(stakeAddress).addresses.set(address, Infinity)
    }
    for (const [credential, pool] of Object.entries(genesis.initialStakePools?.delegators ?? {})) {
      const account = this.pinnedAccount(map.stakeAddressOfCredential(credential, 'verificationKey', this.networkId!))
      Object.assign(account, { registered: true, pool, activeEpoch: 0 })
    }
  }

  private pinnedAccount(stakeAddress: string): AccountState {
    const account = this.accounts.get(stakeAddress) ?? newAccount()
    account.pinned = true
    this.accounts.set(stakeAddress, account)
    return account
  }

  /** The newest held points, then older ones at doubling distances, then the point before the oldest. */
  /** The newest held blocks, then older ones at doubling distances; with none held, the resume points or the start. */
  private async intersectionPoints(): Promise<Point[]> {
    if (!this.blocks.length) return this.resumePoints.length ? this.resumePoints : this.startPoints()
    const points: Point[] = []
    const newest = this.blocks.length - 1
    for (let back = 0; back <= newest; back = back < RECENT_POINTS ? back + 1 : back * 2) points.push(pointOf(this.blocks[newest - back]))
    if (this.floor) points.push(this.floor)
    return points
  }

  /**
   * Where following starts, which is then the floor (nothing before it is held): OGMIOS_SYNC_FROM.
   */
  private async startPoints(): Promise<Point[]> {
    let start: Point
    if (this.from === 'tip') {
      const tip = await this.rpc.request<map.OgmiosTip | 'origin'>('queryNetwork/tip')
      start = tip === 'origin' ? 'origin' : { slot: tip.slot, id: tip.id }
    } else start = this.from === 'origin' ? 'origin' : { slot: this.from.slot, id: this.from.id }
    this.floor = start
    return [start]
  }

  private async intersect(points: Point[]): Promise<boolean> {
    try {
      const { intersection } = await this.rpc.request<{ intersection: Point }>('findIntersection', { points })
      // Nothing held: the intersection is where following starts (one of the resume points, or the start).
      if (!this.blocks.length && intersection) this.floor = intersection
      return true
    } catch (error) {
      if (error instanceof OgmiosRpcError && error.code === NO_INTERSECTION) return false
      throw error
    }
  }

  /** One nextBlock request; its answer is applied in turn, then the next is asked for. */
  private requestNext(generation: number): void {
    this.rpc.request<NextBlock>('nextBlock').then(
      answer => { this.work = this.work.then(() => this.handle(answer, generation)) },
      error => {
        // A lost connection is taken up again by onConnect.
        if (generation === this.generation) this.lastError = error
      },
    )
  }

  private async handle(answer: NextBlock, generation: number): Promise<void> {
    if (generation !== this.generation) return
    try {
      if (answer.direction === 'forward') await this.rollForward(answer.block, generation)
      else this.rollBackward(answer.point)
    } catch (error) {
      // A block the index could not apply stops following on this connection (setting
      // synchronisation up again on it would race the nextBlock requests still in flight): a new
      // one is opened after a pause. Meanwhile reads fail at once, saying why.
      this.stall(error)
      this.generation++
      setTimeout(() => this.rpc.reconnect(), RETRY_MS).unref()
      return
    }
    if (generation !== this.generation) return
    this.reportedTip = answer.tip
    if (answer.tip && answer.tip !== 'origin' && answer.tip.height === 0) await this.holdGenesis(answer.tip.id, answer.tip.slot)
    if (generation !== this.generation) return
    this.notifyWaiters()
    this.requestNext(generation)
  }

  private rollBackward(point: Point): void {
    const slot = point === 'origin' ? -1 : point.slot
    while (this.blocks.length && this.blocks.at(-1)!.slot > slot) this.dropNewest()
    if (this.blocks.length) return
    if (this.floor === null || point === 'origin' || (this.floor !== 'origin' && point.slot < this.floor.slot)) this.floor = point
  }

  private dropAll(): void {
    while (this.blocks.length) this.dropNewest()
    this.floor = null
  }

  private dropNewest(): void {
    const block = this.blocks.pop()!
    this.blocksByHash.delete(block.hash)
    for (const undo of block.undo.reverse()) undo()
  }

  private evictOldest(): void {
    const block = this.blocks.shift()!
    this.blocksByHash.delete(block.hash)
    for (const evict of block.evict) evict()
    this.floor = pointOf(block)
  }

  /**
   * The genesis block of a chain followed from its origin. Chain synchronisation delivers no block
   * at height 0 (the genesis configuration describes the initial distribution): it is held empty,
   * under the hash its first block names (or the node's tip, while it is the only block), so the
   * tip, block 0 and epoch 0 answer as on the chain, with the outputs it made as `genesisOutputs`
   * tells them (their pseudo transactions have no inputs, fee, size or certificates; one that made
   * no output is not seen).
   */
  private async holdGenesis(hash: string, slot: number): Promise<void> {
    if (this.floor !== 'origin' || this.blocks.length) return
    const outputs = await this.readGenesisOutputs({ slot, id: hash })
    if (this.floor !== 'origin' || this.blocks.length) return
    const block: HeldBlock = {
      hash, height: 0, slot, size: 0, previousBlock: null, slotLeader: `ShelleyGenesis-${hash.slice(0, 16)}`,
      ...this.clock!.place(slot), txs: [], output: 0n, fees: 0n, undo: [], evict: [],
    }
    this.holdGenesisTransactions(block, outputs)
    this.appendTo(this.epochs, block.epoch, block, block)
    this.blocks.push(block)
    this.blocksByHash.set(block.hash, block)
  }

  /** The genesis block's outputs; none when they cannot be read (reads then say so). */
  private async readGenesisOutputs(genesis: map.OgmiosPoint): Promise<GenesisOutput[]> {
    if (!this.genesisOutputs) return []
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.genesisOutputs(genesis)
      } catch (error) {
        if (attempt >= GENESIS_ATTEMPTS) {
          this.lastError = error
          return []
        }
        await new Promise(resolve => setTimeout(resolve, RETRY_MS))
      }
    }
  }

  private holdGenesisTransactions(block: HeldBlock, outputs: GenesisOutput[]): void {
    const byTransaction = new Map<string, GenesisOutput[]>()
    for (const output of outputs) byTransaction.set(output.txHash, [...(byTransaction.get(output.txHash) ?? []), output])
    for (const [hash, made] of byTransaction) {
      const held: HeldTx = {
        hash, block, index: made[0].txIndex, fee: 0n, deposit: 0n, size: 0, invalidBefore: null, invalidHereafter: null, validContract: true,
        inputs: [], outputs: made.map(({ outputIndex, content }) => ({ outputIndex, content })), metadata: [], counts: NO_COUNTS,
      }
      this.txs.set(hash, held)
      block.txs.push(held)
      const forget = () => this.txs.delete(hash)
      block.undo.push(forget)
      block.evict.push(forget)
      for (const { outputIndex, content } of made) {
        this.holdOutput(map.refOf(hash, outputIndex), content, block)
        block.output += BigInt(content.lovelace)
      }
      for (const address of new Set(made.map(output => output.content.address))) this.appendTo(this.addressTxs, address, held, block)
      for (const { content } of made) this.noteAccountAddress(content.address, block)
    }
  }

  private async rollForward(ogmiosBlock: map.OgmiosBlock, generation: number): Promise<void> {
    const resolved = await this.resolveUnheldInputs(ogmiosBlock.transactions ?? [])
    if (generation !== this.generation) return
    const figures = map.blockFigures(ogmiosBlock)
    if (figures.height === 1 && figures.previousBlock) await this.holdGenesis(figures.previousBlock, 0)
    if (generation !== this.generation) return
    const transactions = ogmiosBlock.transactions ?? []
    const block: HeldBlock = {
      ...figures,
      ...this.clock!.place(figures.slot),
      txs: [],
      output: sum(transactions, map.createdLovelace),
      fees: sum(transactions, map.feeOf),
      undo: [],
      evict: [],
    }
    try {
      transactions.forEach((tx, index) => this.applyTransaction(tx, block, index, resolved))
      this.appendTo(this.epochs, block.epoch, block, block)
    } catch (error) {
      for (const undo of block.undo.reverse()) undo()
      throw error
    }
    this.blocks.push(block)
    this.blocksByHash.set(block.hash, block)
    this.applied++
    while (this.blocks.length > this.maxBlocks) this.evictOldest()
  }

  /** The outputs the block's transactions read that the index does not hold (nor the block itself makes), from the resolver. */
  private async resolveUnheldInputs(transactions: map.OgmiosTransaction[]): Promise<Map<string, ChainOutputContent | null>> {
    const resolved = new Map<string, ChainOutputContent | null>()
    if (!this.resolveOutput) return resolved
    const madeHere = new Set(transactions.flatMap(tx => map.createdOutputs(tx).map(([index]) => map.refOf(tx.id, index))))
    const wanted = transactions.flatMap(map.inputReferences).filter(ref => {
      const key = map.refOf(ref.txHash, ref.outputIndex)
      return !this.outputs.has(key) && !madeHere.has(key)
    })
    await Promise.all(wanted.map(async ref => resolved.set(map.refOf(ref.txHash, ref.outputIndex), await this.resolve(ref))))
    return resolved
  }

  // ---- applying a transaction -------------------------------------------------------------

  private applyTransaction(tx: map.OgmiosTransaction, block: HeldBlock, index: number, resolved: Map<string, ChainOutputContent | null>): void {
    const inputs = map.inputReferences(tx).map(ref => {
      const key = map.refOf(ref.txHash, ref.outputIndex)
      return { ref, content: this.outputs.get(key)?.content ?? resolved.get(key) ?? null }
    })
    const touched = new Set<string>()
    for (const ref of map.spentReferences(tx)) {
      const key = map.refOf(ref.transaction.id, ref.index)
      const held = this.outputs.get(key)
      if (held) this.markSpent(held, tx.id, block)
      const address = (held?.content ?? resolved.get(key))?.address
      if (address) touched.add(address)
    }
    const outputs = map.createdOutputs(tx).map(([outputIndex, output]) => {
      const content = map.toOutputContent(output)
      this.holdOutput(map.refOf(tx.id, outputIndex), content, block)
      touched.add(content.address)
      return { outputIndex, content }
    })
    const spentContents = inputs.filter(input => input.ref.kind === 'spent').map(input => input.content)
    const held: HeldTx = {
      hash: tx.id,
      block,
      index,
      fee: map.feeOf(tx),
      deposit: map.depositOf(tx, spentContents),
      size: map.sizeOf(tx),
      invalidBefore: map.invalidBefore(tx),
      invalidHereafter: map.invalidHereafter(tx),
      validContract: map.isValidContract(tx),
      inputs,
      outputs,
      metadata: map.toMetadata(tx),
      counts: map.transactionCounts(tx),
    }
    this.txs.set(held.hash, held)
    block.txs.push(held)
    const forget = () => this.txs.delete(held.hash)
    block.undo.push(forget)
    block.evict.push(forget)
    for (const address of touched) this.appendTo(this.addressTxs, address, held, block)
    for (const [unit, quantity] of map.mintedUnits(tx)) this.appendTo(this.assetEvents, unit, map.toAssetHistoryEntry(tx.id, quantity), block)
    for (const { content } of outputs) this.noteAccountAddress(content.address, block)
    if (held.validContract) this.applyEffects(tx, block)
  }

  private markSpent(output: HeldOutput, spender: string, block: HeldBlock): void {
    const before = output.spentBy
    output.spentBy = spender
    block.undo.push(() => { output.spentBy = before })
  }

  private holdOutput(key: string, content: ChainOutputContent, block: HeldBlock): void {
    this.outputs.set(key, { content, spentBy: null })
    const forget = () => this.outputs.delete(key)
    block.undo.push(forget)
    block.evict.push(forget)
  }

  /** Appends to a chain-ordered list: a rollback takes the entry off its end, eviction off its start. */
  private appendTo<K, T>(lists: Map<K, T[]>, key: K, item: T, block: HeldBlock): void {
    let list = lists.get(key)
    if (!list) lists.set(key, (list = []))
    list.push(item)
    const drop = (take: () => void) => () => {
      take()
      if (!list.length && lists.get(key) === list) lists.delete(key)
    }
    block.undo.push(drop(() => list.pop()))
    block.evict.push(drop(() => list.shift()))
  }

  private noteAccountAddress(address: string, block: HeldBlock): void {
    const stakeAddress = map.stakeAddressOfAddress(address)
    if (!stakeAddress) return
    const account = this.retainAccount(stakeAddress, block)
    account.addresses.set(address, (account.addresses.get(address) ?? 0) + 1)
    const release = () => {
      const left = (account.addresses.get(address) ?? 1) - 1
      if (left > 0) account.addresses.set(address, left)
      else account.addresses.delete(address)
    }
    // Run before the account's own release (undo runs newest first, eviction in order).
    block.undo.push(release)
    block.evict.unshift(release)
  }

  private retainAccount(stakeAddress: string, block: HeldBlock): AccountState {
    let account = this.accounts.get(stakeAddress)
    if (!account) this.accounts.set(stakeAddress, (account = newAccount()))
    account.references++
    const held = account
    const release = () => {
      held.references--
      if (held.references === 0 && !held.pinned && this.accounts.get(stakeAddress) === held) this.accounts.delete(stakeAddress)
    }
    block.undo.push(release)
    block.evict.push(release)
    return account
  }

  private delegate(account: AccountState, change: Partial<Delegation>, block: HeldBlock): void {
    const before: Delegation = { registered: account.registered, pool: account.pool, activeEpoch: account.activeEpoch }
    Object.assign(account, change)
    block.undo.push(() => Object.assign(account, before))
  }

  /** Certificates and withdrawals: what a transaction whose scripts passed changes of the accounts. */
  private applyEffects(tx: map.OgmiosTransaction, block: HeldBlock): void {
    for (const cert of tx.certificates ?? []) {
      if (!cert.credential) continue
      const account = this.retainAccount(map.stakeAddressOfCredential(cert.credential, cert.from, this.networkId ?? 0), block)
      if (cert.type === 'stakeCredentialRegistration') this.delegate(account, { registered: true }, block)
      if (cert.type === 'stakeCredentialDeregistration') this.delegate(account, { registered: false, pool: null, activeEpoch: null }, block)
      if (cert.type === 'stakeDelegation' && cert.stakePool) this.delegate(account, { pool: cert.stakePool.id, activeEpoch: block.epoch + 1 }, block)
    }
    for (const { stakeAddress, amount } of map.withdrawalsOf(tx)) {
      const account = this.retainAccount(stakeAddress, block)
      account.withdrawals += amount
      const takeBack = () => { account.withdrawals -= amount }
      block.undo.push(takeBack)
      block.evict.unshift(takeBack)
    }
  }
}

function newAccount(): AccountState {
  return { registered: false, pool: null, activeEpoch: null, withdrawals: 0n, addresses: new Map(), references: 0, pinned: false }
}

const pointOf = (block: HeldBlock): map.OgmiosPoint => ({ slot: block.slot, id: block.hash })

function toAddressTransaction(tx: HeldTx): ChainAddressTransaction {
  return { txHash: tx.hash, txIndex: tx.index, blockHeight: tx.block.height, blockTime: tx.block.time }
}

function credentialParams(credentials: { hash: string; script: boolean }[]): Record<string, string[]> {
  const keys = credentials.filter(credential => !credential.script).map(credential => credential.hash)
  const scripts = credentials.filter(credential => credential.script).map(credential => credential.hash)
  return { ...(keys.length ? { keys } : {}), ...(scripts.length ? { scripts } : {}) }
}

/** The credential of a stake address: its hash, and whether a script's. */
function credentialOf(stakeAddress: string): { hash: string; script: boolean } {
  const credential = CSL.RewardAddress.from_address(CSL.Address.from_bech32(stakeAddress))!.payment_cred()
  const key = credential.to_keyhash()
  return key ? { hash: key.to_hex(), script: false } : { hash: credential.to_scripthash()!.to_hex(), script: true }
}
