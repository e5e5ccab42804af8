import type { Purchase } from '#cds-models/gateway'
import { refusal, type Answer } from '../gateway/answers.ts'
import { laneConfig } from './config.ts'
import { laneMac, sameMac } from './lane-secret.ts'
import { TokenBuckets } from '../lib/token-buckets.ts'

/**
 * A quote of the purchase lane is kept by its buyer, not by the gateway: the 402 answer's
 * requirements carry the quote's terms in `extra`, sealed by a MAC under the key lanes' secret
 * (lane-secret.ts). The client echoes them in PAYMENT-SIGNATURE, and the gateway believes only
 * terms it sealed itself, so nothing of a quote is stored until a payment for it is presented. The
 * MAC never reaches the chain: whoever only read the payment there (the signed transaction, the
 * quote id in its memo, its inputs) cannot present it, neither first nor on a resume.
 *
 * A quote costs no row, but a pack lookup and, when it names a payer, a chain read and a
 * transaction build: every caller has a budget of quotes a minute, a smaller one of its own for
 * those naming a payer (token buckets shared by the instances, like the gateway's other limits).
 */

export type Lane = NonNullable<Purchase['lane']>

/** What a quote promises, as sealed into its requirements' `extra`. */
export interface QuoteTerms {
  quoteId: string
  lane: Lane
  pack: string
  units: number
  /** In decimal digits. */
  lovelace: string
  payTo: string
  network: string
  expiresAt: string
  /** The key a top-up credits. */
  keyId?: string
  /** When the quote named a payer: its address and the nonce of the transaction prepared for it. */
  payer?: string
  nonce?: string
}

const MAC_PURPOSE = 'x402 quote'
/** A MAC as `extra.mac` carries it: 32 bytes in base64url. */
const MAC_TEXT = /^[A-Za-z0-9_-]{43}$/
/** No genuine term is longer (addresses are the longest). */
const TERM_LIMIT = 200

/** The terms with their MAC, as `extra` carries them. */
export const sealed = (terms: QuoteTerms) => ({ ...terms, mac: macOf(terms).toString('base64url') })

/** The terms an echoed `extra` carries, when the gateway sealed them and none changed since; undefined otherwise. */
export function unsealed(extra: Record<string, unknown>): QuoteTerms | undefined {
  const terms = termsOf(extra)
  if (!terms || typeof extra.mac !== 'string' || !MAC_TEXT.test(extra.mac)) return undefined
  return sameMac(Buffer.from(extra.mac, 'base64url'), macOf(terms)) ? terms : undefined
}

const macOf = (terms: QuoteTerms) => laneMac(MAC_PURPOSE, terms.quoteId, terms.lane, terms.pack, String(terms.units), terms.lovelace, terms.payTo,
  terms.network, terms.expiresAt, terms.keyId ?? '', terms.payer ?? '', terms.nonce ?? '')

function termsOf(extra: Record<string, unknown>): QuoteTerms | undefined {
  const { quoteId, lane, pack, units, lovelace, payTo, network, expiresAt, keyId, payer, nonce } = extra
  if (lane !== 'keys' && lane !== 'topup') return undefined
  if (typeof units !== 'number' || !Number.isSafeInteger(units)) return undefined
  if (!isTerm(quoteId) || !isTerm(pack) || !isTerm(lovelace) || !isTerm(payTo) || !isTerm(network) || !isTerm(expiresAt)) return undefined
  if (![keyId, payer, nonce].every(value => value === undefined || isTerm(value))) return undefined
  return { quoteId, lane, pack, units, lovelace, payTo, network, expiresAt, ...optionalTerms({ keyId, payer, nonce }) }
}

const isTerm = (value: unknown): value is string => typeof value === 'string' && value.length > 0 && value.length <= TERM_LIMIT

const optionalTerms = (terms: Record<string, unknown>) => Object.fromEntries(Object.entries(terms).filter(([, value]) => value !== undefined)) as Partial<QuoteTerms>

const quoteBuckets = new TokenBuckets()
const payerQuoteBuckets = new TokenBuckets()

/**
 * Takes one quote from the caller's budget: `caller` is the client address for POST /keys, the key
 * for POST /topup (a key holder never waits for others behind its address). Answers the 429 when
 * the budget is spent.
 */
export function quoteBudgetSpent(caller: string, namesPayer: boolean): Answer | undefined {
  const { quotesPerMinute, payerQuotesPerMinute } = laneConfig().purchase
  const perMinute = Math.max(1, namesPayer ? payerQuotesPerMinute : quotesPerMinute)
  const taken = (namesPayer ? payerQuoteBuckets : quoteBuckets).take(caller, perMinute / 60, perMinute)
  if (taken.ok) return undefined
  const what = namesPayer ? 'quotes naming a payer' : 'quotes'
  return refusal(429, 'RATE_LIMITED', `Too many ${what} (at most ${perMinute} a minute); retry after ${taken.retryAfterS} s, or pay a quote you hold`, {}, { 'Retry-After': taken.retryAfterS })
}
