import { chainB as connectedChainB } from '../chains/chain-b/index.ts'
import type { ChainBPort } from '../chains/chain-b/port.ts'
import type { VaultKey, VaultState } from '../chains/chain-b/vault.ts'
import type { ZeroKnowledge } from '../chains/chain-b/zk/index.ts'

/**
 * What this service needs of the chain-B connector (`cds.requires['chain-b']`, srv/chains/chain-b):
 * the port, the vault's address and the finality depth, whether writes can be submitted, the attester key of a subject, the
 * sponsor's key, and the zero-knowledge prover and verifier. Declared here as the narrow view the jobs use, so a test can connect another
 * implementation of it under the same name.
 */
export interface ChainBAccess {
  port: ChainBPort
  settings: { finalityDepth: number; vaultAddress: string }
  /** False without a submission API: a write is then refused before it is queued. */
  canSubmit: boolean
  attesterKey(subject: string): VaultKey
  sponsorKey(): VaultKey
  ensureSponsorFunded(): Promise<void>
  vaultState(): Promise<VaultState>
  zk: ZeroKnowledge
}

export const chainB = () => connectedChainB() as unknown as Promise<ChainBAccess>
