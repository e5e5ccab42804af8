import cds from '@sap/cds'
import { Blocks, ContractActions, ReorgLog, SyncState, TransactionSegments, Transactions, UnshieldedUtxos } from '#cds-models/chainb'

/** The chain index emptied, for suites that fill it themselves. */
export async function emptyIndex() {
  for (const table of [UnshieldedUtxos, ContractActions, TransactionSegments, Transactions, Blocks, ReorgLog, SyncState]) await cds.ql.DELETE.from(table as typeof Blocks)
}

export const INDEXER = '/odata/v4/chainb-indexer'
export const CHAINB = '/odata/v4/chainb'
