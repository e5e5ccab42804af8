import { booleanSetting, numberSetting, requiresBlock, stringSetting } from '../lib/settings.ts'

export interface GatewayConfig {
  /** The hosted gateway is on: API keys, metering, route gating (off when self-hosted). */
  enabled: boolean
  /** A call not answered within this time is answered 504 and refunded. */
  timeoutMs: number
  /** Pending reservations older than this are voided (refunded) by the sweeper. */
  reservationTimeoutS: number
  sweepIntervalS: number
  /** Per-key rate limit overrides; by default each plan's ratePerSecond and burst apply. */
  ratePerSecond?: number
  burst?: number
  /** Unauthenticated failures allowed per client address and window before 429. */
  authFailures: number
  authFailureWindowS: number
  /** Base URL shown with a new key: where to send it. */
  publicUrl: string
}

export function gatewayConfig(): GatewayConfig {
  const block = requiresBlock('gateway')
  const rate = numberSetting('GATEWAY_RATE_PER_SECOND', block.ratePerSecond, 0)
  const burst = numberSetting('GATEWAY_BURST', block.burst, 0)
  return {
    enabled: booleanSetting('GATEWAY_ENABLED', block.enabled, false),
    timeoutMs: numberSetting('GATEWAY_TIMEOUT_MS', block.timeoutMs, 30_000),
    reservationTimeoutS: numberSetting('GATEWAY_RESERVATION_TIMEOUT_S', block.reservationTimeoutS, 90),
    sweepIntervalS: numberSetting('GATEWAY_SWEEP_INTERVAL_S', block.sweepIntervalS, 30),
    ratePerSecond: rate > 0 ? rate : undefined,
    burst: burst > 0 ? burst : undefined,
    authFailures: numberSetting('GATEWAY_AUTH_FAILURES', block.authFailures, 20),
    authFailureWindowS: numberSetting('GATEWAY_AUTH_FAILURE_WINDOW_S', block.authFailureWindowS, 900),
    publicUrl: stringSetting('GATEWAY_PUBLIC_URL', block.publicUrl, `http://localhost:${process.env.PORT || 4004}`),
  }
}
