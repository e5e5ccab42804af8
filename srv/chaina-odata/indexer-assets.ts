import cds from '@sap/cds'
import { AssetHistory_ } from '#cds-models/chaina'
import { LIST_PAGE_SIZE } from '../chains/chain-a/port.ts'
import * as rows from './rows.ts'
import { newestPage, type ListWindow } from './list-window.ts'
import { rank, span, upsertAll, type IndexCore } from './indexer-core.ts'

const { DELETE } = cds.ql

/** Assets: their mint and burn history. */
export class AssetIndex {
  private readonly core: IndexCore

  constructor(core: IndexCore) {
    this.core = core
  }

  /**
   * Mint and burn events of an asset, newest first by `position`, as far as the window reaches (by
   * default the newest page). An asset that was never minted has none.
   */
  async assetHistory(unit: string, window: ListWindow = newestPage): Promise<void> {
    const fromNewest: ListWindow = window.kind === 'ordered' && window.fromEnd ? window : { kind: 'whole' }
    await this.core.rowList({
      kind: 'assetHistory',
      parent: unit,
      load: page => this.core.port().assetHistoryPage(unit, page),
      store: async (history, page) => {
        if (!history) return void (await DELETE.from(AssetHistory_).where({ unit }))
        const entries = rows.assetHistoryRows(unit, history, rank(page, 0))
        await DELETE.from(AssetHistory_).where({ unit, position: { in: span(rank(page, 0), rank(page, LIST_PAGE_SIZE - 1)) } })
        await upsertAll(AssetHistory_, entries)
      },
    }, fromNewest, 'desc')
  }
}
