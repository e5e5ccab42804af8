import { booleanSetting, numberSetting, optionalSetting, requiresBlock, stringSetting } from '../lib/settings.ts'

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
  /** Calls one key may have in flight at once in one instance; beyond, 429 TOO_MANY_CALLS_IN_FLIGHT (uncharged). */
  maxCallsInFlight: number
  /** Unauthenticated failures allowed per client address and window before 429. */
  authFailures: number
  authFailureWindowS: number
  /** Base URL shown with a new key: where to send it; also where the key lanes tell their clients to go. */
  publicUrl: string
  /**
   * How an MCP client gets the tool servers: an npm package spec for `npx --package` (once this
   * package is published, or a tarball address). Unset, the configuration runs them from this
   * installation (`npx --prefix <its folder>`), which suits development and self-hosting.
   */
  mcpPackage?: string
}

/** The port this process listens on, once it does: with PORT=0 the system picks it. */
let listeningPort: number | undefined
export const rememberListeningPort = (port: number | undefined) => {
  listeningPort = port
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
    maxCallsInFlight: numberSetting('GATEWAY_MAX_CALLS_IN_FLIGHT', block.maxCallsInFlight, 16),
    authFailures: numberSetting('GATEWAY_AUTH_FAILURES', block.authFailures, 20),
    authFailureWindowS: numberSetting('GATEWAY_AUTH_FAILURE_WINDOW_S', block.authFailureWindowS, 900),
    publicUrl: stringSetting('GATEWAY_PUBLIC_URL', block.publicUrl, `http://localhost:${listeningPort ?? (process.env.PORT || 4004)}`).replace(/\/+$/, ''),
    mcpPackage: optionalSetting('GATEWAY_MCP_PACKAGE', block.mcpPackage),
  }
}
