import type { PaymentPayloadResult, PaymentRequirements, SchemeNetworkClient } from '@x402/core/types'
import { addressText, listOf, refOfInput } from '../csl.ts'
import { mergeSignerAnswer, parseTransaction } from '../signing/witnesses.ts'

/**
 * The x402 version 2 client side of the Cardano `exact` scheme for `@x402/core`: register it with
 * `new x402Client(...).register('cardano:*', new CardanoExactClient(sign))`. It pays with the
 * transaction the server prepared for the payer (`extra.transaction`, unsigned CBOR hex, asked for
 * by quoting with a `payer` address) and its nonce (`extra.nonce`, else the transaction's first
 * input). `sign` is the wallet: it answers a signed transaction or a CIP-30 witness set (hex), which
 * is merged into the original bytes, so the body the wallet signed is the body sent.
 */

/** Signs an unsigned transaction (CBOR hex); answers the signed transaction or a CIP-30 `signTx(tx, true)` witness set (hex). */
type PaymentSigner = (unsignedTxHex: string) => Promise<string>

export class CardanoExactClient implements SchemeNetworkClient {
  readonly scheme = 'exact'
  private readonly sign: PaymentSigner

  constructor(sign: PaymentSigner) {
    this.sign = sign
  }

  async createPaymentPayload(x402Version: number, requirements: PaymentRequirements): Promise<PaymentPayloadResult> {
    const transaction = requirements.extra?.transaction
    if (typeof transaction !== 'string' || !transaction) {
      throw new Error('The payment requirements carry no prepared transaction (extra.transaction): ask the server for the quote with your `payer` address')
    }
    const nonce = nonceOf(transaction, requirements)
    const signed = mergeSignerAnswer(transaction, await this.sign(transaction))
    return { x402Version, payload: { transaction: Buffer.from(signed.cborHex, 'hex').toString('base64'), nonce } }
  }
}

/**
 * The nonce the payment names: the server's, which must be an input of the prepared transaction,
 * or the first input. The prepared transaction must pay payTo exactly the amount asked: a wallet
 * signs what it was shown, and the amount is the one the client agreed to.
 */
function nonceOf(transactionHex: string, requirements: PaymentRequirements): string {
  const body = parseTransaction(transactionHex, 'extra.transaction').body()
  const paid = listOf(body.outputs()).filter(output => addressText(output.address()) === requirements.payTo)
    .reduce((sum, output) => sum + BigInt(output.amount().coin().to_str()), 0n)
  if (paid !== BigInt(requirements.amount)) {
    throw new Error(`The prepared transaction pays ${paid} lovelace to ${requirements.payTo}, not the ${requirements.amount} lovelace the requirements ask`)
  }
  const inputs = listOf(body.inputs()).map(refOfInput)
  const named = requirements.extra?.nonce
  if (typeof named !== 'string' || !named) return inputs[0]
  if (!inputs.includes(named)) throw new Error(`The nonce ${named} is not an input of the prepared transaction`)
  return named
}
