import { MCP_ENV } from './names.ts'
import type { ClientSettings } from './settings.ts'

/**
 * The tool servers' one way to the gateway (or to a self-hosted instance): OData actions, functions
 * and entity-set reads over HTTP with the key from the environment, and every refusal turned into a
 * GatewayError that says what the agent can do about it.
 */

export interface Units {
  charged: number
  left: number
}

export interface Answer<T = unknown> {
  body: T
  /** What the gateway charged and has left (absent self-hosted, where nothing is metered). */
  units?: Units
}

export interface QueryOptions {
  filter?: string
  select?: string
  expand?: string
  orderby?: string
  top?: number
  skip?: number
  count?: boolean
}

type Literal = string | number | boolean | null | undefined

export class GatewayError extends Error {
  readonly status: number
  readonly code: string
  readonly details: Record<string, unknown>
  readonly retryAfterSeconds?: number

  constructor(status: number, code: string, message: string, details: Record<string, unknown> = {}, retryAfterSeconds?: number) {
    super(message)
    this.status = status
    this.code = code
    this.details = details
    this.retryAfterSeconds = retryAfterSeconds
  }

  /** The refusal as an agent should read it: what happened and what to do next. */
  advice(): string {
    const said = `${this.code}: ${this.message}`
    switch (this.status) {
      case 0: return `The gateway did not answer (${said}). Check that it runs and that ${MCP_ENV.url} points at it.`
      case 401: return `The key was refused (${said}). The key in ${MCP_ENV.key} is missing, unknown, revoked or expired: get a new key (or rotate it) and restart this server with it.`
      case 402: return `Units exhausted (${said}). Units left: ${this.details.unitsLeft ?? 'unknown'}; this call costs ${this.details.price ?? 'more'}. Top the key up (a voucher, or POST /topup) and call again.`
      case 403: return `Not permitted here (${said}). This key or route may not do this on this gateway; it is not a temporary failure.`
      case 429: return `Rate limited (${said}). Retry after ${this.retryAfterSeconds ?? 1} seconds.`
      default: return this.status >= 500 ? `The gateway failed (${this.status} ${said}). Nothing was charged for it; try again later.` : `Refused (${this.status} ${said}).`
    }
  }

  /** What the refusal carries, for an agent that reads JSON. */
  summary() {
    return { httpStatus: this.status, code: this.code, message: this.message, ...this.details, ...(this.retryAfterSeconds !== undefined && { retryAfterSeconds: this.retryAfterSeconds }) }
  }
}

/** An OData literal in a function's parameters: strings quoted with '' for ', numbers and booleans bare. */
function odataLiteral(value: Literal): string {
  if (value === null || value === undefined) return 'null'
  if (typeof value === 'string') return "'" + value.replaceAll("'", "''") + "'"
  return String(value)
}

/** Annotations (`@odata.context`, `@odata.count` is kept as `count`) are of no use to an agent. */
function withoutAnnotations(body: unknown): unknown {
  if (Array.isArray(body)) return body.map(withoutAnnotations)
  if (!body || typeof body !== 'object') return body
  const plain: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(body)) {
    if (name === '@odata.count') plain.count = value
    else if (!name.startsWith('@')) plain[name] = withoutAnnotations(value)
  }
  return plain
}

export class GatewayClient {
  readonly settings: ClientSettings

  constructor(settings: ClientSettings) {
    this.settings = settings
  }

  /** A gateway key goes as a bearer token; a self-hosted product grant as x-agent-token; a user as basic credentials. */
  private authorization(): Record<string, string> {
    const { key, user, password } = this.settings
    const headers: Record<string, string> = {}
    if (key && key.startsWith('cag_')) headers.authorization = `Bearer ${key}`
    else if (key) headers['x-agent-token'] = key
    if (user && !headers.authorization) headers.authorization = `Basic ${Buffer.from(`${user}:${password ?? ''}`).toString('base64')}`
    return headers
  }

  /** POST /odata/v4/<service>/<action> with a JSON body. */
  action<T = Record<string, unknown>>(service: string, action: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<Answer<T>> {
    const defined = Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined))
    return this.request<T>('POST', `/odata/v4/${service}/${action}`, JSON.stringify(defined), signal)
  }

  /** GET /odata/v4/<service>/<function>(name=literal,…); parameters left undefined are left out. */
  call<T = Record<string, unknown>>(service: string, fn: string, parameters: Record<string, Literal> = {}, signal?: AbortSignal): Promise<Answer<T>> {
    const list = Object.entries(parameters).filter(([, value]) => value !== undefined)
      .map(([name, value]) => `${name}=${encodeURIComponent(odataLiteral(value))}`).join(',')
    return this.request<T>('GET', `/odata/v4/${service}/${fn}(${list})`, undefined, signal)
  }

  /** GET an entity set (or `Set(key)`) with OData query options. */
  read<T = Record<string, unknown>>(service: string, resource: string, options: QueryOptions = {}, signal?: AbortSignal): Promise<Answer<T>> {
    const query = Object.entries(options).filter(([, value]) => value !== undefined && value !== '')
      .map(([name, value]) => `$${name}=${encodeURIComponent(String(value))}`).join('&')
    return this.request<T>('GET', `/odata/v4/${service}/${resource}${query ? `?${query}` : ''}`, undefined, signal)
  }

  /** A gateway route of its own (/me, /prices…). */
  get<T = Record<string, unknown>>(path: string, signal?: AbortSignal): Promise<Answer<T>> {
    return this.request<T>('GET', path, undefined, signal)
  }

  private async request<T>(method: string, path: string, body: string | undefined, signal?: AbortSignal): Promise<Answer<T>> {
    const timeout = AbortSignal.timeout(this.settings.timeoutMs)
    let response: Response
    try {
      response = await fetch(this.settings.baseUrl + path, {
        method,
        body,
        headers: { accept: 'application/json', ...(body !== undefined && { 'content-type': 'application/json' }), ...this.authorization() },
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      })
    } catch (error) {
      if (signal?.aborted) throw new GatewayError(0, 'CANCELLED', 'The call was cancelled')
      if (timeout.aborted) throw new GatewayError(0, 'TIMEOUT', `No answer within ${this.settings.timeoutMs} ms from ${this.settings.baseUrl}`)
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message
      throw new GatewayError(0, 'UNREACHABLE', `${this.settings.baseUrl} cannot be reached (${cause})`)
    }
    const text = await response.text()
    let parsed: unknown = undefined
    try {
      parsed = text ? JSON.parse(text) : undefined
    } catch {
      // a non-JSON answer is described below by its status
    }
    if (!response.ok) throw refusalOf(response, parsed, text)
    const charged = response.headers.get('x-access-units-charged')
    const left = response.headers.get('x-access-units-left')
    return {
      body: withoutAnnotations(parsed) as T,
      ...(charged !== null && left !== null && { units: { charged: Number(charged), left: Number(left) } }),
    }
  }
}

function refusalOf(response: Response, parsed: unknown, text: string): GatewayError {
  const error = (parsed as { error?: Record<string, unknown> } | undefined)?.error
  const { code, message, ...rest } = error && typeof error === 'object' ? error : {} as Record<string, unknown>
  const details = Object.fromEntries(Object.entries(rest).filter(([name]) => !name.startsWith('@')))
  const retryAfter = response.headers.get('retry-after')
  const unitsLeft = response.headers.get('x-access-units-left')
  return new GatewayError(
    response.status,
    typeof code === 'string' ? code : `HTTP_${response.status}`,
    typeof message === 'string' ? message : (text.slice(0, 300) || response.statusText),
    { ...details, ...(details.unitsLeft === undefined && unitsLeft !== null && response.status === 402 && { unitsLeft: Number(unitsLeft) }) },
    retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined,
  )
}
