import { badInput } from '../../../lib/errors.ts'
import { builderFor } from '../builders/index.ts'
import { refOf } from '../csl.ts'
import type { SlotConfig } from '../plutus.ts'
import type { ChainProtocolParameters, ChainUtxo } from '../port.ts'
import { quoteMemo } from './exact.ts'

/**
 * The payment transaction of an x402 exact-scheme quote, prepared for a payer whose wallet signs
 * but does not build (a CIP-30 wallet, the development signer): `amount` lovelace from the payer's
 * UTxOs to payTo, change back to the payer, the quote's CIP-20 memo, valid from now for
 * `ttlSeconds` (a little less than the quote's maxTimeoutSeconds, so it passes ttl_too_far). Its
 * first input is the payment's nonce. The builder's own errors (INSUFFICIENT_FUNDS,
 * OUTPUT_BELOW_MIN_ADA, WRONG_NETWORK, ...) pass through.
 */

interface PaymentPreparation {
  /** The payer's address: the UTxOs are its, the change goes back to it. */
  payer: string
  payTo: string
  /** lovelace */
  amount: bigint
  quoteId: string
  ttlSeconds: number
  utxos: ChainUtxo[]
  protocolParameters: ChainProtocolParameters
  currentSlot: number
  networkId: number
  slotConfig: SlotConfig
}

export interface PreparedPayment {
  unsignedTxCbor: string
  txHash: string
  /** The first input, `<txHash>#<index>`. */
  nonce: string
  ttlSlot: number
}

export async function preparePayment(preparation: PaymentPreparation): Promise<PreparedPayment> {
  const { payer, payTo, amount, quoteId, ttlSeconds, currentSlot, slotConfig } = preparation
  if (amount <= 0n) throw badInput('INVALID_VALUE', `A payment is of a positive number of lovelace, not ${amount}`, 'amount')
  const slots = Math.floor((ttlSeconds * 1000) / slotConfig.slotLengthMs)
  if (!Number.isSafeInteger(slots) || slots < 1) throw badInput('INVALID_VALIDITY_INTERVAL', `A payment must stay valid for at least one slot, not ${ttlSeconds} s`, 'ttlSeconds')
  const ttlSlot = currentSlot + slots
  const result = await builderFor('csl').build({
    utxos: preparation.utxos,
    changeAddress: payer,
    protocolParameters: preparation.protocolParameters,
    currentSlot,
    networkId: preparation.networkId,
    slotConfig,
    outputs: [{ address: payTo, lovelace: String(amount) }],
    metadataJson: JSON.stringify({ 674: { msg: [quoteMemo(quoteId)] } }),
    // No validity start: an instance whose clock is a little behind must not find the payment not yet valid.
    validity: { invalidBefore: null, invalidHereafter: ttlSlot },
  })
  return { unsignedTxCbor: result.unsignedTxCbor, txHash: result.txBodyHash, nonce: refOf(result.inputs[0]), ttlSlot }
}
