import cds from '@sap/cds'
import {
  BuildAssets, BuildInputs, BuildMetadata, BuildOutputs, NetworkParametersCache, ProtocolParametersCache, SpendLocks, TransactionBuilds,
  TransactionSubmissions,
} from '#cds-models/chainatx'
import { chainA } from '../chains/chain-a/index.ts'
import { networkIdOf } from '../chains/chain-a/identifiers.ts'
import { slotConfigFor, type SlotConfig } from '../chains/chain-a/plutus.ts'
import type { ChainGenesis, ChainProtocolParameters } from '../chains/chain-a/port.ts'
import { ApiError } from '../lib/errors.ts'
import { settleAll } from '../lib/settle-all.ts'

/**
 * What a build needs to know about chain A besides the sender's outputs: the protocol parameters
 * (fetched again after five minutes), the network (genesis, once per process) and the current slot.
 * Each fetch is recorded in ProtocolParametersCache / NetworkParametersCache.
 */

const { SELECT, UPSERT, DELETE } = cds.ql
const PARAMETERS_TTL_MS = 300_000

export interface ChainContext {
  network: string
  networkId: number
  protocolParameters: ChainProtocolParameters
  slotConfig: SlotConfig
  currentSlot: number
  securityParam: number
}

let parameters: { value: ChainProtocolParameters; at: number } | undefined
let genesisOnce: Promise<ChainGenesis> | undefined

export async function chainContext(): Promise<ChainContext> {
  const port = chainA()
  const [genesis, protocolParameters] = await settleAll([genesisOf(), protocolParametersNow()])
  const slotConfig = slotConfigFor(port.networkName, genesis)
  return {
    network: port.networkName,
    networkId: networkIdOf(port.networkName),
    protocolParameters,
    slotConfig,
    currentSlot: slotAt(slotConfig, Date.now()),
    securityParam: genesis.securityParam,
  }
}

/** The slot that contains a moment. */
export const slotAt = (config: SlotConfig, ms: number) => config.zeroSlot + Math.max(0, Math.floor((ms - config.zeroTimeMs) / config.slotLengthMs))

/** When a slot begins. */
export const timeOfSlot = (config: SlotConfig, slot: number) => new Date(config.zeroTimeMs + (slot - config.zeroSlot) * config.slotLengthMs)

async function genesisOf(): Promise<ChainGenesis> {
  if (!genesisOnce) {
    genesisOnce = chainA().genesis()
    genesisOnce.catch(() => (genesisOnce = undefined))
    const genesis = await genesisOnce
    await UPSERT.into(NetworkParametersCache).entries({
      network: chainA().networkName, networkId: networkIdOf(chainA().networkName), networkMagic: genesis.networkMagic,
      systemStart: new Date(genesis.systemStart * 1000).toISOString(), slotLength: genesis.slotLength, epochLength: genesis.epochLength,
      securityParam: genesis.securityParam, fetchedAt: new Date().toISOString(),
    })
  }
  return genesisOnce
}

async function protocolParametersNow(): Promise<ChainProtocolParameters> {
  if (parameters && Date.now() - parameters.at < PARAMETERS_TTL_MS) return parameters.value
  const value = await chainA().protocolParameters()
  if (!value) throw new ApiError(503, 'UPSTREAM_UNAVAILABLE', 'chain-A upstream has no protocol parameters')
  parameters = { value, at: Date.now() }
  await UPSERT.into(ProtocolParametersCache).entries({
    epoch: value.epoch, minFeeA: value.minFeeA, minFeeB: value.minFeeB, maxTxSize: value.maxTxSize, coinsPerUtxoSize: value.coinsPerUtxoSize,
    keyDeposit: value.keyDeposit, priceMem: value.priceMem, priceStep: value.priceStep,
    maxTxExMem: value.maxTxExMem === null ? null : Number(value.maxTxExMem), maxTxExSteps: value.maxTxExSteps === null ? null : Number(value.maxTxExSteps),
    collateralPercent: value.collateralPercent, maxCollateralInputs: value.maxCollateralInputs, costModels: value.costModels, fetchedAt: new Date().toISOString(),
  })
  return value
}

/**
 * Builds, locks and submissions belong to one chain. When the upstream is another chain than the
 * one they were made on (a restarted devnet, a new network), they are forgotten. Answers whether
 * anything was.
 */
export async function forgetBuildsOfAnotherChain(): Promise<boolean> {
  const network = chainA().networkName
  const genesis = await chainA().genesis()
  const known: any = await SELECT.one.from(NetworkParametersCache).where({ network })
  const same = known && Date.parse(known.systemStart) === genesis.systemStart * 1000 && known.networkMagic === genesis.networkMagic
  if (same) return false
  for (const table of [SpendLocks, BuildAssets, BuildMetadata, BuildInputs, BuildOutputs, TransactionSubmissions, TransactionBuilds] as any[]) await DELETE.from(table)
  genesisOnce = undefined
  await genesisOf()
  return !!known
}

/** Forgets cached chain facts (a different upstream chain, tests). */
export function forgetChainContext() {
  parameters = undefined
  genesisOnce = undefined
}
