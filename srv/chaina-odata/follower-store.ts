import cds from '@sap/cds'
import { Blocks, ReorgLog, SyncState, SyncState_, Transactions } from '#cds-models/chaina'
import type { SyncState as SyncRow } from '#cds-models/chaina'
import type { ChainBlock } from '../chains/chain-a/port.ts'
import { ApiError } from '../lib/errors.ts'
import { claimLease as claimRowLease, releaseLease as releaseRowLease } from '../lib/lease.ts'
import { runWrite, tableOf } from '../lib/plain-sql.ts'
import type { ChainAIndex, FollowedBlock } from './indexer.ts'
import { isoTime } from './rows.ts'

/**
 * The chain-A follower's writes, each in the caller's transaction. Every writer starts with a
 * guarded UPDATE of the one SyncState row: it is the lock that orders writers on PostgreSQL, and
 * its condition (the lease holder, at the expected position) makes a write that lost the race
 * change nothing, so the caller's transaction is rolled back. The rows themselves are written and
 * forgotten by the read index (ChainAIndex), exactly as lazy reads write them.
 */

const { SELECT, UPDATE, INSERT, DELETE } = cds.ql

export const SYNC_ID = 'chain-a'

/** The follower's position: the last block it indexed (hash null below its start height). */
export type Position = { height: number; hash: string | null }
export type SyncStatusValue = 'syncing' | 'synced' | 'paused' | 'error'

/** A write made by a follower that no longer holds the lease or whose position moved: nothing was written. */
export class StaleFollower extends Error {}

const now = () => new Date().toISOString()
const later = (ms: number) => new Date(Date.now() + ms).toISOString()

export const readSyncState = (): Promise<SyncRow | undefined> => SELECT.one.from(SyncState).where({ ID: SYNC_ID }) as Promise<SyncRow | undefined>

/** The SyncState row, created on the first run (by whichever instance comes first; the others' inserts do nothing). */
export async function ensureSyncState(network: string | null): Promise<void> {
  if (await readSyncState()) return
  await runWrite(
    `INSERT INTO ${tableOf(SyncState)} (ID, network, status, consecutiveErrors, blocksIndexed, transactionsIndexed, reorgs, paused) `
    + 'VALUES (?, ?, ?, 0, 0, 0, 0, ?) ON CONFLICT (ID) DO NOTHING',
    [SYNC_ID, network, 'syncing', false],
  )
}

/** The follower's state is of another chain (the upstream changed): the next run starts a fresh index. */
export async function forgetSyncState(): Promise<void> {
  await DELETE.from(SyncState_).where({ ID: SYNC_ID })
}

export const positionOf = (state: SyncRow): Position => ({ height: state.indexedHeight ?? (state.startHeight ?? 0) - 1, hash: state.indexedHash ?? null })

export const claimLease = (owner: string, leaseMs: number): Promise<boolean> => claimRowLease(SyncState, SYNC_ID, owner, leaseMs)

export const releaseLease = (owner: string): Promise<void> => releaseRowLease(SyncState, SYNC_ID, owner)

/** The guard of a follower's write: still the holder, still at `at`, not paused. */
const heldAt = (owner: string, at: Position) => ({ ID: SYNC_ID, leaseOwner: owner, paused: false, indexedHeight: at.height, indexedHash: at.hash })

async function guardedUpdate(values: Record<string, unknown>, where: Record<string, unknown>): Promise<void> {
  const changed = await UPDATE.entity(SyncState).with(values).where(where)
  if (Number(changed) !== 1) throw new StaleFollower('the lease or the indexed position changed; nothing written')
}

/** A fresh index starts at `height`: the position is the block below it (whose hash it does not know). */
export async function startAt(owner: string, height: number): Promise<Position> {
  await guardedUpdate({ startHeight: height, indexedHeight: height - 1, indexedHash: null, indexedAt: now() }, { ID: SYNC_ID, leaseOwner: owner, startHeight: null })
  return { height: height - 1, hash: null }
}

/**
 * Writes a contiguous run of blocks following `at` (the first block's previous block is `at.hash`)
 * with their transactions, and moves the position to the last one. Renews the lease.
 */
export async function writeBlocks(index: ChainAIndex, owner: string, at: Position, batch: FollowedBlock[], leaseMs: number): Promise<Position> {
  const last = batch[batch.length - 1].block
  await guardedUpdate({
    indexedHeight: last.height, indexedHash: last.hash, indexedAt: now(), indexedBlockAt: isoTime(last.time),
    blocksIndexed: { '+=': batch.length }, transactionsIndexed: { '+=': batch.reduce((sum, entry) => sum + entry.transactions.length, 0) },
    consecutiveErrors: 0, lastError: null, leaseExpiresAt: later(leaseMs),
  }, heldAt(owner, at))
  await index.storeFollowed(batch)
  return { height: last.height, hash: last.hash }
}

export interface Rollback {
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
  await guardedUpdate({ indexedAt: now() }, heldAt(owner, at))
  const state = (await readSyncState()) as SyncRow
  const blocksRolledBack = Math.max(0, at.height - forkHeight + 1)
  const counted = await SELECT.one.from(Transactions).columns('count(1) as n').where({ blockHeight: { '>=': forkHeight } }).and({ blockHeight: { '<=': at.height } })
  const transactionsRolledBack = Number((counted as unknown as { n?: number | string } | undefined)?.n ?? 0)
  const below = forkHeight > (state.startHeight ?? 0) ? await SELECT.one.from(Blocks).columns('hash', 'time').where({ height: forkHeight - 1 }) : undefined
  await index.forgetFrom(forkHeight)
  const position: Position = { height: forkHeight - 1, hash: below?.hash ?? null }
  await UPDATE.entity(SyncState).with({
    indexedHeight: position.height, indexedHash: position.hash, indexedBlockAt: below?.time ?? null,
    finalizedHeight: Math.min(state.finalizedHeight ?? position.height, position.height),
    blocksIndexed: { '-=': blocksRolledBack }, transactionsIndexed: { '-=': transactionsRolledBack }, reorgs: { '+=': 1 },
  }).where({ ID: SYNC_ID })
  await INSERT.into(ReorgLog).entries({
    ID: cds.utils.uuid(), detectedAt: now(), forkHeight, oldTipHash: state.indexedHash, newTipHash, blocksRolledBack, cause: 'reorg',
  })
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

/** The upstream's tip and finality as the lease holder last saw them, and its status. Answers whether `owner` still holds the lease. */
export async function recordTip(owner: string, tip: ChainBlock, finalizedHeight: number, status: SyncStatusValue): Promise<boolean> {
  const changed = await UPDATE.entity(SyncState)
    .set({ chainHeight: tip.height, chainTipAt: isoTime(tip.time), finalizedHeight, status })
    .where({ ID: SYNC_ID, leaseOwner: owner })
  return Number(changed) === 1
}

export async function recordError(owner: string, error: unknown): Promise<void> {
  const message = (error instanceof ApiError ? `${error.code}: ` : '') + String((error as Error)?.message ?? error).slice(0, 450)
  await UPDATE.entity(SyncState)
    .with({ status: 'error', lastError: message, lastErrorAt: now(), consecutiveErrors: { '+=': 1 } })
    .where({ ID: SYNC_ID, leaseOwner: owner })
}
