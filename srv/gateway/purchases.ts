import cds from '@sap/cds'
import { Packs, Purchase, Purchases } from '#cds-models/gateway'
import type { KeyRecord } from './accounts.ts'
import { ok, refusal, UNITS_LEFT, type Answer } from './answers.ts'
import { gatewayConfig } from './config.ts'
import { deliverKey } from './key-delivery.ts'
import type { KeyedCall, OwnCall } from './calls.ts'
import { paymentChain, payToAddress, preparedPayment, type PaymentChain } from './payment-chain.ts'
import { creditPurchase, settle, type Settlement } from './purchase-settlement.ts'
import { decodePayment, isObject, PAYMENT_SIGNATURE, paymentRequired, paymentResponse, X402_VERSION, type PaymentProblem, type PaymentRequirements } from './x402.ts'
import { parseAddress } from '../chains/chain-a/identifiers.ts'
import { verifyExactPayment, quoteMemo } from '../chains/chain-a/payments/exact.ts'
import { ApiError } from '../lib/errors.ts'

/**
 * The purchase lane: POST /keys buys a pack as a new key, POST /topup (with a key) buys one for
 * that key, paid in ADA over x402 version 2 (scheme exact on chain A).
 *
 * Without `PAYMENT-SIGNATURE` the answer is a 402 with a quote: the requirements (amount, payTo,
 * network, asset lovelace, maxTimeoutSeconds) and in `extra` the quote id the payment must carry
 * (its CIP-20 memo) and, when the caller named a `payer`, the payment transaction prepared for
 * that address. With it, the payment is checked against the stored quote (never against what the
 * client echoes), verified by the exact-scheme rules, claimed by its transaction hash, submitted
 * once and followed to the configured confirmations (purchase-settlement.ts); until then the
 * answer is 402 `settlement_pending`, and sending the same payment again resumes, in this
 * instance or another, before or after a restart. The pack is credited exactly once.
 */

const { SELECT, INSERT } = cds.ql
export const DEFAULT_PACK = 'starter'
/** What a pack's name can be (Packs.name); anything else is refused before the database sees it. */
const PACK_NAME = /^[A-Za-z0-9_-]{1,20}$/
/** The prepared transaction's validity ends this much before the quote's, so it always passes ttl_too_far. */
const VALIDITY_MARGIN_S = 30

type Lane = NonNullable<Purchase['lane']>

export const buyKey = (call: OwnCall) => purchase('keys', call)
export const topUp = (call: KeyedCall) => purchase('topup', call, call.key)

async function purchase(lane: Lane, call: OwnCall, key?: KeyRecord): Promise<Answer> {
  const header = call.headers[PAYMENT_SIGNATURE]
  if (typeof header === 'string' && header.trim()) return pay(lane, header, key)
  return quote(lane, call.body, key)
}

interface QuoteRequest {
  pack: string
  payer?: string
}

function quoteRequest(body: unknown, network: string): QuoteRequest {
  if (body === undefined) return { pack: DEFAULT_PACK }
  if (!isObject(body)) throw new ApiError(400, 'INVALID_BODY', 'The body must be a JSON object: { "pack": "<name>", "payer": "<your address>" } (both optional)')
  const { pack = DEFAULT_PACK, payer } = body
  if (typeof pack !== 'string' || !PACK_NAME.test(pack)) throw new ApiError(400, 'INVALID_PACK', 'pack must be the name of a pack (see GET /prices)', { target: 'pack' })
  if (payer === undefined || payer === null) return { pack }
  return { pack, payer: parseAddress(payer, network, 'payer') }
}

/** A new quote for a pack: stored, then answered 402 with its requirements. */
async function quote(lane: Lane, body: unknown, key?: KeyRecord): Promise<Answer> {
  const chain = await paymentChain()
  const request = quoteRequest(body, chain.network)
  const pack = await cds.tx(() => SELECT.one.from(Packs).where({ name: request.pack, active: true }))
  if (!pack) throw new ApiError(400, 'UNKNOWN_PACK', `There is no pack '${request.pack}'; the packs are listed on GET /prices`, { target: 'pack' })
  const { quoteSeconds } = gatewayConfig().purchase
  const id = cds.utils.uuid()
  const now = new Date()
  const payTo = await payToAddress()
  const prepared = request.payer
    ? await preparedPayment(chain, { payer: request.payer, payTo, amount: BigInt(pack.lovelace!), quoteId: id, ttlSeconds: quoteSeconds - VALIDITY_MARGIN_S })
    : undefined
  const row = {
    ID: id, lane, pack_name: pack.name, units: Number(pack.units), lovelace: Number(pack.lovelace), payTo, network: chain.caipNetwork,
    apiKey_ID: key?.ID ?? null, payer: request.payer ?? null, status: Purchase.status.quoted, preparedTx: prepared?.unsignedTxCbor ?? null, preparedNonce: prepared?.nonce ?? null,
    createdAt: now.toISOString(), expiresAt: new Date(now.getTime() + quoteSeconds * 1000).toISOString(),
  }
  await cds.tx(() => INSERT.into(Purchases).entries(row))
  const problem = { code: 'PAYMENT_REQUIRED', reason: 'payment_required', message: `Pay ${pack.lovelace} lovelace to ${payTo} and send the signed transaction in PAYMENT-SIGNATURE` }
  return paymentRequired(requiredFor(row, prepared), problem)
}

type QuoteRow = Pick<Purchase, 'ID' | 'lane' | 'pack_name' | 'units' | 'lovelace' | 'payTo' | 'network' | 'expiresAt'>

/** The quote's x402 requirements; `prepared` adds the payment transaction made for the payer. */
function requiredFor(quote: QuoteRow, prepared?: { unsignedTxCbor: string; nonce: string }) {
  const { publicUrl, purchase } = gatewayConfig()
  const requirements: PaymentRequirements = {
    scheme: 'exact',
    network: quote.network as PaymentRequirements['network'],
    asset: 'lovelace',
    amount: String(quote.lovelace),
    payTo: quote.payTo!,
    maxTimeoutSeconds: purchase.quoteSeconds,
    extra: {
      quoteId: quote.ID, pack: quote.pack_name, units: Number(quote.units), memo: quoteMemo(quote.ID!), expiresAt: quote.expiresAt,
      confirmationPolicy: { l1Confirmations: purchase.confirmations },
      ...(prepared ? { transaction: prepared.unsignedTxCbor, nonce: prepared.nonce } : {}),
    },
  }
  const path = quote.lane === 'keys' ? '/keys' : '/topup'
  return {
    x402Version: X402_VERSION,
    resource: { url: publicUrl + path, description: `${quote.units} units (${quote.pack_name} pack)`, mimeType: 'application/json' },
    accepts: [requirements],
  }
}

/** A payment for a stored quote: verified, claimed, submitted, followed, credited. */
async function pay(lane: Lane, header: string, key?: KeyRecord): Promise<Answer> {
  const decoded = decodePayment(header)
  if (!decoded.ok) return refusal(400, 'PAYMENT_SIGNATURE_MALFORMED', decoded.message)
  const { payment } = decoded
  const quoteId = payment.accepted.extra.quoteId as string
  const quote = await cds.tx(() => SELECT.one.from(Purchases).where({ ID: isUuid(quoteId) ? quoteId : null }))
  if (!quote || quote.lane !== lane || (lane === 'topup' && quote.apiKey_ID !== key?.ID)) {
    return refusal(402, 'QUOTE_UNKNOWN', `There is no quote ${quoteId.slice(0, 40)} for ${lane === 'keys' ? 'POST /keys' : 'POST /topup with this key'}: ask for a new one without PAYMENT-SIGNATURE`, { reason: 'quote_unknown' })
  }
  const required = requiredFor(quote, quote.preparedTx && quote.preparedNonce ? { unsignedTxCbor: quote.preparedTx, nonce: quote.preparedNonce } : undefined)
  const again = (problem: PaymentProblem, body: object = {}) => paymentRequired(required, problem, body)

  const echoed = payment.accepted
  if (echoed.scheme !== 'exact' || echoed.network !== quote.network) {
    return again({ code: 'PAYMENT_NETWORK_MISMATCH', reason: 'network_mismatch', message: `This quote is paid with scheme exact on ${quote.network}, not ${String(echoed.scheme)} on ${String(echoed.network)}` })
  }
  const chain = await paymentChain()
  const verdict = await verifyExactPayment(payment.payload, {
    networkId: chain.networkId, payTo: quote.payTo!, amount: BigInt(quote.lovelace!), quoteId: quote.ID!, maxTimeoutSeconds: gatewayConfig().purchase.quoteSeconds,
  }, chain.view())
  if (!verdict.ok) return again({ code: 'PAYMENT_INVALID', reason: verdict.reason, message: verdict.message })

  const settlement = await settle(quote, verdict, chain)
  return answerSettlement(settlement, quote, chain, again, key)
}

async function answerSettlement(settlement: Settlement, quote: Purchase, chain: PaymentChain, again: (problem: PaymentProblem, body?: object) => Answer, key?: KeyRecord): Promise<Answer> {
  switch (settlement.kind) {
    case 'refused':
      return again(settlement.problem)
    case 'pending':
      return again(
        { code: 'SETTLEMENT_PENDING', reason: 'settlement_pending', message: `Payment ${settlement.txHash} is ${settlement.confirmations < 0 ? 'submitted, not yet in a block' : `${settlement.confirmations} of ${gatewayConfig().purchase.confirmations} blocks deep`}; send the same PAYMENT-SIGNATURE again to resume` },
        { pending: true, transaction: settlement.txHash, confirmations: Math.max(settlement.confirmations, 0) },
      )
    case 'already-credited':
      return refusal(409, 'PAYMENT_ALREADY_CREDITED', `Payment ${settlement.txHash} was credited already (key ${settlement.keyId}); a key is shown once: sign in with the paying wallet (POST /auth/challenge) to rotate it`, { keyId: settlement.keyId, transaction: settlement.txHash })
    case 'confirmed': {
      const credited = await creditPurchase(quote, settlement)
      if (credited.kind === 'already-credited') return answerSettlement(credited, quote, chain, again, key)
      const headers = paymentResponse({
        success: true, network: quote.network as PaymentRequirements['network'], transaction: settlement.txHash, payer: settlement.payer,
        extra: { status: 'confirmed', confirmations: settlement.confirmations },
      })
      const receipt = { quoteId: quote.ID, pack: quote.pack_name, units: Number(quote.units), lovelace: String(quote.lovelace), transaction: settlement.txHash, payer: settlement.payer, confirmations: settlement.confirmations }
      if (credited.kind === 'new-key') return ok(deliverKey(credited.issued, { purchase: receipt }), headers)
      return ok({ id: credited.keyId, credited: Number(quote.units), unitsLeft: credited.unitsLeft, purchase: receipt }, { ...headers, [UNITS_LEFT]: credited.unitsLeft })
    }
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const isUuid = (text: string) => UUID.test(text)
