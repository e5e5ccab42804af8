import cds from '@sap/cds'
import type ChainAService from './service.ts'

/**
 * How services reach chain A: the chain-a service (`cds.requires['chain-a']`, chosen by `kind` per
 * profile), connected at the first call. Its `port` speaks to the upstream through the kind's
 * adapter (Blockfrost, Koios, or Ogmios with Kupo); `genesis()`, `protocolParameters()` and
 * `identity()` are the chain's facts, held once for all services; CHAIN_CHANGED tells when the
 * upstream serves another chain.
 */
export const chainA = () => cds.connect.to('chain-a') as Promise<ChainAService>

export type { ChainAService }
export { CHAIN_CHANGED } from './service.ts'
export type { ChainChange } from './context.ts'
