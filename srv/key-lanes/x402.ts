import { decodePaymentSignatureHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http'
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types'
import type { Answer } from '../gateway/answers.ts'

/**
 * The x402 version 2 wire of the purchase lane, through the public library's own encoders: a 402
 * carries `PaymentRequired` in the `PAYMENT-REQUIRED` header (base64 JSON), mirrored in the body
 * beside our error object; the client pays and sends `PAYMENT-SIGNATURE` (base64 JSON of a
 * `PaymentPayload`); the answer that settles it carries `PAYMENT-RESPONSE`.
 */

export const X402_VERSION = 2
const PAYMENT_REQUIRED = 'PAYMENT-REQUIRED'
export const PAYMENT_SIGNATURE = 'payment-signature'
const PAYMENT_RESPONSE = 'PAYMENT-RESPONSE'

/** Why a payment is asked for again, in x402's lower-snake words (`reason`) and as our stable code. */
export interface PaymentProblem {
  code: string
  reason: string
  message: string
}

export function paymentRequired(required: Omit<PaymentRequired, 'error'>, problem: PaymentProblem, body: object = {}): Answer {
  const header = encodePaymentRequiredHeader({ ...required, error: problem.reason })
  return {
    status: 402,
    headers: { [PAYMENT_REQUIRED]: header, 'Cache-Control': 'no-store' },
    body: { error: { code: problem.code, message: problem.message, reason: problem.reason }, ...body, ...required },
  }
}

export const paymentResponse = (settled: SettleResponse) => ({ [PAYMENT_RESPONSE]: encodePaymentResponseHeader(settled) })

type DecodedPayment = { ok: true; payment: PaymentPayload } | { ok: false; message: string }

/** The `PAYMENT-SIGNATURE` header, decoded and checked for the shape of a version 2 payload. */
export function decodePayment(header: string): DecodedPayment {
  let decoded: unknown
  try {
    decoded = decodePaymentSignatureHeader(header.trim())
  } catch {
    return { ok: false, message: 'PAYMENT-SIGNATURE is not base64 of a JSON object' }
  }
  if (!isObject(decoded)) return { ok: false, message: 'PAYMENT-SIGNATURE must encode a JSON object' }
  if (decoded.x402Version !== X402_VERSION) return { ok: false, message: `x402Version must be ${X402_VERSION}, got ${JSON.stringify(decoded.x402Version)?.slice(0, 20)}` }
  if (!isObject(decoded.accepted)) return { ok: false, message: 'accepted (the payment requirements paid for) is missing' }
  if (!isObject(decoded.accepted.extra) || typeof decoded.accepted.extra.quoteId !== 'string') return { ok: false, message: 'accepted.extra.quoteId is missing: echo the requirements the 402 answered' }
  if (!isObject(decoded.payload)) return { ok: false, message: 'payload is missing' }
  return { ok: true, payment: decoded as unknown as PaymentPayload }
}

export const isObject = (value: unknown): value is Record<string, any> => typeof value === 'object' && value !== null && !Array.isArray(value)

export type { PaymentRequirements }
