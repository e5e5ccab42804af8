import cds from '@sap/cds'
import type ChainBService from './service.ts'

/**
 * How services reach chain B: the chain-b service (`cds.requires['chain-b']`, kind
 * `midnight-indexer`), connected at the first call. `port` reads the indexer and submits sponsored
 * vault calls; `settings` holds network, finality depth, vault address and URLs; `attesterKey(subject)`
 * and `sponsorKey()` sign calls; `ensureSponsorFunded()` refills the sponsor on a devnet.
 */
export const chainB = () => cds.connect.to('chain-b') as Promise<ChainBService>

export type { ChainBService }
