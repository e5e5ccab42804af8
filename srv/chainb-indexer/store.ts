import cds from '@sap/cds'
import { Blocks, ContractActions, ReorgLog, SyncState, TransactionSegments, Transactions, UnshieldedUtxos } from '#cds-models/chainb'
import type { SyncState as SyncRow } from '#cds-models/chainb'
import { SyncStateRow, now, type Position, type SyncStatusValue } from '../lib/sync-state.ts'
import { isoTime, utxoRow, type BlockRows } from './rows.ts'

/**
 * The follower's writes to the chain index, each in the caller's transaction, each starting with a
 * guarded UPDATE of the SyncState row (lib/sync-state.ts).
 */

const { SELECT, INSERT, UPDATE, DELETE } = cds.ql

export const SYNC_ID = 'chain-b'
/** The position of an empty index: below genesis (height 0). */
const NOTHING_INDEXED = { height: -1, hash: null as string | null }

export const syncState = new SyncStateRow<SyncRow>(SyncState, ReorgLog, SYNC_ID, { indexedHeight: NOTHING_INDEXED.height })

export const readSyncState = (): Promise<SyncRow | undefined> => syncState.read()

/** The SyncState row, created on the first run (by whichever instance comes first; the others' inserts do nothing). */
export const ensureSyncState = (network: string | null): Promise<void> => syncState.ensure(network)

export const positionOf = (state: SyncRow): Position => ({ height: state.indexedHeight ?? NOTHING_INDEXED.height, hash: state.indexedHash ?? null })

/**
 * Writes a contiguous run of blocks following `at` (the first block's parent is `at.hash`) and moves
 * the position to the last one. Renews the lease.
 */
export async function writeBlocks(owner: string, at: Position, batch: BlockRows[], leaseMs: number): Promise<Position> {
  const last = batch[batch.length - 1].block
  const transactions = batch.flatMap(rows => rows.transactions)
  await syncState.advance(owner, at, { height: last.height as number, hash: last.hash as string, blockAt: last.timestamp ?? null }, batch.length, transactions.length, leaseMs)
  await INSERT.into(Blocks).entries(batch.map(rows => rows.block))
  await insertAll(Transactions, transactions)
  await insertAll(TransactionSegments, batch.flatMap(rows => rows.segments))
  await insertAll(ContractActions, batch.flatMap(rows => rows.contractActions))
  await insertAll(UnshieldedUtxos, batch.flatMap(rows => rows.created))
  for (const { utxo, spentBy } of batch.flatMap(rows => rows.spent)) await markSpent(utxo, spentBy)
  return { height: last.height as number, hash: last.hash as string }
}

async function insertAll(entity: object, rows: object[]) {
  if (rows.length) await INSERT.into(entity as typeof Blocks).entries(rows)
}

/** An output created before what the index holds is recorded when it is spent. */
async function markSpent(utxo: BlockRows['spent'][number]['utxo'], spentBy: string) {
  const changed = await UPDATE.entity(UnshieldedUtxos).set({ spentAtTransaction_hash: spentBy }).where({ intentHash: utxo.intentHash, outputIndex: utxo.outputIndex })
  if (Number(changed) === 0) await INSERT.into(UnshieldedUtxos).entries({ ...utxoRow(utxo), spentAtTransaction_hash: spentBy })
}

interface Rollback {
  forkHeight: number
  blocksRolledBack: number
  transactionsRolledBack: number
  position: Position
}

/**
 * Removes every row at or above `forkHeight` (un-spending what those transactions spent), moves the
 * position to the block below, and logs it. A follower passes its lease and position (`heldBy`);
 * an operator's reindex does not.
 */
export async function rollBackFrom(forkHeight: number, cause: 'reorg' | 'reindex', log: { newTipHash?: string | null }, heldBy?: { owner: string; at: Position }): Promise<Rollback> {
  // Lock (and check) the SyncState row before reading what to remove.
  await syncState.guardedUpdate({ indexedAt: now() }, heldBy ? syncState.heldAt(heldBy.owner, heldBy.at) : { ID: SYNC_ID })
  const state = (await readSyncState()) as SyncRow
  const removed = SELECT.from(Transactions).columns('hash').where({ blockHeight: { '>=': forkHeight } })
  const transactionsRolledBack = await countOf(Transactions, { blockHeight: { '>=': forkHeight } })
  const blocksRolledBack = await countOf(Blocks, { height: { '>=': forkHeight } })
  await DELETE.from(UnshieldedUtxos).where({ createdAtTransaction_hash: { in: removed } })
  await UPDATE.entity(UnshieldedUtxos).set({ spentAtTransaction_hash: null }).where({ spentAtTransaction_hash: { in: removed } })
  await DELETE.from(ContractActions).where({ transaction_hash: { in: removed } })
  await DELETE.from(TransactionSegments).where({ transaction_hash: { in: removed } })
  await DELETE.from(Transactions).where({ blockHeight: { '>=': forkHeight } })
  await DELETE.from(Blocks).where({ height: { '>=': forkHeight } })
  const below = await SELECT.one.from(Blocks).columns('hash', 'height', 'timestamp').where({ height: forkHeight - 1 })
  const position: Position = below ? { height: below.height as number, hash: below.hash as string } : NOTHING_INDEXED
  await syncState.rolledBack(state, {
    forkHeight, position, positionBlockAt: below?.timestamp ?? null, blocksRolledBack, transactionsRolledBack, cause, newTipHash: log.newTipHash ?? null,
  })
  return { forkHeight, blocksRolledBack, transactionsRolledBack, position }
}

/** The hash the index holds at a height. */
export async function indexedHashAt(height: number): Promise<string | null> {
  const row = await SELECT.one.from(Blocks).columns('hash').where({ height })
  return (row?.hash as string | undefined) ?? null
}

/** The upstream's tip and finality as the lease holder last saw them, and its status. */
export async function recordTip(owner: string, tip: { height: number; timestamp: number }, finalizedHeight: number, status: SyncStatusValue): Promise<void> {
  await syncState.recordTip(owner, { chainHeight: tip.height, chainTipAt: isoTime(tip.timestamp), finalizedHeight, status })
  await UPDATE.entity(Blocks).set({ finalized: true }).where({ height: { '<=': finalizedHeight }, finalized: false })
}

/** Pauses or resumes indexing on every instance. */
export async function setPaused(paused: boolean): Promise<void> {
  await UPDATE.entity(SyncState).set({ paused, ...(paused ? { status: 'paused' } : { status: 'syncing' }) }).where({ ID: SYNC_ID })
}

/** How many rows of an entity match. */
export async function countOf(entity: object, where?: Record<string, unknown>): Promise<number> {
  const query = SELECT.one.from(entity as typeof Blocks).columns('count(1) as n')
  const row = (await (where ? query.where(where) : query)) as unknown as { n?: number | string } | undefined
  return Number(row?.n ?? 0)
}
