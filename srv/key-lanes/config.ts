import { requiresOptions, type Environment } from '../lib/requires-options.ts'
import { isProduction } from '../lib/settings.ts'
import { laneSecret, laneSecretProblem } from './lane-secret.ts'
import { secretProblem } from '../lib/production-settings.ts'

/** The key lanes' documented environment variables (docs/configuration.md) and the option of `cds.requires.gateway` each one sets. */
const LANE_ENVIRONMENT: Environment = {
  GATEWAY_WALLET_FREE_UNITS: 'walletFreeUnits',
  GATEWAY_WALLET_FREE_MIN_LOVELACE: 'walletFreeMinLovelace',
  GATEWAY_WALLET_FREE_HISTORY: 'walletFreeHistory',
  GATEWAY_WALLET_FREE_DAILY_UNITS: 'walletFreeDailyUnits',
  GATEWAY_WALLET_SESSION_MINUTES: 'walletSessionMinutes',
  GATEWAY_VOUCHER_PEPPER: 'voucherPepper',
  GATEWAY_VOUCHER_FAILURES: 'voucherFailures',
  GATEWAY_VOUCHER_FAILURE_WINDOW_S: 'voucherFailureWindowS',
  GATEWAY_X402_PAY_TO: 'payTo',
  GATEWAY_X402_CONFIRMATIONS: 'confirmations',
  GATEWAY_X402_SETTLE_WAIT_MS: 'settleWaitMs',
  GATEWAY_X402_QUOTE_SECONDS: 'quoteSeconds',
  GATEWAY_X402_QUOTES_PER_MINUTE: 'quotesPerMinute',
  GATEWAY_X402_PAYER_QUOTES_PER_MINUTE: 'payerQuotesPerMinute',
  GATEWAY_X402_SWEEP_INTERVAL_MS: 'sweepIntervalMs',
  GATEWAY_X402_UNCOLLECTED_GRACE_MS: 'uncollectedGraceMs',
}

const options = requiresOptions('gateway', LANE_ENVIRONMENT, { named: 'variable' })

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
  const read = options.reader(options.options())
  return {
    walletFreeUnits: read.number('walletFreeUnits', 500),
    walletFreeMinLovelace: read.number('walletFreeMinLovelace', 5_000_000),
    walletFreeHistory: read.boolean('walletFreeHistory', true),
    walletFreeDailyUnits: read.number('walletFreeDailyUnits', 100_000),
    walletSessionMinutes: read.number('walletSessionMinutes', 30),
    voucherPepper: voucherPepper(read.optional('voucherPepper')),
    voucherFailures: read.number('voucherFailures', 10),
    voucherFailureWindowS: read.number('voucherFailureWindowS', 900),
    laneSecret: laneSecret(),
    purchase: {
      payTo: read.optional('payTo'),
      confirmations: read.number('confirmations', 1),
      settleWaitMs: read.number('settleWaitMs', 10_000),
      quoteSeconds: read.number('quoteSeconds', 600),
      quotesPerMinute: read.number('quotesPerMinute', 60),
      payerQuotesPerMinute: read.number('payerQuotesPerMinute', 10),
      sweepIntervalMs: read.number('sweepIntervalMs', 60_000),
      uncollectedGraceMs: read.number('uncollectedGraceMs', 300_000),
    },
  }
}

function voucherPepper(pepper: string | undefined): string {
  if (pepper) return pepper
  if (isProduction()) throw new Error('GATEWAY_VOUCHER_PEPPER must be set in production: voucher codes are stored under a keyed hash')
  return DEVELOPMENT_PEPPER
}

/** The key lanes' production settings (lib/production-settings.ts): both secrets set and strong. */
export function laneProductionProblems(): string[] {
  const pepper = options.reader(options.options()).optional('voucherPepper')
  const problems = [secretProblem('GATEWAY_VOUCHER_PEPPER', pepper, 'voucher codes are stored under a keyed hash with it'), laneSecretProblem()]
  return problems.filter(problem => problem !== undefined)
}
