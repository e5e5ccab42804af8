import cds from '@sap/cds'
import { Accounts, Pools, Dreps } from '#cds-models/chaina'
import { LIST_PAGE_SIZE, type ListPage } from '../chains/chain-a/port.ts'
import * as rows from './rows.ts'
import type { ListWindow } from './list-window.ts'
import { rank, span, upsertAll, type IndexCore } from './indexer-core.ts'
import type { AddressIndex } from './indexer-addresses.ts'

const { UPSERT, UPDATE, DELETE } = cds.ql

/** Stake accounts, pools and DReps, their registries and their delegators. */
export class StakeIndex {
  private readonly core: IndexCore
  private readonly addresses: AddressIndex

  constructor(core: IndexCore, addresses: AddressIndex) {
    this.core = core
    this.addresses = addresses
  }

  /** The addresses of a stake account; the window's are indexed. */
  async accountAddresses(stakeAddress: string, window: ListWindow): Promise<void> {
    await this.core.keyList({
      kind: 'accountAddresses',
      parent: stakeAddress,
      load: page => this.core.port().accountAddresses(stakeAddress, page),
      index: address => this.addresses.address(address),
    }, window)
  }

  async account(stakeAddress: string): Promise<void> {
    await this.mirror('account', Accounts, { stakeAddress }, () => this.core.port().account(stakeAddress), rows.accountRow)
  }

  async pool(poolId: string): Promise<void> {
    await this.mirror('pool', Pools, { poolId }, () => this.core.port().pool(poolId), rows.poolRow)
  }

  /**
   * The registered pools in registration order, with the figures the pool list carries; the
   * registration details of a pool are indexed by `pool`.
   */
  async pools(window: ListWindow): Promise<void> {
    await this.core.rowList({
      kind: 'pools',
      parent: '',
      load: page => this.core.port().pools(page),
      store: async (pools, page) => this.storeRanked(Pools, 'poolId', page, (pools ?? []).map((pool, i) => rows.poolSummaryRow(pool, rank(page, i)))),
    }, startOnly(window))
  }

  /** The accounts delegating to a pool; the window's are indexed. */
  async poolDelegators(poolId: string, window: ListWindow): Promise<void> {
    await this.core.keyList({
      kind: 'poolDelegators',
      parent: poolId,
      load: async page => (await this.core.port().poolDelegators(poolId, page))?.map(delegator => delegator.stakeAddress) ?? null,
      index: stakeAddress => this.account(stakeAddress),
    }, window)
  }

  async drep(drepId: string): Promise<void> {
    await this.mirror('drep', Dreps, { drepId }, () => this.core.port().drep(drepId), rows.drepRow)
  }

  /** The registered DReps in registration order (the list carries every figure of a DRep). */
  async dreps(window: ListWindow): Promise<void> {
    await this.core.rowList({
      kind: 'dreps',
      parent: '',
      load: page => this.core.port().dreps(page),
      store: async (dreps, page) => this.storeRanked(Dreps, 'drepId', page, (dreps ?? []).map((drep, i) => rows.drepRow(drep, rank(page, i)))),
    }, startOnly(window))
  }

  /** The accounts delegating their votes to a DRep; the window's are indexed. */
  async drepDelegators(drepId: string, window: ListWindow): Promise<void> {
    await this.core.keyList({
      kind: 'drepDelegators',
      parent: drepId,
      load: async page => (await this.core.port().drepDelegators(drepId, page))?.map(delegator => delegator.stakeAddress) ?? null,
      index: stakeAddress => this.account(stakeAddress),
    }, window)
  }

  /** Rows of a registry list page with their positions; rows that held these positions before lose them. */
  private async storeRanked(entity: typeof Pools | typeof Dreps, key: 'poolId' | 'drepId', page: ListPage, entries: object[]): Promise<void> {
    const positions = span(rank(page, 0), rank(page, LIST_PAGE_SIZE - 1))
    const keys = entries.map(entry => (entry as Record<string, string>)[key])
    await UPDATE.entity(entity).set({ position: null }).where({ position: { in: positions } }).and({ [key]: { 'not in': keys.length ? keys : [''] } })
    await upsertAll(entity, entries)
  }

  /** One row per key: present while the upstream knows the key, deleted when it no longer does. */
  private async mirror<T>(kind: 'account' | 'pool' | 'drep', entity: any, key: Record<string, string>, load: () => Promise<T | null>, toRow: (found: T) => object) {
    await this.core.ensure(kind, Object.values(key)[0], load, async found => {
      if (found) await UPSERT.into(entity).entries(toRow(found))
      else await DELETE.from(entity).where(key)
      return false
    })
  }
}

/** Registry lists are read from their start only: their positions count from there. */
const startOnly = (window: ListWindow): ListWindow => (window.kind === 'ordered' && !window.fromEnd ? window : { kind: 'whole' })
