import cds from '@sap/cds'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { Purchase, Purchases } from '#cds-models/gateway'
import type { ChainBlock } from '../chains/chain-a/port.ts'
import { laneConfig } from './config.ts'
import { forgetPayerOutputs, paymentChain, type PaymentChain } from './payment-chain.ts'
import type { QuoteTerms } from './purchase-quotes.ts'
import { CLAIM_LAPSE_MS, creditPurchase, submitOnce, takeOverLapsedClaim } from './purchase-settlement.ts'

/**
 * Settles the purchases their buyers left unfinished (a tab reloaded, a client crashed: the header
 * whose MAC makes the payment theirs is gone), so that nothing paid for is lost. Scheduled once
 * per gateway (index.ts) and safe in several instances at once: every change is a guarded UPDATE
 * from the state it starts in, so each purchase is submitted, released or credited once.
 *
 * - A `claimed` purchase whose claimant recorded no submission within CLAIM_LAPSE_MS is taken over
 *   and its stored transaction submitted, as a buyer's resume would (a refusal releases the quote;
 *   a transaction the chain has already counts as submitted).
 * - A `submitted` payment that is `GATEWAY_X402_CONFIRMATIONS` deep and that its buyer has not
 *   collected `GATEWAY_X402_UNCOLLECTED_GRACE_MS` after it got that deep is credited as a resume
 *   would: a top-up to its key; a new key bound to the paying address, shown to nobody: its holder
 *   gets it by signing in with the paying wallet and rotating it. A later resume answers 409
 *   PAYMENT_ALREADY_CREDITED.
 * - A `submitted` payment the chain does not have once its validity has passed can never reach it:
 *   it is released (rejected), as a refusal by the chain would be.
 * - A released payment that reaches the chain after all is taken back (submitted again), and then
 *   settles as above: a resubmission is refused when the first submission is still in the mempool
 *   (its claimant died before recording it, or the chain's answer to it was lost), and neither the
 *   chain's answer nor its transactions tell that apart from a payment it will never take.
 */

const { SELECT, UPDATE } = cds.ql
const { claimed, submitted, rejected } = Purchase.status
/** Purchases looked at per kind and sweep; the oldest first, the rest in the next sweep. */
const SWEEP_BATCH = 100

/** A purchase the sweeper settles: its row, with the payment it was claimed for. */
interface LeftPurchase {
  ID: string
  terms: QuoteTerms
  payer: string
  txHash: string
  txCbor: string
}

export async function sweepPurchases(now = Date.now()): Promise<void> {
  const [lapsed, released, uncollected] = [await lapsedClaims(now), await releasedInValidity(now), await uncollectedPayments(now)]
  if (!lapsed.length && !released.length && !uncollected.length) return
  const chain = await paymentChain()
  for (const purchase of lapsed) await settleOne(purchase, () => submitLapsedClaim(purchase, chain))
  for (const purchase of released) await settleOne(purchase, () => takeBackIfOnChain(purchase, chain))
  for (const purchase of uncollected) await settleOne(purchase, () => settleUncollected(purchase, chain, now))
}

/** Claims whose claimant recorded no submission in time: it may have died before or after submitting. */
const lapsedClaims = (now: number) => leftPurchases({ status: claimed, claimedAt: { '<': new Date(now - CLAIM_LAPSE_MS).toISOString() } }, 'claimedAt')

/**
 * Released payments that may still reach the chain: a payment is claimed before its quote expires
 * and is valid for at most the quote's lifetime from then.
 */
const releasedInValidity = (now: number) =>
  leftPurchases({ status: rejected, expiresAt: { '>': new Date(now - laneConfig().purchase.quoteSeconds * 1000).toISOString() } }, 'expiresAt')

/** Payments submitted longer ago than the grace (one submitted since cannot have been deep enough for that long). */
const uncollectedPayments = (now: number) =>
  leftPurchases({ status: submitted, submittedAt: { '<': new Date(now - laneConfig().purchase.uncollectedGraceMs).toISOString() } }, 'submittedAt')

async function leftPurchases(where: object, oldestFirst: string): Promise<LeftPurchase[]> {
  const rows = await cds.tx(() => SELECT.from(Purchases)
    .columns('ID', 'lane', 'pack_name', 'units', 'lovelace', 'payTo', 'network', 'apiKey_ID', 'payer', 'txHash', 'txCbor', 'expiresAt')
    .where({ ...where, txHash: { '!=': null }, txCbor: { '!=': null } })
    .orderBy(oldestFirst).limit(SWEEP_BATCH))
  return rows.map(leftPurchaseOf)
}

function leftPurchaseOf(row: Purchase): LeftPurchase {
  const terms: QuoteTerms = {
    quoteId: row.ID!, lane: row.lane!, pack: row.pack_name!, units: Number(row.units), lovelace: String(row.lovelace), payTo: row.payTo!, network: row.network!,
    expiresAt: row.expiresAt!, ...(row.apiKey_ID ? { keyId: row.apiKey_ID } : {}),
  }
  return { ID: row.ID!, terms, payer: row.payer!, txHash: row.txHash!, txCbor: row.txCbor! }
}

/** One purchase's settlement; a failure is logged and the purchase tried again in the next sweep, the others go on. */
async function settleOne(purchase: LeftPurchase, settlement: () => Promise<void>): Promise<void> {
  try {
    await settlement()
  } catch (error) {
    cds.log('gateway').warn(`purchase ${purchase.ID} (payment ${purchase.txHash}): not settled in this sweep, tried again in the next:`, error)
  }
}

async function submitLapsedClaim(purchase: LeftPurchase, chain: PaymentChain): Promise<void> {
  if (!(await takeOverLapsedClaim(purchase.ID, purchase.txHash))) return
  const payment = { txHash: purchase.txHash, payer: purchase.payer, cbor: Buffer.from(purchase.txCbor, 'hex') }
  const submission = await submitOnce(purchase.ID, payment, chain)
  forgetPayerOutputs(purchase.payer)
  const log = cds.log('gateway')
  if (submission.kind === 'submitted') log.info(`purchase ${purchase.ID}: took over its lapsed claim and submitted payment ${purchase.txHash}`)
  if (submission.kind === 'refused') log.info(`purchase ${purchase.ID}: took over its lapsed claim; the chain refused payment ${purchase.txHash}, the quote is released: ${submission.problem.message}`)
}

async function takeBackIfOnChain(purchase: LeftPurchase, chain: PaymentChain): Promise<void> {
  if (!(await chain.port.transaction(purchase.txHash))) return
  const affected = await cds.tx(() => UPDATE.entity(Purchases).set({ status: submitted, submittedAt: new Date().toISOString(), reason: null })
    .where({ ID: purchase.ID, txHash: purchase.txHash, status: rejected }))
  if (affected === 1) cds.log('gateway').info(`purchase ${purchase.ID}: payment ${purchase.txHash} reached the chain after it was released; it settles as submitted`)
}

async function settleUncollected(purchase: LeftPurchase, chain: PaymentChain, now: number): Promise<void> {
  // The tip first: a payment not on chain after it has passed its validity never will be.
  const tip = await chain.port.tip()
  const tx = await chain.port.transaction(purchase.txHash)
  if (!tx) {
    if (tip.slot >= validityEndOf(purchase.txCbor)) await releaseNeverOnChain(purchase)
    return
  }
  const { confirmations, uncollectedGraceMs } = laneConfig().purchase
  if (tip.height - tx.blockHeight < confirmations) return
  const deepEnough = await chain.port.block(tx.blockHeight + confirmations)
  if (!deepEnough || timeOf(deepEnough) + uncollectedGraceMs > now) return
  const credit = await creditPurchase(purchase.terms, { txHash: purchase.txHash, payer: purchase.payer })
  const log = cds.log('gateway')
  if (credit.kind === 'new-key') {
    log.info(`purchase ${purchase.ID}: credited uncollected payment ${purchase.txHash}, ${purchase.terms.units} units to new key ${credit.issued.id} bound to ${purchase.payer} (its holder signs in with that wallet to rotate it)`)
  }
  if (credit.kind === 'top-up') log.info(`purchase ${purchase.ID}: credited uncollected payment ${purchase.txHash}, ${purchase.terms.units} units to key ${credit.keyId}`)
}

/** The slot from which the payment's transaction is no longer valid (its ttl; payments without one are refused before they are claimed). */
function validityEndOf(txCbor: string): number {
  const ttl = CSL.FixedTransaction.from_hex(txCbor).body().ttl_bignum()
  return ttl ? Number(ttl.to_str()) : Number.POSITIVE_INFINITY
}

async function releaseNeverOnChain(purchase: LeftPurchase): Promise<void> {
  const reason = 'the payment did not reach the chain within its validity'
  const affected = await cds.tx(() => UPDATE.entity(Purchases).set({ status: rejected, reason }).where({ ID: purchase.ID, txHash: purchase.txHash, status: submitted }))
  if (affected === 1) cds.log('gateway').info(`purchase ${purchase.ID}: released, ${reason} (payment ${purchase.txHash})`)
}

const timeOf = (block: ChainBlock) => block.time * 1000
