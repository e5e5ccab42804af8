import cds from '@sap/cds'
import type { ChainAIndex } from './indexer.ts'
import { EXPAND_ITEMS, eachSettled, type ListWindow } from './list-window.ts'
import { POOL_LIST_COLUMNS } from './rows.ts'
import {
  parseAddress, parseAssetUnit, parseBlockHash, parseDrepId, parseEpoch, parseOutputIndex, parsePoolId, parseStakeAddress, parseTxHash,
} from '../chains/chain-a/identifiers.ts'
import { badInput, isApiError, notFound } from '../lib/errors.ts'

/**
 * Which index work an OData read needs before the database answers it. A read names its data by
 * key predicates (`Transactions('…')`), by navigation (`Blocks('…')/transactions`, whose
 * association pins `blockHash`), by equality filters (`AddressUTxOs?$filter=address eq '…'`) and
 * by $expand; those "pinned" values pick what to index. A collection the upstream lists is read
 * as far as the answer window reaches ($skip + $top in the answer's order, see ListWindow); its
 * answer then follows the list's order unless the read orders otherwise.
 */

type Pins = Record<string, unknown>
type Row = Record<string, unknown>

/** The parts of CQN a read looks at: a SELECT, or an $expand column (which carries the same clauses). */
type Token = string | { ref?: string[]; val?: unknown; xpr?: Token[]; args?: Token[]; func?: string; list?: Token[] }
interface OrderItem {
  ref?: string[]
  sort?: 'asc' | 'desc'
  nulls?: 'first' | 'last'
  /** Added by the framework for stable paging, not by the client. */
  implicit?: boolean
}
type Segment = string | { id: string; where?: Token[] }
type Column = '*' | (Select & { ref?: string[]; expand?: Column[]; func?: string })
interface Select {
  from?: { ref: Segment[] }
  where?: Token[]
  orderBy?: OrderItem[]
  limit?: { rows?: { val: number }; offset?: { val: number } }
  columns?: Column[]
  one?: boolean
  count?: boolean
  groupBy?: unknown[]
}

/** The parts of a served entity's definition a read looks at. */
interface EntityDefinition {
  name: string
  keys?: Record<string, unknown>
  elements: Record<string, AssociationDefinition>
}
interface AssociationDefinition {
  name: string
  on?: Token[]
  is2many?: boolean
  _target: EntityDefinition
}

/** A list the upstream serves for a collection read, and how its order shows in the answer. */
interface NaturalOrder {
  columns: string[][]
  ascending: 'start' | 'end'
  reversible: boolean
}

interface Listing {
  /** The pinned columns that select the list (other equality filters narrow the answer). */
  by: string[]
  /**
   * Columns whose ascending order is the list's order, each with the columns that order alike;
   * `ascending`: which end of the list ascending order starts at; `reversible`: whether the
   * answer may also follow it descending.
   */
  natural?: NaturalOrder
  /** A list of these keys: a window of it can also be sorted by key. */
  key?: string
  /** Short enough (a block's transactions) to read whole when no $top bounds an $expand. */
  bounded?: boolean
  /** Indexes one row by its full key (else a keyed read indexes the list's first page). */
  keyed?: () => Promise<unknown>
  /** Rows the list leaves partial: the answer's rows are completed when the read needs more columns. */
  details?: { carried: string[]; complete: (index: ChainAIndex, row: Row) => Promise<unknown> }
  fill: (window: ListWindow) => Promise<unknown>
}

/** What a read of an entity set indexes first: one key's data, a list, or nothing (what is indexed). */
type Plan = { one: () => Promise<unknown> } | { list: Listing } | undefined
type Planner = (index: ChainAIndex, pins: Pins) => Plan

const has = (pins: Pins, name: string) => pins[name] !== undefined && pins[name] !== null
const one = (run: () => Promise<unknown>): Plan => ({ one: run })
const list = (listing: Listing): Plan => ({ list: listing })

const CHAIN_HEIGHT = [['height', 'slot', 'time']]

function parseHeight(value: unknown, target = 'height'): number {
  const height = Number(value)
  if (!Number.isSafeInteger(height) || height < 0) throw badInput('INVALID_BLOCK_HEIGHT', `'${String(value).slice(0, 40)}' is not a block height: expected an integer from 0`, target)
  return height
}

const transactionOf: Planner = (index, pins) => (has(pins, 'txHash') ? one(() => index.transaction(parseTxHash(pins.txHash, 'txHash'))) : undefined)
const addressOf: Planner = (index, pins) => (has(pins, 'address') ? one(() => index.address(parseAddress(pins.address, index.network))) : undefined)

const utxoOf: Planner = (index, pins) => {
  if (has(pins, 'address')) return addressOf(index, pins)
  if (has(pins, 'txHash') && has(pins, 'outputIndex')) return one(() => index.utxo(parseTxHash(pins.txHash, 'txHash'), parseOutputIndex(pins.outputIndex)))
}

function blocksPlan(index: ChainAIndex, pins: Pins): Plan {
  if (has(pins, 'hash')) return one(() => index.block(parseBlockHash(pins.hash)))
  if (has(pins, 'height')) return one(() => index.blockAtHeight(parseHeight(pins.height)))
  const natural: NaturalOrder = { columns: CHAIN_HEIGHT, ascending: 'start', reversible: true }
  if (has(pins, 'epoch')) {
    const epoch = parseEpoch(pins.epoch)
    return list({ by: ['epoch'], natural, key: 'hash', fill: window => index.epochBlocks(epoch, window) })
  }
  return list({ by: [], natural, fill: window => index.blocks(window) })
}

function transactionsPlan(index: ChainAIndex, pins: Pins): Plan {
  if (has(pins, 'hash')) return one(() => index.transaction(parseTxHash(pins.hash)))
  const block = has(pins, 'blockHash') ? parseBlockHash(pins.blockHash, 'blockHash') : has(pins, 'blockHeight') ? parseHeight(pins.blockHeight, 'blockHeight') : undefined
  if (block === undefined) return undefined
  return list({
    by: [typeof block === 'number' ? 'blockHeight' : 'blockHash'],
    natural: { columns: [['txIndex']], ascending: 'start', reversible: true },
    key: 'hash',
    bounded: true,
    fill: window => index.blockTransactions(block, window),
  })
}

function accountsPlan(index: ChainAIndex, pins: Pins): Plan {
  if (has(pins, 'stakeAddress')) return one(() => index.account(parseStakeAddress(pins.stakeAddress, index.network)))
  if (has(pins, 'poolId')) {
    const poolId = parsePoolId(pins.poolId)
    return list({ by: ['poolId'], key: 'stakeAddress', fill: window => index.poolDelegators(poolId, window) })
  }
  if (has(pins, 'drepId')) {
    const drepId = parseDrepId(pins.drepId)
    return list({ by: ['drepId'], key: 'stakeAddress', fill: window => index.drepDelegators(drepId, window) })
  }
}

const REGISTRATION_ORDER: NaturalOrder = { columns: [['position']], ascending: 'start', reversible: false }

/** The index plan per entity set, given what the read pins. */
const INDEX_STEPS: Record<string, Planner> = {
  NetworkInformation: index => one(() => index.networkInformation()),
  Blocks: blocksPlan,
  Epochs: (index, pins) =>
    has(pins, 'epoch')
      ? one(() => index.epoch(parseEpoch(pins.epoch)))
      : list({ by: [], natural: { columns: [['epoch']], ascending: 'start', reversible: true }, fill: window => index.epochs(window) }),
  Transactions: transactionsPlan,
  TransactionInputs: transactionOf,
  TransactionOutputs: transactionOf,
  TransactionInputAssets: transactionOf,
  TransactionOutputAssets: transactionOf,
  TransactionMetadata: transactionOf,
  Addresses: (index, pins) => {
    if (has(pins, 'address')) return addressOf(index, pins)
    if (!has(pins, 'stakeAddress')) return undefined
    const stakeAddress = parseStakeAddress(pins.stakeAddress, index.network)
    return list({ by: ['stakeAddress'], key: 'address', fill: window => index.accountAddresses(stakeAddress, window) })
  },
  AddressAssets: addressOf,
  AddressUTxOs: utxoOf,
  UTxOAssets: utxoOf,
  AddressTransactions: (index, pins) => {
    if (!has(pins, 'address')) return undefined
    const address = parseAddress(pins.address, index.network)
    return list({
      by: ['address'],
      natural: { columns: [['blockHeight', 'blockTime'], ['txIndex']], ascending: 'start', reversible: true },
      keyed: has(pins, 'txHash') ? () => index.addressTransaction(address, parseTxHash(pins.txHash, 'txHash')) : undefined,
      fill: window => index.addressTransactions(address, window),
    })
  },
  Accounts: accountsPlan,
  Pools: (index, pins) =>
    has(pins, 'poolId')
      ? one(() => index.pool(parsePoolId(pins.poolId)))
      : list({
        by: [],
        natural: REGISTRATION_ORDER,
        details: { carried: POOL_LIST_COLUMNS, complete: (index, row) => index.pool(String(row.poolId)) },
        fill: window => index.pools(window),
      }),
  Dreps: (index, pins) =>
    has(pins, 'drepId') ? one(() => index.drep(parseDrepId(pins.drepId))) : list({ by: [], natural: REGISTRATION_ORDER, fill: window => index.dreps(window) }),
  LedgerProtocolParameters: (index, pins) => one(() => index.parameters(has(pins, 'epoch') ? parseEpoch(pins.epoch) : undefined)),
  AssetHistory: (index, pins) => {
    if (!has(pins, 'unit')) return undefined
    const unit = parseAssetUnit(pins.unit)
    return list({
      by: ['unit'],
      natural: { columns: [['position']], ascending: 'end', reversible: false },
      fill: window => index.assetHistory(unit, window),
    })
  },
}

/** One read of an entity set: the top-level query, or one $expand of it (for one parent row). */
interface Read {
  definition: EntityDefinition
  pins: Pins
  one: boolean
  /** The SELECT (or $expand column) the database answers: where, orderBy, limit, columns. */
  select: Select
  /** Pins that come from the read's own $filter (the others from keys and navigation). */
  filterPins: Pins
  /** The $filter holds more than `column eq value` conditions. */
  narrowed: boolean
}

/** Runs the index work a READ request needs: its path, its target, then its $expand, level by level. */
export async function indexForRead(index: ChainAIndex, query: { SELECT: Select }): Promise<void> {
  const select = query.SELECT
  const segments = select.from?.ref ?? []
  if (!segments.length) return
  let definition = serviceEntity(segmentName(segments[0]))
  let pins = keyPins(segments[0])
  // Values read from the chain (not from the request) may name keys no request could ask for.
  let fromChain = false
  for (const segment of segments.slice(1)) {
    const parentRead: Read = { definition, pins, one: true, select: {}, filterPins: {}, narrowed: false }
    await (fromChain ? ignoringBadKeys(() => runPlan(index, parentRead)) : runPlan(index, parentRead))
    const association = definition.elements[segmentName(segment)]
    const parent: Row | undefined = await SELECT.one.from(definition.name).columns(sourcesOf(association)).where(pins)
    if (!parent) throw notFoundIn(localName(definition.name), pins)
    const derived = pinsFrom(association, parent)
    if (!derived) return
    definition = association._target
    pins = { ...derived, ...keyPins(segment) }
    fromChain = !Object.keys(keyPins(segment)).length
  }
  const { pins: filterPins, narrowed } = splitWhere(select.where)
  const read: Read = { definition, pins: { ...filterPins, ...pins }, one: !!select.one, select, filterPins, narrowed }
  await (fromChain ? ignoringBadKeys(() => runPlan(index, read)) : runPlan(index, read))
  await expand(index, read)
}

/** Indexes what one read needs; for a list, also makes the answer follow the list's order. */
async function runPlan(index: ChainAIndex, read: Read): Promise<void> {
  const plan = INDEX_STEPS[localName(read.definition.name)]?.(index, read.pins)
  if (!plan) return
  if ('one' in plan) return void (await plan.one())
  const { list } = plan
  if (read.one) return void (await (list.keyed?.() ?? list.fill(firstPage(list))))
  const window = windowFor(read, list)
  followOrder(read.select, window, list)
  await list.fill(window)
  if (list.details && needsMore(read.select, list.details.carried)) {
    const rows = await answerRows(read, [])
    await eachSettled(rows, PARALLEL_ROWS, row => list.details!.complete(index, row))
  }
}

/** Each $expand: the association's rows of every answer row, then their own $expand. */
async function expand(index: ChainAIndex, read: Read): Promise<void> {
  const columns = (read.select.columns ?? []).filter((column): column is Exclude<Column, '*'> => column !== '*' && !!column.expand && column.ref?.length === 1)
  if (!columns.length || read.select.groupBy) return
  const associations = columns.map(column => read.definition.elements[column.ref![0]])
  const sources = associations.flatMap(sourcesOf)
  // A keyed read whose key is all the associations need is its own parent row.
  const parents = read.one && sources.every(source => has(read.pins, source)) ? [read.pins] : await answerRows(read, sources)
  for (const [i, column] of columns.entries()) {
    const association = associations[i]
    const { pins: filterPins, narrowed } = splitWhere(column.where)
    await eachSettled(parents, PARALLEL_ROWS, async parent => {
      const pins = pinsFrom(association, parent)
      if (!pins) return
      const child: Read = {
        definition: association._target,
        pins: { ...filterPins, ...pins },
        one: !association.is2many,
        select: { ...column, from: { ref: [association._target.name] }, where: whereOf(pins, column.where), columns: column.expand },
        filterPins,
        narrowed,
      }
      await ignoringBadKeys(() => runPlan(index, child))
      // The order a list gives its answer applies to every parent's rows alike.
      if (child.select.orderBy) column.orderBy = child.select.orderBy
      await expand(index, child)
    })
  }
}

/** Rows an association found on chain may name keys no read could ask for (a special DRep, say). */
async function ignoringBadKeys(run: () => Promise<void>) {
  try {
    await run()
  } catch (error) {
    if (!(isApiError(error) && error.status === 400)) throw error
  }
}

/** Rows of the answer, as the database will answer the read: the given columns only. */
async function answerRows(read: Read, columns: string[]): Promise<Row[]> {
  const { select } = read
  const wanted = [...new Set([...Object.keys(read.definition.keys ?? {}), ...columns])]
  const query = { SELECT: { from: select.from, columns: wanted.map(name => ({ ref: [name] })), where: select.where, orderBy: select.orderBy, limit: select.limit, one: select.one } }
  const found: Row | Row[] | null = await cds.run(query as unknown as Parameters<typeof cds.run>[0])
  return found ? [found].flat() : []
}

/** Which part of the list the answer can hold (ListWindow). */
function windowFor(read: Read, listing: Listing): ListWindow {
  const { select } = read
  const narrowed = read.narrowed || Object.keys(read.filterPins).some(column => !listing.by.includes(column))
  if (narrowed || select.count || select.groupBy || isCount(select.columns)) return { kind: 'whole' }
  const rows = select.limit?.rows?.val
  const upTo = rows === undefined ? (listing.bounded ? Infinity : EXPAND_ITEMS) : rows + (select.limit?.offset?.val ?? 0)
  const order = clientOrder(select.orderBy)
  const natural = listing.natural && naturalDirection(order, listing.natural.columns)
  if (listing.natural && natural && (natural === 'asc' || listing.natural.reversible)) {
    return { kind: 'ordered', fromEnd: (natural === 'desc') !== (listing.natural.ascending === 'end'), upTo }
  }
  if (listing.key && (order.length === 0 || (order.length === 1 && order[0].ref?.[0] === listing.key))) {
    return { kind: 'byKey', descending: order[0]?.sort === 'desc', upTo }
  }
  return { kind: 'whole' }
}

/** The list's first upstream page, in its own order (or by key). */
function firstPage(listing: Listing): ListWindow {
  if (listing.natural) return { kind: 'ordered', fromEnd: listing.natural.ascending === 'end', upTo: EXPAND_ITEMS }
  if (listing.key) return { kind: 'byKey', descending: false, upTo: EXPAND_ITEMS }
  return { kind: 'whole' }
}

/**
 * The answer follows the window: the list's order (after the read's own, which it extends) or the
 * key, before the key order the framework adds for paging.
 */
function followOrder(select: Select, window: ListWindow, listing: Listing) {
  const given = clientOrder(select.orderBy)
  const implicit = (select.orderBy ?? []).filter(item => item.implicit)
  let added: OrderItem[] = []
  if (window.kind === 'ordered' && listing.natural) {
    const sort = (window.fromEnd !== (listing.natural.ascending === 'end')) ? 'desc' : 'asc'
    added = listing.natural.columns.slice(given.length).map(([column]) => ({ ref: [column], sort, nulls: 'last' }))
  } else if (window.kind === 'byKey' && listing.key && !given.length) {
    added = [{ ref: [listing.key], sort: window.descending ? 'desc' : 'asc' }]
  }
  if (!added.length) return
  const named = (item: OrderItem) => item.ref?.join('.')
  const present = new Set(given.map(named))
  select.orderBy = [...given, ...added.filter(item => !present.has(named(item))), ...implicit.filter(item => !added.some(a => named(a) === named(item)))]
}

/** 'asc' or 'desc' when the order is (a prefix of) the list's order in one direction; an empty order is ascending. */
function naturalDirection(order: OrderItem[], columns: string[][]): 'asc' | 'desc' | undefined {
  let direction: 'asc' | 'desc' | undefined
  for (const [i, item] of order.entries()) {
    if (item.ref?.length !== 1 || !columns[i]?.includes(item.ref[0])) return undefined
    const sort = item.sort === 'desc' ? 'desc' : 'asc'
    if (direction && direction !== sort) return undefined
    direction = sort
  }
  return direction ?? 'asc'
}

const clientOrder = (orderBy: OrderItem[] | undefined) => (orderBy ?? []).filter(item => !item.implicit)

const isCount = (columns: Column[] | undefined) => !!columns?.some(column => column !== '*' && column.func === 'count')

/** Whether the read selects, filters or orders by a column the list does not carry. */
function needsMore(select: Select, carried: string[]): boolean {
  const columns = select.columns ?? ['*']
  if (columns.some(column => column === '*' || (column.ref && !column.expand && !carried.includes(column.ref[0])))) return true
  return [...refsIn(select.where), ...refsIn(select.orderBy as Token[] | undefined)].some(column => !carried.includes(column))
}

function refsIn(tokens: Token[] | undefined): string[] {
  return (tokens ?? []).flatMap(token => (typeof token === 'string' ? [] : token.ref ? [token.ref[0]] : [...refsIn(token.xpr), ...refsIn(token.args)]))
}

export const localName = (name: string) => name.slice(name.lastIndexOf('.') + 1)

const NOT_FOUND_CODES: Record<string, string> = {
  Transactions: 'TRANSACTION_NOT_FOUND',
  Blocks: 'BLOCK_NOT_FOUND',
  Epochs: 'EPOCH_NOT_FOUND',
  Pools: 'POOL_NOT_FOUND',
  Accounts: 'ACCOUNT_NOT_FOUND',
  Dreps: 'DREP_NOT_FOUND',
  AddressUTxOs: 'UTXO_NOT_FOUND',
  LedgerProtocolParameters: 'PARAMETERS_NOT_FOUND',
}

/** Entities of the chain's history, which an upstream's own index may not reach back through. */
const HISTORY = new Set(['Transactions', 'Blocks', 'Epochs'])

/** A 404 whose code names what is missing; for the chain's history, how far back the upstream reaches when it does not reach its start. */
export const notFoundIn = (entity: string, key: unknown, coverage?: string) =>
  notFound(NOT_FOUND_CODES[entity] ?? 'NOT_FOUND', `No ${entity} entry with key ${JSON.stringify(key)}${coverage && HISTORY.has(entity) ? ` (${coverage})` : ''}`)

const segmentName = (segment: Segment): string => (typeof segment === 'string' ? segment : segment.id)
const keyPins = (segment: Segment): Pins => (typeof segment === 'object' && segment.where ? equalities(segment.where) : {})

function serviceEntity(name: string): EntityDefinition {
  const definition = cds.model!.definitions[name] as unknown as EntityDefinition | undefined
  if (!definition) throw new Error(`${name} is not an entity of the served model`)
  return definition
}

/** `target.x = source` pairs of an unmanaged association's on-condition. */
function onPairs(association: AssociationDefinition): { target: string; source: string }[] {
  const pairs: { target: string; source: string }[] = []
  const on = association.on ?? []
  for (let i = 0; i + 2 < on.length; i += 4) {
    const [left, right] = [on[i], on[i + 2]]
    if (typeof left === 'string' || typeof right === 'string' || !left.ref || !right.ref) continue
    const [targetSide, sourceSide] = left.ref[0] === association.name ? [left.ref, right.ref] : [right.ref, left.ref]
    pairs.push({ target: targetSide[1], source: sourceSide[0] })
  }
  return pairs
}

const sourcesOf = (association: AssociationDefinition) => onPairs(association).map(pair => pair.source)

/** The target's pinned values for one source row; undefined when a value is missing (no rows). */
function pinsFrom(association: AssociationDefinition, row: Row): Pins | undefined {
  const pins: Pins = {}
  for (const { target, source } of onPairs(association)) {
    if (row[source] === null || row[source] === undefined) return undefined
    pins[target] = row[source]
  }
  return pins
}

function whereOf(pins: Pins, where: Token[] | undefined): Token[] {
  const conditions = Object.entries(pins).flatMap(([column, val], i): Token[] => [...(i ? ['and'] : []), { ref: [column] }, '=', { val }])
  return where?.length ? [...conditions, 'and', { xpr: where }] : conditions
}

/** The `column = value` conditions of a filter, and whether it holds anything else. */
function splitWhere(where: Token[] | undefined): { pins: Pins; narrowed: boolean } {
  if (!where?.length) return { pins: {}, narrowed: false }
  const pins = equalities(where)
  return { pins, narrowed: where.length !== Object.keys(pins).length * 4 - 1 }
}

/** `a = 'x' and b = 1` → { a: 'x', b: 1 }; any `or` makes the filter pin nothing. */
function equalities(where: Token[]): Pins {
  if (where.includes('or')) return {}
  const pins: Pins = {}
  for (let i = 0; i + 2 < where.length; i++) {
    const [left, op, right] = [where[i], where[i + 1], where[i + 2]]
    if ((op !== '=' && op !== '==') || typeof left === 'string' || typeof right === 'string') continue
    if (left.ref && 'val' in right) pins[left.ref[left.ref.length - 1]] = right.val
    else if (right.ref && 'val' in left) pins[right.ref[right.ref.length - 1]] = left.val
  }
  return pins
}

/** Answer rows of one read whose associations are indexed at once. */
const PARALLEL_ROWS = 4
