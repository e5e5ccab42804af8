import cds from '@sap/cds'
import { Blocks, ReorgLog, SyncState, SyncState_, Transactions } from '#cds-models/chaina'
import type { SyncState as SyncRow } from '#cds-models/chaina'
import type { ChainBlock } from '../chains/chain-a/port.ts'
import { SyncStateRow, now, type Position, type SyncStatusValue } from '../lib/sync-state.ts'
import type { ChainAIndex, FollowedBlock } from './indexer.ts'
import { isoTime } from './rows.ts'

/**
 * The chain-A follower's writes, each in the caller's transaction, each starting with a guarded
 * UPDATE of the SyncState row (lib/sync-state.ts). The rows themselves are written and forgotten by
 * the read index (ChainAIndex), exactly as lazy reads write them. The position's hash is null below
 * the start height.
 */

const { SELECT, DELETE } = cds.ql

export const SYNC_ID = 'chain-a'

export const syncState = new SyncStateRow<SyncRow>(SyncState, ReorgLog, SYNC_ID)

export const readSyncState = (): Promise<SyncRow | undefined> => syncState.read()

/** The follower's state is of another chain (the upstream changed): the next run starts a fresh index. */
export async function forgetSyncState(): Promise<void> {
  await DELETE.from(SyncState_).where({ ID: SYNC_ID })
}

export const positionOf = (state: SyncRow): Position => ({ height: state.indexedHeight ?? (state.startHeight ?? 0) - 1, hash: state.indexedHash ?? null })

/** A fresh index starts at `height`: the position is the block below it (whose hash it does not know). */
export async function startAt(owner: string, height: number): Promise<Position> {
  await syncState.guardedUpdate({ startHeight: height, indexedHeight: height - 1, indexedHash: null, indexedAt: now() }, { ID: SYNC_ID, leaseOwner: owner, startHeight: null })
  return { height: height - 1, hash: null }
}

/**
 * Writes a contiguous run of blocks following `at` (the first block's previous block is `at.hash`)
 * with their transactions, and moves the position to the last one. Renews the lease.
 */
export async function writeBlocks(index: ChainAIndex, owner: string, at: Position, batch: FollowedBlock[], leaseMs: number): Promise<Position> {
  const last = batch[batch.length - 1].block
  const transactions = batch.reduce((sum, entry) => sum + entry.transactions.length, 0)
  await syncState.advance(owner, at, { height: last.height, hash: last.hash, blockAt: isoTime(last.time) }, batch.length, transactions, leaseMs)
  await index.storeFollowed(batch)
  return { height: last.height, hash: last.hash }
}

interface Rollback {
  forkHeight: number
  blocksRolledBack: number
  transactionsRolledBack: number
  position: Position
}

/**
 * A reorg: everything at or above `forkHeight` leaves the index (see ChainAIndex.forgetFrom), the
 * position moves to the block below, and the ReorgLog records it.
 */
export async function rollBackFrom(index: ChainAIndex, forkHeight: number, newTipHash: string, owner: string, at: Position): Promise<Rollback> {
  // Lock (and check) the SyncState row before reading what to remove.
  await syncState.guardedUpdate({ indexedAt: now() }, syncState.heldAt(owner, at))
  const state = (await readSyncState()) as SyncRow
  const blocksRolledBack = Math.max(0, at.height - forkHeight + 1)
  const counted = await SELECT.one.from(Transactions).columns('count(1) as n').where({ blockHeight: { '>=': forkHeight } }).and({ blockHeight: { '<=': at.height } })
  const transactionsRolledBack = Number((counted as unknown as { n?: number | string } | undefined)?.n ?? 0)
  const below = forkHeight > (state.startHeight ?? 0) ? await SELECT.one.from(Blocks).columns('hash', 'time').where({ height: forkHeight - 1 }) : undefined
  await index.forgetFrom(forkHeight)
  const position: Position = { height: forkHeight - 1, hash: below?.hash ?? null }
  await syncState.rolledBack(state, { forkHeight, position, positionBlockAt: below?.time ?? null, blocksRolledBack, transactionsRolledBack, cause: 'reorg', newTipHash })
  return { forkHeight, blocksRolledBack, transactionsRolledBack, position }
}

/**
 * The hash of the block the index holds at a height when the index holds it whole: every one of
 * its transactions and no other at that height (a block a lazy read put there in place of the one
 * the follower indexed does not count); null otherwise.
 */
export async function wholeBlockAt(height: number): Promise<string | null> {
  const block = await SELECT.one.from(Blocks).columns('hash', 'txCount').where({ height })
  if (!block) return null
  const held = await SELECT.from(Transactions).columns('blockHash', 'count(1) as n').where({ blockHeight: height }).groupBy('blockHash') as unknown as { blockHash: string; n: number | string }[]
  const others = held.some(row => row.blockHash !== block.hash)
  const own = Number(held.find(row => row.blockHash === block.hash)?.n ?? 0)
  return !others && own === (block.txCount ?? 0) ? block.hash! : null
}

/** The newest indexed blocks at or below the height, newest first: where an upstream's own chain index resumes. */
export async function indexedPoints(height: number, count: number): Promise<{ slot: number; hash: string }[]> {
  const rows = await SELECT.from(Blocks).columns('slot', 'hash').where({ height: { '<=': height } }).orderBy('height desc').limit(count)
  return rows.map(row => ({ slot: Number(row.slot), hash: row.hash! }))
}

/** The upstream's tip and finality as the lease holder last saw them, and its status. Answers whether `owner` still holds the lease. */
export const recordTip = (owner: string, tip: ChainBlock, finalizedHeight: number, status: SyncStatusValue): Promise<boolean> =>
  syncState.recordTip(owner, { chainHeight: tip.height, chainTipAt: isoTime(tip.time), finalizedHeight, status })
