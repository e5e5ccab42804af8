import cds from '@sap/cds'
import { Epochs, LedgerProtocolParameters, NetworkInformation_ } from '#cds-models/chaina'
import { LIST_PAGE_SIZE, type ChainEpoch } from '../chains/chain-a/port.ts'
import * as rows from './rows.ts'
import { MAX_LIST_PAGES, type ListWindow } from './list-window.ts'
import { FLIGHT_HOLD_MS, pagedRuns, span, upsertAll, type IndexCore } from './indexer-core.ts'
import type { BlockIndex } from './indexer-blocks.ts'

const { SELECT, UPSERT } = cds.ql

/** Epochs and their blocks, protocol parameters, and the network's figures. */
export class EpochIndex {
  private readonly core: IndexCore
  private readonly blocks: BlockIndex

  constructor(core: IndexCore, blocks: BlockIndex) {
    this.core = core
    this.blocks = blocks
  }

  /** The blocks of an epoch in chain order; the window's are indexed. */
  async epochBlocks(epoch: number, window: ListWindow): Promise<void> {
    await this.epoch(epoch)
    if (!(await SELECT.one.from(Epochs).columns('epoch').where({ epoch }))) return
    await this.core.keyList({
      kind: 'epochBlocks',
      parent: String(epoch),
      load: page => this.core.port().epochBlocks(epoch, page),
      index: hash => this.blocks.block(hash),
      final: async () => (await this.core.tipEpoch()) >= epoch + 2,
    }, window)
  }

  async epoch(epoch: number): Promise<void> {
    await this.core.ensure('epoch', String(epoch), () => this.core.port().epoch(epoch), async found => {
      if (!found) return false
      await UPSERT.into(Epochs).entries(rows.epochRow(found))
      return (await this.core.tipEpoch()) >= epoch + 2
    })
  }

  async latestEpoch(): Promise<void> {
    await this.core.ensure('epoch', 'latest', () => this.core.port().latestEpoch(), async found => {
      await UPSERT.into(Epochs).entries(rows.epochRow(found))
      this.core.latestEpochNumber = found.epoch
      return false
    })
  }

  /** Every epoch, from 0 to the current one (numbered without gaps): the window's are indexed. */
  async epochs(window: ListWindow): Promise<void> {
    const current = await this.currentEpoch()
    const count = window.kind === 'whole' ? current + 1 : Math.min(window.upTo, MAX_LIST_PAGES * LIST_PAGE_SIZE)
    const fromEnd = window.kind === 'ordered' ? window.fromEnd : window.kind === 'byKey' && window.descending
    const [from, to] = fromEnd ? [Math.max(0, current - count + 1), current] : [0, Math.min(current, count - 1)]
    const missing = await this.core.staleIds('epoch', span(from, to).map(String))
    for (const [first, last] of pagedRuns(missing.map(Number))) {
      const found = (await this.core.flights.run(`epochs:${first}:${last}`, () => this.loadEpochs(first, last), FLIGHT_HOLD_MS)) as ChainEpoch[]
      await upsertAll(Epochs, found.map(rows.epochRow))
      await this.core.mark('epoch', found.map(epoch => ({ id: String(epoch.epoch), final: current >= epoch.epoch + 2 })))
    }
  }

  /** Protocol parameters of an epoch, or of the current one when `epoch` is omitted. */
  async parameters(epoch?: number): Promise<void> {
    const ref = epoch === undefined ? 'latest' : String(epoch)
    await this.core.ensure('parameters', ref, () => this.core.port().protocolParameters(epoch), async found => {
      if (!found) return false
      await UPSERT.into(LedgerProtocolParameters).entries(rows.parametersRow(found))
      return epoch !== undefined && epoch < (await this.core.tipEpoch())
    })
  }

  async networkInformation(): Promise<void> {
    const load = async () => Promise.all([this.core.port().network(), this.core.genesis()])
    await this.core.ensure('network', this.core.network, load, async ([supply, genesis]) => {
      await UPSERT.into(NetworkInformation_).entries(rows.networkRow(this.core.network, supply, genesis))
      return false
    })
  }

  private async currentEpoch(): Promise<number> {
    await this.latestEpoch()
    if (this.core.latestEpochNumber !== undefined) return this.core.latestEpochNumber
    const newest = await SELECT.one.from(Epochs).columns('epoch').orderBy('epoch desc')
    return newest?.epoch ?? 0
  }

  private async loadEpochs(first: number, last: number): Promise<ChainEpoch[]> {
    if (first > 0) return this.core.port().epochsAfter(first - 1, last - first + 1)
    const genesis = await this.core.port().epoch(0)
    const rest = last > 0 ? await this.core.port().epochsAfter(0, last) : []
    return genesis ? [genesis, ...rest] : rest
  }
}
