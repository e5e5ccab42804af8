import cds from '@sap/cds'
import {
  Blocks, Epochs, Transactions, TransactionInputs, TransactionOutputs, TransactionInputAssets, TransactionOutputAssets,
  TransactionMetadata_, Addresses, AddressAssets, AddressUTxOs, UTxOAssets, AddressTransactions, Accounts, Pools, Dreps,
  LedgerProtocolParameters, NetworkInformation_, AssetHistory_, IndexMarks, ListEntries,
} from '#cds-models/chaina'
import { LIST_PAGE_SIZE, type ChainAPort, type ChainBlock, type ChainGenesis, type ListPage } from '../chains/chain-a/port.ts'
import type { TtlKind } from '../chains/chain-a/config.ts'
import type { ChainAService } from '../chains/chain-a/index.ts'
import { settleAll } from '../lib/settle-all.ts'
import { SingleFlight } from '../lib/single-flight.ts'
import { recordIndexLookups } from '../metrics/instruments.ts'
import * as rows from './rows.ts'
import { MAX_INDEXED_PER_READ, MAX_LIST_PAGES, eachSettled, pagesFor, type ListWindow } from './list-window.ts'

const { SELECT, UPSERT, DELETE } = cds.ql

/** Upstream lists; each page of one is marked `<parent>|<order>|<page>`. */
export type ListKind =
  | 'addressTransactions' | 'assetHistory' | 'blockTransactions' | 'epochBlocks'
  | 'pools' | 'dreps' | 'poolDelegators' | 'drepDelegators' | 'accountAddresses'

/** What an index mark records, and how long each kind stays fresh. */
export type MarkKind =
  | 'tip' | 'block' | 'height' | 'epoch' | 'parameters' | 'network' | 'transaction'
  | 'address' | 'account' | 'pool' | 'drep' | ListKind

export const TTL_OF: Record<MarkKind, TtlKind> = {
  tip: 'tip',
  block: 'transaction',
  height: 'transaction',
  epoch: 'epoch',
  parameters: 'parameters',
  network: 'network',
  transaction: 'transaction',
  address: 'address',
  account: 'account',
  pool: 'pool',
  drep: 'drep',
  addressTransactions: 'address',
  assetHistory: 'assetHistory',
  blockTransactions: 'transaction',
  epochBlocks: 'epoch',
  pools: 'pool',
  dreps: 'drep',
  poolDelegators: 'account',
  drepDelegators: 'account',
  accountAddresses: 'account',
}

export interface Mark {
  fetchedAt: number
  final: boolean
  /** Items of a list page. */
  items?: number
}

/** What `ensure` stores: whether the data can never change again, and for a list page its size. */
type Stored = boolean | { final: boolean; items: number }

/** An upstream list of keys whose items are indexed one by one (see ListEntries). */
interface KeyList {
  kind: ListKind
  parent: string
  load: (page: ListPage) => Promise<string[] | null>
  /** Indexes one listed item. */
  index: (key: string) => Promise<unknown>
  /** Whether the list can no longer change. */
  final?: () => Promise<boolean>
}

/** An upstream list whose items are rows of their own (stored page by page). */
interface RowList<T> {
  kind: ListKind
  parent: string
  load: (page: ListPage) => Promise<T[] | null>
  store: (items: T[] | null, page: ListPage) => Promise<void>
  /** Whether the list can no longer change. */
  final?: () => Promise<boolean>
}

/** Upstream calls that run at once when one read indexes many listed items. */
const PARALLEL_ITEMS = 8

/** Every cache table, in an order that deletes children before parents. */
const CACHE_TABLES = [
  TransactionInputAssets, TransactionOutputAssets, TransactionInputs, TransactionOutputs, TransactionMetadata_, Transactions,
  UTxOAssets, AddressUTxOs, AddressAssets, AddressTransactions, Addresses, Accounts, Pools, Dreps, Blocks, Epochs,
  LedgerProtocolParameters, NetworkInformation_, AssetHistory_, ListEntries, IndexMarks,
]

/** Followers that arrive just after a leader's upstream call reuse its answer this long (at most the TTL). */
export const FLIGHT_HOLD_MS = 2000
/** Bound on remembered marks; the map is cleared when it grows past it. */
const MEMORY_LIMIT = 50_000

/** The chain-a service as the index uses it: its port, and the chain's genesis it holds for every service. */
export type IndexedChain = Pick<ChainAService, 'port' | 'networkName' | 'genesis'>

/**
 * What every entity family of the chain-A index shares: the upstream port, the marks that keep rows
 * fresh (TTL, finality, single flight), the tip finality is measured against, and list paging.
 * Each `ensure…` makes sure the rows for one key are in the database and fresh: immutable data
 * (deeper than the security parameter) once, mutable data again after its TTL. Concurrent misses
 * for one key make one upstream call; every caller stores the answer in its own transaction
 * (idempotent UPSERTs), so no caller depends on another's commit.
 */
export class IndexCore {
  private readonly chain: IndexedChain
  readonly ttlSeconds: Record<TtlKind, number>
  readonly flights = new SingleFlight<unknown>()
  private readonly memory = new Map<string, Mark>()
  /** Marks a request has already seen or written: it need not check them again. */
  private readonly seenBy = new WeakMap<object, Map<string, Mark>>()
  latestTip?: { height: number; epoch: number }
  latestEpochNumber?: number

  constructor(chain: IndexedChain, ttlSeconds: Record<TtlKind, number>) {
    this.chain = chain
    this.ttlSeconds = ttlSeconds
  }

  get network(): string {
    return this.chain.networkName
  }

  /** Empties the cache and what is remembered of it (the upstream serves another chain than it was filled from). */
  async purge(): Promise<void> {
    for (const table of CACHE_TABLES) await DELETE.from(table)
    this.memory.clear()
    this.seenInRequest()?.clear()
    this.flights.clear()
    this.latestTip = undefined
    this.latestEpochNumber = undefined
  }

  async tip(): Promise<void> {
    await this.ensure('tip', 'latest', () => this.port().tip(), async (block: ChainBlock) => {
      await this.storeBlocks([block], ['height'])
      this.latestTip = { height: block.height, epoch: block.epoch }
      return false
    })
  }

  async tipHeight(): Promise<number> {
    await this.tip()
    if (this.latestTip) return this.latestTip.height
    const newest = await SELECT.one.from(Blocks).columns('height', 'epoch').orderBy('height desc')
    return newest?.height ?? 0
  }

  async tipEpoch(): Promise<number> {
    await this.tip()
    if (this.latestTip) return this.latestTip.epoch
    const newest = await SELECT.one.from(Blocks).columns('height', 'epoch').orderBy('height desc')
    return newest?.epoch ?? 0
  }

  async securityParam(): Promise<number> {
    return (await this.genesis()).securityParam
  }

  port(): ChainAPort {
    return this.chain.port
  }

  genesis(): Promise<ChainGenesis> {
    return this.chain.genesis()
  }

  /** Stores blocks and marks them; a block another took the place of (a rollback) leaves the index. */
  async storeBlocks(blocks: ChainBlock[], marks: ('block' | 'height')[]): Promise<void> {
    if (!blocks.length) return
    await UPSERT.into(Blocks).entries(blocks.map(rows.blockRow))
    await DELETE.from(Blocks).where({ height: { in: blocks.map(block => block.height) } }).and({ hash: { 'not in': blocks.map(block => block.hash) } })
    const securityParam = await this.securityParam()
    for (const kind of marks) {
      await this.mark(kind, blocks.map(block => ({ id: kind === 'block' ? block.hash : String(block.height), final: block.confirmations >= securityParam })))
    }
  }

  /** Forgets what is known of a key, so the next read asks the upstream (after a submit, say). */
  async invalidate(kind: MarkKind, ref: string): Promise<void> {
    this.forget(`${kind}:${ref}`)
    await DELETE.from(IndexMarks).where({ kind, id: ref })
  }

  /** Forgets keys of one kind: their marks and what is remembered of them. */
  async forgetMarks(kind: MarkKind, ids: string[]): Promise<void> {
    for (const id of ids) this.forget(`${kind}:${id}`)
    for (let start = 0; start < ids.length; start += STALE_CHECK_CHUNK) {
      await DELETE.from(IndexMarks).where({ kind, id: { in: ids.slice(start, start + STALE_CHECK_CHUNK) } })
    }
  }

  /**
   * Makes the rows of one key present and fresh. `store` writes the upstream answer and tells
   * whether it can never change again (then it is never fetched again). On a miss, `alongside`
   * runs in parallel with the upstream call (other data the store will need). Answers the mark.
   */
  async ensure<T>(
    kind: Exclude<MarkKind, 'chain'>, ref: string, load: () => Promise<T>, store: (data: T) => Promise<Stored>,
    alongside?: () => Promise<unknown>,
  ): Promise<Mark> {
    const key = `${kind}:${ref}`
    const seen = this.seenInRequest()
    const remembered = seen?.get(key) ?? this.memory.get(key)
    if (remembered && this.isFresh(kind, remembered)) {
      recordIndexLookups(kind, 1, 0)
      return remembered
    }
    const stored = await SELECT.one.from(IndexMarks).where({ kind, id: ref })
    const mark = stored && toMark(stored)
    if (mark && this.isFresh(kind, mark)) {
      recordIndexLookups(kind, 1, 0)
      seen?.set(key, mark)
      this.rememberAfterCommit([[key, mark]])
      return mark
    }
    recordIndexLookups(kind, 0, 1)
    const holdMs = Math.min(FLIGHT_HOLD_MS, this.ttlSeconds[TTL_OF[kind]] * 1000)
    const [data] = (await settleAll([this.flights.run(key, load, holdMs), alongside?.()])) as [T, unknown]
    const outcome = await store(data)
    const fresh: Mark = typeof outcome === 'boolean' ? { fetchedAt: Date.now(), final: outcome } : { fetchedAt: Date.now(), ...outcome }
    await UPSERT.into(IndexMarks).entries({ kind, id: ref, fetchedAt: new Date(fresh.fetchedAt).toISOString(), final: fresh.final, items: fresh.items ?? null })
    seen?.set(key, fresh)
    this.rememberAfterCommit([[key, fresh]])
    return fresh
  }

  /** Marks keys indexed now (data stored without `ensure`, a page of a list at a time). */
  async mark(kind: Exclude<MarkKind, 'chain'>, entries: { id: string; final: boolean; items?: number }[]): Promise<void> {
    if (!entries.length) return
    const fetchedAt = new Date()
    await UPSERT.into(IndexMarks).entries(entries.map(({ id, final, items }) => ({ kind, id, fetchedAt: fetchedAt.toISOString(), final, ...(items === undefined ? {} : { items }) })))
    const seen = this.seenInRequest()
    const remembered = entries.map(({ id, final, items }): [string, Mark] => [`${kind}:${id}`, { fetchedAt: fetchedAt.getTime(), final, items }])
    for (const [key, mark] of remembered) seen?.set(key, mark)
    this.rememberAfterCommit(remembered)
  }

  /** Of the keys, those without a fresh mark of the kind. */
  async staleIds(kind: Exclude<MarkKind, 'chain'>, ids: string[]): Promise<string[]> {
    const seen = this.seenInRequest()
    const unknown = ids.filter(id => !this.isFresh(kind, seen?.get(`${kind}:${id}`) ?? this.memory.get(`${kind}:${id}`)))
    const fresh = new Set<string>()
    for (let start = 0; start < unknown.length; start += STALE_CHECK_CHUNK) {
      const stored = await SELECT.from(IndexMarks).where({ kind, id: { in: unknown.slice(start, start + STALE_CHECK_CHUNK) } })
      const remembered: [string, Mark][] = []
      for (const entry of stored) {
        const mark = toMark(entry)
        if (!this.isFresh(kind, mark)) continue
        fresh.add(entry.id!)
        seen?.set(`${kind}:${entry.id}`, mark)
        remembered.push([`${kind}:${entry.id}`, mark])
      }
      this.rememberAfterCommit(remembered)
    }
    const stale = unknown.filter(id => !fresh.has(id))
    recordIndexLookups(kind, ids.length - stale.length, stale.length)
    return stale
  }

  private forget(key: string) {
    this.memory.delete(key)
    this.seenInRequest()?.delete(key)
    this.flights.forget(key)
  }

  async forgetPages(kind: ListKind, parent: string, orders: ('asc' | 'desc')[], from: number): Promise<void> {
    const refs = orders.flatMap(order => span(from, MAX_LIST_PAGES).map(page => pageRef(parent, { page, order })))
    for (const ref of refs) this.forget(`${kind}:${ref}`)
    await DELETE.from(IndexMarks).where({ kind, id: { in: refs } })
  }

  /** A list whose items are rows: the pages the window needs (every page, up to the bound, for others). */
  async rowList<T>(list: RowList<T>, window: ListWindow, wholeOrder: 'asc' | 'desc' = 'asc'): Promise<void> {
    if (window.kind === 'ordered') return this.readPages(list, window.fromEnd ? 'desc' : 'asc', pagesFor(window.upTo))
    await this.readPages(list, wholeOrder, MAX_LIST_PAGES)
  }

  /** A list of keys: its pages as ListEntries, then the items the window holds are indexed. */
  async keyList(list: KeyList, window: ListWindow): Promise<void> {
    const order = window.kind === 'ordered' && window.fromEnd ? 'desc' : 'asc'
    const name = `${list.kind}|${order}`
    await this.readPages({
      kind: list.kind,
      parent: list.parent,
      load: list.load,
      final: list.final,
      store: async (keys, page) => {
        await DELETE.from(ListEntries).where({ kind: name, parent: list.parent, position: { in: span(rank(page, 0), rank(page, LIST_PAGE_SIZE - 1)) } })
        await upsertAll(ListEntries, (keys ?? []).map((item, i) => ({ kind: name, parent: list.parent, position: rank(page, i), item })))
      },
    }, order, window.kind === 'ordered' ? pagesFor(window.upTo) : MAX_LIST_PAGES)
    const listed = (await SELECT.from(ListEntries).columns('item').where({ kind: name, parent: list.parent }).orderBy('position')).map(entry => entry.item!)
    await eachSettled(windowOf(listed, window).slice(0, MAX_INDEXED_PER_READ), PARALLEL_ITEMS, list.index)
  }

  /** Pages 1.. of a list in one order, until `pages` are read or a short page ends the list. */
  private async readPages<T>(list: RowList<T>, order: 'asc' | 'desc', pages: number): Promise<void> {
    for (let number = 1; number <= pages; number++) {
      const page: ListPage = { page: number, order }
      const mark = await this.ensure(list.kind, pageRef(list.parent, page), () => list.load(page), async (items: T[] | null) => {
        // Later pages were cut from the list as it was then; its first page is the new start.
        if (number === 1) await this.forgetPages(list.kind, list.parent, [order], 2)
        await list.store(items, page)
        return { final: (await list.final?.()) ?? false, items: items?.length ?? 0 }
      })
      if ((mark.items ?? 0) < LIST_PAGE_SIZE) return
    }
  }

  /** The marks the current request has seen; its own writes are visible to it before they commit. */
  private seenInRequest(): Map<string, Mark> | undefined {
    const context = cds.context as object | undefined
    if (!context) return undefined
    let seen = this.seenBy.get(context)
    if (!seen) this.seenBy.set(context, (seen = new Map()))
    return seen
  }

  private isFresh(kind: Exclude<MarkKind, 'chain'>, mark: Mark | undefined): boolean {
    if (!mark) return false
    return mark.final || Date.now() - mark.fetchedAt < this.ttlSeconds[TTL_OF[kind]] * 1000
  }

  /** Other requests may skip the database check only once these rows are visible to them. */
  private rememberAfterCommit(entries: [key: string, mark: Mark][]) {
    if (!entries.length) return
    const remember = () => {
      for (const [key, mark] of entries) {
        if (this.memory.size >= MEMORY_LIMIT) this.memory.clear()
        this.memory.set(key, mark)
      }
    }
    const context = cds.context as any
    if (context?.on) context.on('succeeded', remember)
    else remember()
  }
}

/** Marks checked per query when a read needs many keys at once. */
export const STALE_CHECK_CHUNK = 500

const toMark = (stored: { fetchedAt?: string | null; final?: boolean | null; items?: number | null }): Mark => ({
  fetchedAt: Date.parse(stored.fetchedAt!),
  final: !!stored.final,
  items: stored.items ?? undefined,
})

export const pageRef = (parent: string, { page, order }: ListPage) => `${parent}|${order}|${page}`

/** Position in a list of the `index`-th item of a page. */
export const rank = ({ page }: ListPage, index: number) => (page - 1) * LIST_PAGE_SIZE + index

/** The pages a reader of a whole list of `items` reads: up to the first one that is not full. */
export const pagesOf = (items: number) => Math.floor(items / LIST_PAGE_SIZE) + 1

/** The integers from `from` to `to`, both included. */
export const span = (from: number, to: number) => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i)

/** Ascending integers as runs of consecutive values, each at most one upstream page long. */
export function pagedRuns(values: number[]): [number, number][] {
  const runs: [number, number][] = []
  for (const value of [...values].sort((a, b) => a - b)) {
    const last = runs[runs.length - 1]
    if (last && value === last[1] + 1 && value - last[0] < LIST_PAGE_SIZE) last[1] = value
    else runs.push([value, value])
  }
  return runs
}

/** The listed keys a window holds, in the window's order. */
function windowOf(keys: string[], window: ListWindow): string[] {
  if (window.kind === 'ordered') return keys.slice(0, window.upTo)
  if (window.kind === 'whole') return keys
  const sorted = [...keys].sort()
  return (window.descending ? sorted.reverse() : sorted).slice(0, window.upTo)
}

export async function upsertAll(entity: any, entries: object[]) {
  if (entries.length) await UPSERT.into(entity).entries(entries)
}
