import cds from '@sap/cds'
import type ChainBConnector from './service.ts'

/**
 * The one way to reach chain B: the chain-B connector (`cds.requires['chain-b']`, kind
 * `midnight-indexer`), connected at the first call. `port` reads the indexer and submits sponsored
 * vault calls; `settings` holds network, finality depth, vault address and URLs; `attesterKey(subject)`
 * and `sponsorKey()` sign calls; `ensureSponsorFunded()` refills the sponsor on a devnet.
 */
export const chainB = () => cds.connect.to('chain-b') as unknown as Promise<ChainBConnector>
