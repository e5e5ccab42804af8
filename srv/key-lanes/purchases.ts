import cds from '@sap/cds'
import { Packs } from '#cds-models/gateway'
import type { KeyRecord } from '../gateway/accounts.ts'
import { ok, refusal, UNITS_LEFT, type Answer } from '../gateway/answers.ts'
import { gatewayConfig } from '../gateway/config.ts'
import { laneConfig } from './config.ts'
import { deliverKey } from '../gateway/key-delivery.ts'
import type { KeyedCall, OwnCall } from '../gateway/calls.ts'
import { paymentChain, payToAddress, preparedPayment } from './payment-chain.ts'
import { quoteBudgetSpent, sealed, unsealed, type Lane, type QuoteTerms } from './purchase-quotes.ts'
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
 * network, asset lovelace, maxTimeoutSeconds) and in `extra` the quote's terms sealed by the
 * gateway's MAC (purchase-quotes.ts; nothing is stored), the memo the payment must carry (the
 * quote id, as CIP-20 metadata) and, when the caller named a `payer`, the payment transaction
 * prepared for that address. With it, the echoed terms are believed only under their MAC; the
 * payment is verified by the exact-scheme rules against them, claimed (the purchase row is written
 * then), submitted once and followed to the configured confirmations (purchase-settlement.ts);
 * until then the answer is 402 `settlement_pending`, and sending the same PAYMENT-SIGNATURE again
 * resumes, in this instance or another, before or after a restart. The pack is credited exactly once.
 */

const { SELECT } = cds.ql
const DEFAULT_PACK = 'starter'
/** What a pack's name can be (Packs.name); anything else is refused before the database sees it. */
const PACK_NAME = /^[A-Za-z0-9_-]{1,20}$/
/** The prepared transaction's validity ends this much before the quote's, so it always passes ttl_too_far. */
const VALIDITY_MARGIN_S = 30
/** A prepared transaction echoed in `extra.transaction` is answered back only when it looks like one (unsigned CBOR hex). */
const PREPARED_TRANSACTION = /^(?:[0-9a-f]{2}){1,16384}$/i

export const buyKey = (call: OwnCall) => purchase('keys', call)
export const topUp = (call: KeyedCall) => purchase('topup', call, call.key)

async function purchase(lane: Lane, call: OwnCall, key?: KeyRecord): Promise<Answer> {
  const header = call.headers[PAYMENT_SIGNATURE]
  if (typeof header === 'string' && header.trim()) return pay(lane, header, key)
  return quote(lane, call, key)
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

/** A new quote for a pack, answered 402 with its sealed terms; nothing is stored. */
async function quote(lane: Lane, call: OwnCall, key?: KeyRecord): Promise<Answer> {
  const chain = await paymentChain()
  const request = quoteRequest(call.body, chain.network)
  const spent = quoteBudgetSpent(key ? `key ${key.ID}` : call.client, request.payer !== undefined)
  if (spent) return spent
  const pack = await cds.tx(() => SELECT.one.from(Packs).where({ name: request.pack, active: true }))
  if (!pack) throw new ApiError(400, 'UNKNOWN_PACK', `There is no pack '${request.pack}'; the packs are listed on GET /prices`, { target: 'pack' })
  const { quoteSeconds } = laneConfig().purchase
  const quoteId = cds.utils.uuid()
  const payTo = payToAddress()
  const prepared = request.payer
    ? await preparedPayment(chain, { payer: request.payer, payTo, amount: BigInt(pack.lovelace!), quoteId, ttlSeconds: quoteSeconds - VALIDITY_MARGIN_S })
    : undefined
  const terms: QuoteTerms = {
    quoteId, lane, pack: pack.name!, units: Number(pack.units), lovelace: String(pack.lovelace), payTo, network: chain.caipNetwork,
    expiresAt: new Date(Date.now() + quoteSeconds * 1000).toISOString(),
    ...(key ? { keyId: key.ID } : {}),
    ...(prepared ? { payer: request.payer, nonce: prepared.nonce } : {}),
  }
  const problem = { code: 'PAYMENT_REQUIRED', reason: 'payment_required', message: `Pay ${pack.lovelace} lovelace to ${payTo} and send the signed transaction in PAYMENT-SIGNATURE` }
  return paymentRequired(requiredFor(terms, prepared?.unsignedTxCbor), problem)
}

/** The quote's x402 requirements; `preparedTx` is the payment transaction made for the payer. */
function requiredFor(terms: QuoteTerms, preparedTx?: string) {
  const { publicUrl } = gatewayConfig()
  const { purchase } = laneConfig()
  const requirements: PaymentRequirements = {
    scheme: 'exact',
    network: terms.network as PaymentRequirements['network'],
    asset: 'lovelace',
    amount: terms.lovelace,
    payTo: terms.payTo,
    maxTimeoutSeconds: purchase.quoteSeconds,
    extra: {
      ...sealed(terms), memo: quoteMemo(terms.quoteId), confirmationPolicy: { l1Confirmations: purchase.confirmations },
      ...(preparedTx ? { transaction: preparedTx } : {}),
    },
  }
  const path = terms.lane === 'keys' ? '/keys' : '/topup'
  return {
    x402Version: X402_VERSION,
    resource: { url: publicUrl + path, description: `${terms.units} units (${terms.pack} pack)`, mimeType: 'application/json' },
    accepts: [requirements],
  }
}

/** A payment for a quote the gateway sealed: verified against its terms, claimed, submitted, followed, credited. */
async function pay(lane: Lane, header: string, key?: KeyRecord): Promise<Answer> {
  const decoded = decodePayment(header)
  if (!decoded.ok) return refusal(400, 'PAYMENT_SIGNATURE_MALFORMED', decoded.message)
  const { payment } = decoded
  const echoed = payment.accepted
  const terms = unsealed(echoed.extra)
  if (!terms) {
    return refusal(402, 'QUOTE_TAMPERED', 'accepted.extra holds no quote of this gateway as it made it (a term was changed, or its mac is not ours): send the requirements of the 402 answer unchanged, or ask for a new quote without PAYMENT-SIGNATURE', { reason: 'quote_tampered' })
  }
  if (terms.lane !== lane || (lane === 'topup' && terms.keyId !== key?.ID)) {
    return refusal(402, 'QUOTE_UNKNOWN', `Quote ${terms.quoteId} is not for ${lane === 'keys' ? 'POST /keys' : 'POST /topup with this key'}: send it where it was asked for, or ask for a new one without PAYMENT-SIGNATURE`, { reason: 'quote_unknown' })
  }
  const preparedTx = typeof echoed.extra.transaction === 'string' && PREPARED_TRANSACTION.test(echoed.extra.transaction) ? echoed.extra.transaction : undefined
  const required = requiredFor(terms, preparedTx)
  const again = (problem: PaymentProblem, body: object = {}) => paymentRequired(required, problem, body)

  const chain = await paymentChain()
  if (echoed.scheme !== 'exact' || echoed.network !== terms.network || terms.network !== chain.caipNetwork) {
    return again({ code: 'PAYMENT_NETWORK_MISMATCH', reason: 'network_mismatch', message: `This quote is paid with scheme exact on ${terms.network}, not ${String(echoed.scheme)} on ${String(echoed.network)}` })
  }
  const verdict = await verifyExactPayment(payment.payload, {
    networkId: chain.networkId, payTo: terms.payTo, amount: BigInt(terms.lovelace), quoteId: terms.quoteId, maxTimeoutSeconds: laneConfig().purchase.quoteSeconds,
  }, chain.view())
  if (!verdict.ok) return again({ code: 'PAYMENT_INVALID', reason: verdict.reason, message: verdict.message })

  const settlement = await settle(terms, verdict, chain)
  return answerSettlement(settlement, terms, again)
}

async function answerSettlement(settlement: Settlement, terms: QuoteTerms, again: (problem: PaymentProblem, body?: object) => Answer): Promise<Answer> {
  switch (settlement.kind) {
    case 'refused':
      return again(settlement.problem)
    case 'pending':
      return again(
        { code: 'SETTLEMENT_PENDING', reason: 'settlement_pending', message: `Payment ${settlement.txHash} is ${settlement.confirmations < 0 ? 'submitted, not yet in a block' : `${settlement.confirmations} of ${laneConfig().purchase.confirmations} blocks deep`}; send the same PAYMENT-SIGNATURE again to resume` },
        { pending: true, transaction: settlement.txHash, confirmations: Math.max(settlement.confirmations, 0) },
      )
    case 'already-credited':
      return refusal(409, 'PAYMENT_ALREADY_CREDITED', `Payment ${settlement.txHash} was credited already (key ${settlement.keyId}); a key is shown once: sign in with the paying wallet (POST /auth/challenge) to rotate it`, { keyId: settlement.keyId, transaction: settlement.txHash })
    case 'confirmed': {
      const credited = await creditPurchase(terms, settlement)
      if (credited.kind === 'already-credited') return answerSettlement(credited, terms, again)
      const headers = paymentResponse({
        success: true, network: terms.network as PaymentRequirements['network'], transaction: settlement.txHash, payer: settlement.payer,
        extra: { status: 'confirmed', confirmations: settlement.confirmations },
      })
      const receipt = { quoteId: terms.quoteId, pack: terms.pack, units: terms.units, lovelace: terms.lovelace, transaction: settlement.txHash, payer: settlement.payer, confirmations: settlement.confirmations }
      if (credited.kind === 'new-key') return ok(deliverKey(credited.issued, { purchase: receipt }), headers)
      return ok({ id: credited.keyId, credited: terms.units, unitsLeft: credited.unitsLeft, purchase: receipt }, { ...headers, [UNITS_LEFT]: credited.unitsLeft })
    }
  }
}
