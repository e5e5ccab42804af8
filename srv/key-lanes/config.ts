import { booleanSetting, isProduction, numberSetting, optionalSetting, requiresBlock } from '../lib/settings.ts'
import { laneSecret } from './lane-secret.ts'

/** The key lanes' settings: the `GATEWAY_…` variables and `cds.requires.gateway`, as the gateway's own. */
export interface LaneConfig {
  /** Units of the free first key of a wallet (wallet lane): once per payment and once per stake credential. */
  walletFreeUnits: number
  /** The balance in lovelace (a stake address: the stake its account controls) that qualifies an address for free units; 0: every address qualifies. */
  walletFreeMinLovelace: number
  /** Whether an address the chain knows (a transaction paid to it; a stake address: its account) qualifies without that balance. */
  walletFreeHistory: boolean
  /** Free units all wallets together get per UTC day, across instances. */
  walletFreeDailyUnits: number
  walletSessionMinutes: number
  /** The key of the keyed hash under which voucher codes are stored (required in production). */
  voucherPepper: string
  /** Failed voucher attempts allowed per client address (or per key) and window before 429. */
  voucherFailures: number
  voucherFailureWindowS: number
  /** The key lanes' MAC secret (lane-secret.ts), read here so that a missing one refuses the start in production. */
  laneSecret: string
  purchase: PurchaseConfig
}

/** The purchase lane (x402 over ADA on chain A). */
export interface PurchaseConfig {
  /** The address payments go to; where the bootstrap embeds the chain-A devnet, a test wallet's when not configured. */
  payTo?: string
  /** Blocks after the payment's block before the pack is credited (0: in a block is enough). */
  confirmations: number
  /** How long one request waits for the settlement before answering settlement_pending. */
  settleWaitMs: number
  /** How long a quote (and the payment transaction's validity) lasts: x402's maxTimeoutSeconds. */
  quoteSeconds: number
  /** Quotes one client may ask for a minute (that many at once, then evenly): POST /keys per client address, POST /topup per key. */
  quotesPerMinute: number
  /** The same for quotes naming a payer (each reads the chain and builds a transaction), counted on their own. */
  payerQuotesPerMinute: number
  /** How often the settlement sweeper looks for purchases their buyers left unfinished (purchase-sweeper.ts). */
  sweepIntervalMs: number
  /** How long a payment stays deep enough for its buyer to collect before the sweeper credits it (the new key then goes to whoever signs in as the payer). */
  uncollectedGraceMs: number
}

/** Stands in for GATEWAY_VOUCHER_PEPPER outside production, so development and tests need no secret. */
const DEVELOPMENT_PEPPER = 'development-only voucher pepper: set GATEWAY_VOUCHER_PEPPER in production'

export function laneConfig(): LaneConfig {
  const block = requiresBlock('gateway')
  return {
    walletFreeUnits: numberSetting('GATEWAY_WALLET_FREE_UNITS', block.walletFreeUnits, 500),
    walletFreeMinLovelace: numberSetting('GATEWAY_WALLET_FREE_MIN_LOVELACE', block.walletFreeMinLovelace, 5_000_000),
    walletFreeHistory: booleanSetting('GATEWAY_WALLET_FREE_HISTORY', block.walletFreeHistory, true),
    walletFreeDailyUnits: numberSetting('GATEWAY_WALLET_FREE_DAILY_UNITS', block.walletFreeDailyUnits, 100_000),
    walletSessionMinutes: numberSetting('GATEWAY_WALLET_SESSION_MINUTES', block.walletSessionMinutes, 30),
    voucherPepper: voucherPepper(block.voucherPepper),
    voucherFailures: numberSetting('GATEWAY_VOUCHER_FAILURES', block.voucherFailures, 10),
    voucherFailureWindowS: numberSetting('GATEWAY_VOUCHER_FAILURE_WINDOW_S', block.voucherFailureWindowS, 900),
    laneSecret: laneSecret(),
    purchase: {
      payTo: optionalSetting('GATEWAY_X402_PAY_TO', block.payTo),
      confirmations: numberSetting('GATEWAY_X402_CONFIRMATIONS', block.confirmations, 1),
      settleWaitMs: numberSetting('GATEWAY_X402_SETTLE_WAIT_MS', block.settleWaitMs, 10_000),
      quoteSeconds: numberSetting('GATEWAY_X402_QUOTE_SECONDS', block.quoteSeconds, 600),
      quotesPerMinute: numberSetting('GATEWAY_X402_QUOTES_PER_MINUTE', block.quotesPerMinute, 60),
      payerQuotesPerMinute: numberSetting('GATEWAY_X402_PAYER_QUOTES_PER_MINUTE', block.payerQuotesPerMinute, 10),
      sweepIntervalMs: numberSetting('GATEWAY_X402_SWEEP_INTERVAL_MS', block.sweepIntervalMs, 60_000),
      uncollectedGraceMs: numberSetting('GATEWAY_X402_UNCOLLECTED_GRACE_MS', block.uncollectedGraceMs, 300_000),
    },
  }
}

function voucherPepper(configured: Parameters<typeof optionalSetting>[1]): string {
  const pepper = optionalSetting('GATEWAY_VOUCHER_PEPPER', configured)
  if (pepper) return pepper
  if (isProduction()) throw new Error('GATEWAY_VOUCHER_PEPPER must be set in production: voucher codes are stored under a keyed hash')
  return DEVELOPMENT_PEPPER
}
