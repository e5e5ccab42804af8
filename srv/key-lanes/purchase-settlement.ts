import cds from '@sap/cds'
import { Packs, Purchase, Purchases } from '#cds-models/gateway'
import { insertKey, type IssuedKey } from '../gateway/accounts.ts'
import { laneConfig } from './config.ts'
import { creditInTransaction } from '../gateway/ledger.ts'
import { publishWebhookEvent } from '../lib/webhooks.ts'
import { forgetPayerOutputs, type PaymentChain } from './payment-chain.ts'
import type { QuoteTerms } from './purchase-quotes.ts'
import type { PaymentProblem } from './x402.ts'
import { isApiError } from '../lib/errors.ts'
import { isUniqueViolation } from '../lib/plain-sql.ts'

/**
 * How a verified payment settles a quote, so that it is never lost and never credited twice:
 *
 * 1. Claim: the purchase row is written now, by one INSERT; its id is the quote's and the payment's
 *    transaction hash is unique among purchases, so one quote is paid once and one payment settles
 *    one quote. A quote whose payment the chain refused is taken again by one guarded UPDATE.
 *    Whoever finds the quote already claimed by this very payment resumes instead (a retry,
 *    another instance, a request after a restart).
 * 2. Submit, once: by the claimant; should it die before the chain has the payment, a resumer (or
 *    the sweeper, purchase-sweeper.ts) takes over the claim once it has lapsed (CLAIM_LAPSE_MS)
 *    and submits the stored transaction.
 * 3. Follow: up to the configured wait, until the payment is `confirmations` blocks deep; if not
 *    yet, the answer is `settlement_pending` and the same payment sent again resumes here.
 * 4. Credit: one transaction moves the purchase from submitted to credited (a guarded UPDATE) and
 *    posts the credit with reference `payment:<hash>` (unique in the ledger) to a new key or the
 *    topped-up key. A second resumer finds it credited. A payment its buyer never comes back for is
 *    credited the same way by the sweeper (purchase-sweeper.ts).
 */

const { SELECT, INSERT, UPDATE } = cds.ql
const { claimed, submitted, credited, rejected } = Purchase.status
/** A claimant that recorded no submission within this long may have died: its claim may be taken over. */
export const CLAIM_LAPSE_MS = 30_000
const POLL_MS = 250

interface VerifiedPayment {
  txHash: string
  payer: string
  cbor: Uint8Array
}

export type Settlement =
  | { kind: 'refused'; problem: PaymentProblem }
  | { kind: 'pending'; txHash: string; confirmations: number }
  | { kind: 'already-credited'; txHash: string; keyId: string }
  | { kind: 'confirmed'; txHash: string; payer: string; confirmations: number }

/** What a submission did: the chain has the payment, or its answer was lost (a retry resumes), or it refused it (the quote is released). */
type Submission = { kind: 'submitted' } | { kind: 'unconfirmed' } | Extract<Settlement, { kind: 'refused' }>

type Credit =
  | { kind: 'new-key'; issued: IssuedKey }
  | { kind: 'top-up'; keyId: string; unitsLeft: number }
  | { kind: 'already-credited'; txHash: string; keyId: string }

export async function settle(quote: QuoteTerms, payment: VerifiedPayment, chain: PaymentChain): Promise<Settlement> {
  const taken = await claim(quote, payment)
  if (taken.kind !== 'mine' && taken.kind !== 'resume') return taken
  if (taken.kind === 'mine' || (await takeOverLapsedClaim(quote.quoteId, payment.txHash))) {
    const submission = await submitOnce(quote.quoteId, payment, chain)
    // The outputs this payment spends are no longer the payer's to quote with.
    for (const address of [payment.payer, quote.payer]) if (address) forgetPayerOutputs(address)
    if (submission.kind === 'refused') return submission
  }
  return follow(payment, chain)
}

type Claim = Settlement | { kind: 'mine' } | { kind: 'resume' }

async function claim(quote: QuoteTerms, payment: VerifiedPayment): Promise<Claim> {
  const now = new Date().toISOString()
  if (Date.parse(quote.expiresAt) > Date.parse(now)) {
    const taken = await takeQuote(quote, payment, now)
    if (taken === 'taken') return { kind: 'mine' }
    if (taken === 'payment-used') return usedElsewhere(payment.txHash)
  }
  const current = await cds.tx(() => SELECT.one.from(Purchases).columns('status', 'txHash', 'apiKey_ID').where({ ID: quote.quoteId }))
  if (current?.txHash === payment.txHash) {
    if (current.status === credited) return { kind: 'already-credited', txHash: payment.txHash, keyId: current.apiKey_ID! }
    if (current.status === claimed || current.status === submitted) return { kind: 'resume' }
  }
  const other = await cds.tx(() => SELECT.one.from(Purchases).columns('ID').where({ txHash: payment.txHash, ID: { '!=': quote.quoteId } }))
  if (other) return usedElsewhere(payment.txHash)
  if (!current || current.status === rejected) {
    return refused('QUOTE_EXPIRED', 'quote_expired', `Quote ${quote.quoteId} expired at ${quote.expiresAt}: ask for a new one without PAYMENT-SIGNATURE`)
  }
  return refused('QUOTE_ALREADY_PAID', 'quote_already_paid', `Quote ${quote.quoteId} is paid by another transaction (${current.txHash}); ask for a new quote to buy again`)
}

/**
 * Takes the quote for this payment: a new purchase row (the quote's first payment), else the row
 * of a quote whose payment the chain refused, while the quote lasts. The unique transaction hash
 * refuses a payment that settles another quote.
 */
async function takeQuote(quote: QuoteTerms, payment: VerifiedPayment, now: string): Promise<'taken' | 'payment-used' | 'not-taken'> {
  const claim = { status: claimed, txHash: payment.txHash, txCbor: Buffer.from(payment.cbor).toString('hex'), payer: payment.payer, claimedAt: now, reason: null }
  const row = {
    ID: quote.quoteId, lane: quote.lane, pack_name: quote.pack, units: quote.units, lovelace: Number(quote.lovelace), payTo: quote.payTo, network: quote.network,
    apiKey_ID: quote.keyId ?? null, createdAt: now, expiresAt: quote.expiresAt, ...claim,
  }
  try {
    await cds.tx(() => INSERT.into(Purchases).entries(row))
    return 'taken'
  } catch (error) {
    if (!isUniqueViolation(error)) throw error
  }
  try {
    const affected = await cds.tx(() => UPDATE.entity(Purchases).set(claim).where({ ID: quote.quoteId, status: rejected, expiresAt: { '>': now } }))
    return affected === 1 ? 'taken' : 'not-taken'
  } catch (error) {
    if (!isUniqueViolation(error)) throw error
    return 'payment-used'
  }
}

const usedElsewhere = (txHash: string) =>
  refused('PAYMENT_ALREADY_USED', 'payment_already_used', `Payment ${txHash} settles another quote; a payment buys one pack once`)

const refused = (code: string, reason: string, message: string) => ({ kind: 'refused' as const, problem: { code, reason, message } })

/** A claim whose claimant never recorded the submission within CLAIM_LAPSE_MS is taken over (it may have died). */
export async function takeOverLapsedClaim(quoteId: string, txHash: string): Promise<boolean> {
  const now = Date.now()
  const affected = await cds.tx(() => UPDATE.entity(Purchases).set({ claimedAt: new Date(now).toISOString() })
    .where({ ID: quoteId, txHash, status: claimed, claimedAt: { '<': new Date(now - CLAIM_LAPSE_MS).toISOString() } }))
  return affected === 1
}

/**
 * Submits the payment. A refusal by the chain releases the quote (rejected: it may be paid again)
 * unless the chain already has this very transaction (a submission before a crash), which counts
 * as submitted.
 */
export async function submitOnce(quoteId: string, payment: VerifiedPayment, chain: PaymentChain): Promise<Submission> {
  try {
    await chain.port.submit(payment.cbor)
  } catch (error) {
    if (!isApiError(error)) throw error
    if (error.status >= 500) {
      cds.log('gateway').warn(`payment ${payment.txHash}: submission not confirmed (${error.code}); a retry resumes it`)
      return { kind: 'unconfirmed' }
    }
    if (!(await chain.port.transaction(payment.txHash))) {
      await cds.tx(() => UPDATE.entity(Purchases).set({ status: rejected, reason: error.message.slice(0, 300) }).where({ ID: quoteId, txHash: payment.txHash, status: claimed }))
      return refused('PAYMENT_REJECTED', 'transaction_rejected', `The chain refused payment ${payment.txHash}: ${error.message}`)
    }
  }
  await cds.tx(() => UPDATE.entity(Purchases).set({ status: submitted, submittedAt: new Date().toISOString() }).where({ ID: quoteId, txHash: payment.txHash, status: claimed }))
  return { kind: 'submitted' }
}

/** Waits (up to the configured time) until the payment is deep enough. */
async function follow(payment: VerifiedPayment, chain: PaymentChain): Promise<Settlement> {
  const { confirmations: wanted, settleWaitMs } = laneConfig().purchase
  const deadline = Date.now() + settleWaitMs
  for (;;) {
    const depth = await confirmationsOf(payment.txHash, chain)
    if (depth >= wanted) return { kind: 'confirmed', txHash: payment.txHash, payer: payment.payer, confirmations: depth }
    if (Date.now() + POLL_MS > deadline) return { kind: 'pending', txHash: payment.txHash, confirmations: depth }
    await new Promise(resolve => setTimeout(resolve, POLL_MS))
  }
}

/** Blocks after the payment's block (0: in the tip block); -1 while it is in no block. */
async function confirmationsOf(txHash: string, chain: PaymentChain): Promise<number> {
  const tx = await chain.port.transaction(txHash)
  if (!tx) return -1
  const tip = await chain.port.tip()
  return Math.max(0, tip.height - tx.blockHeight)
}

/** Credits the confirmed payment's pack, exactly once. */
export async function creditPurchase(quote: QuoteTerms, settlement: { txHash: string; payer: string }): Promise<Credit> {
  const note = `${quote.pack} pack, payment ${settlement.txHash}`
  const reference = `payment:${settlement.txHash}`
  try {
    return await cds.tx(async tx => {
      const now = new Date().toISOString()
      if (quote.lane === 'topup') {
        if (!(await markCredited(quote.quoteId, settlement.txHash, quote.keyId!, now))) throw new AlreadyCredited()
        const unitsLeft = await creditInTransaction(tx, quote.keyId!, quote.units, note, reference)
        await publishWebhookEvent('payment.credited', { key: quote.keyId, pack: quote.pack, units: quote.units, transaction: settlement.txHash, payer: settlement.payer, newKey: false, unitsLeft })
        return { kind: 'top-up' as const, keyId: quote.keyId!, unitsLeft }
      }
      const issued = await insertKey({ plan: await planOf(quote.pack), units: quote.units, boundAddress: settlement.payer, label: `bought: ${quote.pack}`, note, reference })
      if (!(await markCredited(quote.quoteId, settlement.txHash, issued.id, now))) throw new AlreadyCredited()
      await publishWebhookEvent('payment.credited', { key: issued.id, pack: quote.pack, units: quote.units, transaction: settlement.txHash, payer: settlement.payer, newKey: true, unitsLeft: issued.unitsLeft })
      return { kind: 'new-key' as const, issued }
    })
  } catch (error) {
    if (!(error instanceof AlreadyCredited) && !isUniqueViolation(error)) throw error
    const row = await cds.tx(() => SELECT.one.from(Purchases).columns('apiKey_ID').where({ ID: quote.quoteId }))
    return { kind: 'already-credited', txHash: settlement.txHash, keyId: row?.apiKey_ID ?? '' }
  }
}

class AlreadyCredited extends Error {}

async function markCredited(quoteId: string, txHash: string, keyId: string, now: string): Promise<boolean> {
  const affected = await UPDATE.entity(Purchases).set({ status: credited, creditedAt: now, apiKey_ID: keyId }).where({ ID: quoteId, txHash, status: { in: [claimed, submitted] } })
  return affected === 1
}

async function planOf(packName: string): Promise<string> {
  const pack = await SELECT.one.from(Packs).columns('plan_name').where({ name: packName })
  return pack?.plan_name ?? 'standard'
}
