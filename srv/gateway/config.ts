import cds from '@sap/cds'
import { requiresOptions, type Environment } from '../lib/requires-options.ts'
import { secretProblem, urlProblem } from '../lib/production-settings.ts'
import { GRANT_PREFIXES, type Product } from './keys.ts'

/**
 * The gateway's settings, `cds.requires.gateway`: a documented variable first (ENVIRONMENT), else
 * the option, else the default. Read at each use.
 */

/** The gateway's documented environment variables (README, Configuration) and the option each one sets. */
const ENVIRONMENT: Environment = {
  GATEWAY_ENABLED: 'enabled',
  GATEWAY_TIMEOUT_MS: 'timeoutMs',
  GATEWAY_RESERVATION_TIMEOUT_S: 'reservationTimeoutS',
  GATEWAY_SWEEP_INTERVAL_S: 'sweepIntervalS',
  GATEWAY_LEASE_SECONDS: 'leaseSeconds',
  GATEWAY_LEASE_MIN_BALANCE: 'leaseMinBalance',
  GATEWAY_LEASE_IDLE_MS: 'leaseIdleMs',
  GATEWAY_LEASE_CHECK_MS: 'leaseCheckMs',
  GATEWAY_RATE_PER_SECOND: 'ratePerSecond',
  GATEWAY_BURST: 'burst',
  GATEWAY_MAX_CALLS_IN_FLIGHT: 'maxCallsInFlight',
  GATEWAY_MAX_INSTANCE_CALLS: 'maxInstanceCalls',
  GATEWAY_AUTH_FAILURES: 'authFailures',
  GATEWAY_AUTH_FAILURE_WINDOW_S: 'authFailureWindowS',
  GATEWAY_PUBLIC_URL: 'publicUrl',
  GATEWAY_MCP_PACKAGE: 'mcpPackage',
  CHAIN_A_REMOTE_URL: 'remotes.chain-a.url',
  CHAIN_A_REMOTE_AUTHORIZATION: 'remotes.chain-a.authorization',
  CHAIN_B_REMOTE_URL: 'remotes.chain-b.url',
  CHAIN_B_REMOTE_AUTHORIZATION: 'remotes.chain-b.authorization',
  CHAIN_B_REMOTE_KIND: 'remotes.chain-b.kind',
  CHAIN_B_REMOTE_SESSION_ID: 'remotes.chain-b.sessionId',
  CHAIN_B_REMOTE_CONTRACT_ADDRESS: 'remotes.chain-b.contractAddress',
  CHAIN_B_REMOTE_ARTIFACT_REF: 'remotes.chain-b.artifactRef',
  CHAIN_B_REMOTE_SPONSOR_SESSION_ID: 'remotes.chain-b.sponsorSessionId',
  GATEWAY_REMOTE_GRANT_SECRET: 'remoteGrantSecret',
}

const options = requiresOptions('gateway', ENVIRONMENT, { named: 'variable' })

export interface GatewayConfig {
  /** The hosted gateway is on: API keys, metering, route gating (off when self-hosted). */
  enabled: boolean
  /** A call not answered within this time is answered 504 and refunded. */
  timeoutMs: number
  /** Pending reservations older than this are voided (refunded) by the sweeper. */
  reservationTimeoutS: number
  sweepIntervalS: number
  /** A busy key's lease holds the units its calls spend in this many seconds at their current rate (srv/gateway/leases.ts); 0: no leases. */
  leaseSeconds: number
  /** A key with fewer units left gets no lease: each of its calls reserves in the database. */
  leaseMinBalance: number
  /** A lease not drawn on for this long is handed back. */
  leaseIdleMs: number
  /** How often an instance checks its leased keys for changes (revoked, rotated, another plan, a lease recalled). */
  leaseCheckMs: number
  /** Per-key rate limit overrides; by default each plan's ratePerSecond and burst apply. */
  ratePerSecond?: number
  burst?: number
  /** Calls one key may have in flight at once in one instance; beyond, 429 TOO_MANY_CALLS_IN_FLIGHT (uncharged). */
  maxCallsInFlight: number
  /** Metered calls one instance takes at once, all keys together; beyond, 503 SERVER_BUSY (uncharged). 0: no limit. */
  maxInstanceCalls: number
  /** Unauthenticated failures allowed per client address and window before 429. */
  authFailures: number
  authFailureWindowS: number
  /** Base URL shown with a new key: where to send it; also the domain and URI of the wallet sign-in message. */
  publicUrl: string
  /**
   * How an MCP client gets the tool servers: an npm package spec for `npx --package` (a published
   * package, or a tarball address elsewhere). Unset, the package this server serves at /mcp when it
   * has been built (npm run build:mcp; see mcpTarball), else this installation (`npx --prefix <its
   * folder>`), which suits a development checkout.
   */
  mcpPackage?: string
  /**
   * The configuration names the package served at /mcp when there is one (the default, as deployed).
   * The development and test profiles turn it off and name the checkout: a tarball left by an
   * earlier build must not stand in for the sources.
   */
  mcpTarball: boolean
  /** Products served by a remote instance: the gateway forwards their calls there (remote-products.ts). */
  remotes: Partial<Record<Product, RemoteProductConfig>>
  /** What the tokens of the grants held at remote products are sealed under (required in production when a remote is set). */
  remoteGrantSecret?: string
}

/**
 * What serves a remote product: another instance of this application (`instance`, the default), or
 * for chain B the chain-B plugin's own API (`plugin`: /api/v1/nightgate with its agent grants).
 */
export const REMOTE_KINDS = ['instance', 'plugin'] as const
export type RemoteKind = typeof REMOTE_KINDS[number]

/** A remote product: where it is served, and the credentials of its grant administration (an operator's). */
export interface RemoteProductConfig {
  kind: RemoteKind
  /** Its base URL: a call's path and query are appended as they came. */
  url: string
  /** The Authorization header for its grant administration: the operator service (instance), or the user who owns the wallet session (plugin). */
  authorization?: string
  /** The chain-B plugin only: what its grant and calls are pinned to (remote-plugin.ts). */
  plugin?: PluginSettings
}

export interface PluginSettings {
  /** The plugin's wallet session that signs and pays: the agent grant is pinned to it. */
  sessionId: string
  /** The attestation vault the calls go to. */
  contractAddress: string
  /** The compiled artefact the plugin runs the vault's circuits with (its default when unset). */
  artifactRef?: string
  /** A session that pays the fees instead (the plugin's fee sponsoring). */
  sponsorSessionId?: string
}

/** The port this process listens on, once it does: with PORT=0 the system picks it. */
let listeningPort: number | undefined
export const rememberListeningPort = (port: number | undefined) => {
  listeningPort = port
}

export function gatewayConfig(): GatewayConfig {
  const read = options.reader(options.options())
  const rate = read.number('ratePerSecond', 0)
  const burst = read.number('burst', 0)
  return {
    enabled: read.boolean('enabled', false),
    timeoutMs: read.number('timeoutMs', 30_000),
    reservationTimeoutS: read.number('reservationTimeoutS', 90),
    sweepIntervalS: read.number('sweepIntervalS', 30),
    leaseSeconds: notNegative(read.number('leaseSeconds', 1), options.optionName('leaseSeconds')),
    leaseMinBalance: read.positiveWhole('leaseMinBalance', 1000),
    leaseIdleMs: read.positiveWhole('leaseIdleMs', 3000),
    leaseCheckMs: read.positiveWhole('leaseCheckMs', 200),
    ratePerSecond: rate > 0 ? rate : undefined,
    burst: burst > 0 ? burst : undefined,
    maxCallsInFlight: read.number('maxCallsInFlight', 16),
    maxInstanceCalls: read.number('maxInstanceCalls', defaultInstanceCalls()),
    authFailures: read.number('authFailures', 20),
    authFailureWindowS: read.number('authFailureWindowS', 900),
    publicUrl: read.string('publicUrl', routeUrl() ?? `http://localhost:${listeningPort ?? (process.env.PORT || 4004)}`).replace(/\/+$/, ''),
    mcpPackage: read.optional('mcpPackage'),
    mcpTarball: read.boolean('mcpTarball', true),
    remotes: remotesOf(read),
    remoteGrantSecret: read.optional('remoteGrantSecret'),
  }
}

function remotesOf(read: ReturnType<typeof options.reader>): Partial<Record<Product, RemoteProductConfig>> {
  const remotes: Partial<Record<Product, RemoteProductConfig>> = {}
  for (const product of Object.keys(GRANT_PREFIXES) as Product[]) {
    const url = read.optional(`remotes.${product}.url`)
    if (!url) continue
    const problem = urlProblem(options.optionName(`remotes.${product}.url`), url)
    if (problem) throw new Error(problem)
    const kind = read.optional(`remotes.${product}.kind`) ?? 'instance'
    if (!(REMOTE_KINDS as readonly string[]).includes(kind)) throw new Error(`Setting ${options.optionName(`remotes.${product}.kind`)} must be one of ${REMOTE_KINDS.join(', ')}, got '${kind.slice(0, 40)}'`)
    remotes[product] = { kind: kind as RemoteKind, url: url.replace(/\/+$/, ''), authorization: read.optional(`remotes.${product}.authorization`) }
    if (kind === 'plugin') remotes[product].plugin = pluginSettingsOf(read, product)
  }
  return remotes
}

/** The chain-B plugin's settings: the session and vault are required, for a grant is pinned to one session and each call names its vault. */
function pluginSettingsOf(read: ReturnType<typeof options.reader>, product: Product): PluginSettings {
  if (product !== 'chain-b') throw new Error(`Setting ${options.optionName(`remotes.${product}.kind`)} 'plugin' is for chain B only`)
  const required = (name: string, pattern: RegExp, form: string) => {
    const value = read.optional(`remotes.chain-b.${name}`)
    if (!value) throw new Error(`Setting ${options.optionName(`remotes.chain-b.${name}`)} is required with ${options.optionName('remotes.chain-b.kind')}=plugin`)
    if (!pattern.test(value)) throw new Error(`Setting ${options.optionName(`remotes.chain-b.${name}`)} must be ${form}`)
    return value
  }
  const sponsor = read.optional('remotes.chain-b.sponsorSessionId')
  if (sponsor !== undefined && !UUID.test(sponsor)) throw new Error(`Setting ${options.optionName('remotes.chain-b.sponsorSessionId')} must be a session id (a UUID)`)
  const artifactRef = read.optional('remotes.chain-b.artifactRef')
  if (artifactRef !== undefined && !/^[A-Za-z0-9@/._-]{1,200}$/.test(artifactRef)) throw new Error(`Setting ${options.optionName('remotes.chain-b.artifactRef')} must be an artefact name such as attestation-vault`)
  return {
    sessionId: required('sessionId', UUID, 'a session id (a UUID)'),
    contractAddress: required('contractAddress', /^[0-9a-fA-F]{64,70}$/, 'a contract address (hex)'),
    artifactRef, sponsorSessionId: sponsor,
  }
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/

function notNegative(value: number, name: string): number {
  if (!(value >= 0)) throw new Error(`Setting ${name} must be 0 or a positive number, got ${value}`)
  return value
}

/** Calls in flight per pooled connection: a call holds one for a part of its time (reserve, read, settle). */
const CALLS_PER_CONNECTION = 2
/** SQLite has one connection and no acquire time-out: calls queue for it, so only a generous bound applies. */
const SQLITE_INSTANCE_CALLS = 256

/**
 * Twice the PostgreSQL pool's size (`cds.requires.db.pool.max`, @cap-js/postgres's 10 unless set):
 * enough to keep every connection busy, few enough that a waiting call gets one well within the
 * pool's acquire time-out.
 */
function defaultInstanceCalls(): number {
  const db = cds.env.requires?.db as { kind?: string; pool?: { max?: number } } | undefined
  if (db?.kind !== 'postgres') return SQLITE_INSTANCE_CALLS
  return CALLS_PER_CONNECTION * (Number(db.pool?.max) || 10)
}

/** The first route Cloud Foundry gives the app (VCAP_APPLICATION.application_uris), as https. */
function routeUrl(): string | undefined {
  const application = process.env.VCAP_APPLICATION
  if (!application) return undefined
  try {
    const route = (JSON.parse(application) as { application_uris?: unknown[] }).application_uris?.[0]
    return typeof route === 'string' && route ? `https://${route.replace(/^https?:\/\//, '')}` : undefined
  } catch {
    return undefined
  }
}

/** The production start checks the gateway's settings: each one that cannot be read is named (lib/production-settings.ts). */
export function gatewayProductionProblems(): string[] {
  const config = gatewayConfig()
  if (!Object.keys(config.remotes).length) return []
  const problem = secretProblem('GATEWAY_REMOTE_GRANT_SECRET', config.remoteGrantSecret, 'the grants held at remote products are sealed with it')
  return problem ? [problem] : []
}
