import cds from '@sap/cds'
import { BuildAssets, BuildInputs, BuildMetadata, BuildOutputs, SpendLocks, TransactionBuilds, TransactionSubmissions } from '#cds-models/chainatx'
import { chainA } from '../chains/chain-a/index.ts'
import { networkIdOf } from '../chains/chain-a/csl.ts'
import { slotConfigFor, type SlotConfig } from '../chains/chain-a/plutus.ts'
import type { ChainProtocolParameters } from '../chains/chain-a/port.ts'
import { settleAll } from '../lib/settle-all.ts'

/**
 * What a build needs to know about chain A besides the sender's outputs: the chain-a service's
 * facts (protocol parameters, genesis) and the current slot.
 */

const { DELETE } = cds.ql

interface BuildContext {
  network: string
  networkId: number
  protocolParameters: ChainProtocolParameters
  slotConfig: SlotConfig
  currentSlot: number
  securityParam: number
}

export async function chainContext(): Promise<BuildContext> {
  const chain = await chainA()
  const [genesis, protocolParameters] = await settleAll([chain.genesis(), chain.protocolParameters()])
  const slotConfig = slotConfigFor(chain.networkName, genesis)
  return {
    network: chain.networkName,
    networkId: networkIdOf(chain.networkName),
    protocolParameters,
    slotConfig,
    currentSlot: slotAt(slotConfig, Date.now()),
    securityParam: genesis.securityParam,
  }
}

/** The slot that contains a moment. */
const slotAt = (config: SlotConfig, ms: number) => config.zeroSlot + Math.max(0, Math.floor((ms - config.zeroTimeMs) / config.slotLengthMs))

/** When a slot begins. */
export const timeOfSlot = (config: SlotConfig, slot: number) => new Date(config.zeroTimeMs + (slot - config.zeroSlot) * config.slotLengthMs)

/** Builds, locks and submissions belong to one chain: they are removed when the upstream serves another one. */
export async function forgetBuilds(): Promise<void> {
  for (const table of [SpendLocks, BuildAssets, BuildMetadata, BuildInputs, BuildOutputs, TransactionSubmissions, TransactionBuilds] as any[]) await DELETE.from(table)
}
