import { LRUCache } from 'lru-cache'
import { chainA } from '../chains/chain-a/index.ts'
import { networkIdOf, type OutputRef } from '../chains/chain-a/csl.ts'
import { slotConfigFor, type SlotConfig } from '../chains/chain-a/plutus.ts'
import type { ChainAPort, ChainProtocolParameters, ChainUtxo } from '../chains/chain-a/port.ts'
import { preparePayment } from '../chains/chain-a/payments/payment-transaction.ts'
import type { PaymentChainView } from '../chains/chain-a/payments/exact.ts'
import { ApiError } from '../lib/errors.ts'
import { laneConfig } from './config.ts'

/**
 * Chain A as the purchase lane sees it: the payment network (its x402 id `cardano:<network>`),
 * the current slot, the protocol parameters, the outputs a payment spends, and where payments go.
 */

export interface PaymentChain {
  port: ChainAPort
  /** preprod, preview, mainnet or devnet. */
  network: string
  /** The x402 (CAIP-2 style) network id: cardano:preprod, cardano:mainnet, cardano:devnet… */
  caipNetwork: string
  networkId: number
  slotConfig: SlotConfig
  protocolParameters: ChainProtocolParameters
  currentSlot(): number
  view(): PaymentChainView
}

export async function paymentChain(): Promise<PaymentChain> {
  const chain = await chainA()
  const [genesis, protocolParameters] = await Promise.all([chain.genesis(), chain.protocolParameters()])
  const slotConfig = slotConfigFor(chain.networkName, genesis)
  const port = chain.port
  const currentSlot = () => slotConfig.zeroSlot + Math.max(0, Math.floor((Date.now() - slotConfig.zeroTimeMs) / slotConfig.slotLengthMs))
  return {
    port, network: chain.networkName, caipNetwork: `cardano:${chain.networkName}`, networkId: networkIdOf(chain.networkName), slotConfig, protocolParameters, currentSlot,
    view: () => ({
      currentSlot: currentSlot(),
      slotLengthSeconds: slotConfig.slotLengthMs / 1000,
      protocolParameters,
      output: async (ref: OutputRef) => {
        const tx = await port.transaction(ref.txHash)
        const output = tx?.outputs.find(candidate => candidate.outputIndex === ref.outputIndex && !candidate.collateral)
        return output ? { address: output.address, lovelace: output.lovelace, assets: output.assets, consumedBy: output.consumedBy } : null
      },
    }),
  }
}

/**
 * Where payments go: GATEWAY_X402_PAY_TO (or `cds.requires.gateway.payTo`, which the bootstrap sets
 * to a test wallet of the chain-A devnet it embeds, when none is configured).
 */
export function payToAddress(): string {
  const configured = laneConfig().purchase.payTo
  if (configured) return configured
  throw new ApiError(503, 'PURCHASE_NOT_CONFIGURED', 'This gateway takes no payments: GATEWAY_X402_PAY_TO is not configured')
}

interface PaymentRequest {
  payer: string
  payTo: string
  amount: bigint
  quoteId: string
  ttlSeconds: number
}

/** The payment transaction prepared for a payer (unsigned: the payer's wallet signs it). */
export async function preparedPayment(chain: PaymentChain, request: PaymentRequest) {
  const utxos = await payerOutputs(chain.port, request.payer)
  if (!utxos.length) throw new ApiError(400, 'PAYER_HAS_NO_FUNDS', `${request.payer} holds no unspent outputs to pay with`, { target: 'payer' })
  return preparePayment({
    ...request, utxos, protocolParameters: chain.protocolParameters, currentSlot: chain.currentSlot(), networkId: chain.networkId, slotConfig: chain.slotConfig,
  })
}

/** How long a payer's outputs, once read, serve its quotes (a payment the chain has not taken yet may still spend them anyway). */
const PAYER_OUTPUTS_TTL_MS = 5_000
/** Payers remembered at once, and their outputs together: a bounded cache, the least recently used go first. */
const PAYER_OUTPUTS_MAX_PAYERS = 1_000
const PAYER_OUTPUTS_MAX_OUTPUTS = 100_000

/** Payers' outputs: quotes for one payer within PAYER_OUTPUTS_TTL_MS read the chain once, and concurrent reads of one address are one read. */
const payerOutputsCache = new LRUCache<string, ChainUtxo[], ChainAPort>({
  max: PAYER_OUTPUTS_MAX_PAYERS, maxSize: PAYER_OUTPUTS_MAX_OUTPUTS, sizeCalculation: utxos => utxos.length + 1, ttl: PAYER_OUTPUTS_TTL_MS,
  fetchMethod: (address, _stale, { context }) => context.addressUtxos(address),
})

async function payerOutputs(port: ChainAPort, address: string): Promise<ChainUtxo[]> {
  return (await payerOutputsCache.fetch(address, { context: port })) ?? []
}

/** Forgets what was read of a payer's outputs: a payment of theirs was just submitted. */
export const forgetPayerOutputs = (address: string) => {
  payerOutputsCache.delete(address)
}
