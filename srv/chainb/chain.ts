import cds from '@sap/cds'
import type { ChainBPort } from '../chains/chain-b/port.ts'
import type { VaultKey } from '../chains/chain-b/vault.ts'

/**
 * What this service needs of the chain-b service (`cds.requires['chain-b']`, srv/chains/chain-b):
 * the port, the vault's address and the finality depth, the attester key of a subject and the
 * sponsor's key. Declared here as the narrow view the jobs use, so a test can connect another
 * implementation of it under the same name.
 */
export interface ChainBAccess {
  port: ChainBPort
  settings: { finalityDepth: number; vaultAddress: string }
  attesterKey(subject: string): VaultKey
  sponsorKey(): VaultKey
  ensureSponsorFunded(): Promise<void>
}

export const chainB = () => cds.connect.to('chain-b') as unknown as Promise<ChainBAccess>
