import { ApiError } from '../../lib/errors.ts'
import type { ChainOutputContent, ChainUtxo } from './port.ts'
import { UpstreamCalls } from './upstream-calls.ts'
import { upstreamStatusError, type UpstreamOperation } from './upstream-errors.ts'
import { assetList, sumValues, type Value } from './value.ts'

/**
 * A client of Kupo's HTTP API (v2.12): the outputs matching a pattern (an address, credentials
 * `{payment}/{delegation}`, an output reference `{index}@{transaction id}`, an asset
 * `{policy id}.{asset name}`), spent or not, and the datums and scripts Kupo keeps beside them.
 * Quantities are asked for as strings (`asset-quantity=string`), so none loses a digit. Reads are
 * tried again like the other upstreams' (`UpstreamCalls`); Kupo's `{hint}` tells what went wrong.
 */

export interface KupoClientOptions {
  /** Kupo's base URL, e.g. http://127.0.0.1:1442. */
  url: string
  timeoutMs: number
  retries: number
}

export interface KupoPoint {
  slot_no: number
  header_hash: string
}

export interface KupoSpentAt extends KupoPoint {
  transaction_id: string | null
  input_index: number | null
  redeemer: string | null
}

export interface KupoScript {
  language: 'native' | 'plutus:v1' | 'plutus:v2' | 'plutus:v3'
  script: string
}

/** An output as Kupo reports it, quantities as strings; `datum` and `script` only with `resolveHashes`. */
export interface KupoMatch {
  transaction_index: number
  transaction_id: string
  output_index: number
  address: string
  value: { coins: string; assets?: Record<string, string> }
  /** The declared datum hash, or the hash of the inline datum (`datum_type` tells which). */
  datum_hash: string | null
  datum_type?: 'hash' | 'inline'
  datum?: string | null
  script_hash: string | null
  script?: KupoScript | null
  created_at: KupoPoint
  spent_at: KupoSpentAt | null
}

/** A slot, or a point of the chain (slot and header hash). */
export type KupoBound = number | KupoPoint

/** Kupo's filters of /matches; `unspent` and `spent` exclude each other, as do two bounds on the same side. */
export interface MatchQuery {
  unspent?: boolean
  spent?: boolean
  policyId?: string
  assetName?: string
  transactionId?: string
  outputIndex?: number
  createdAfter?: KupoBound
  createdBefore?: KupoBound
  spentAfter?: KupoBound
  spentBefore?: KupoBound
  order?: 'most_recent_first' | 'oldest_first'
  /** Adds each output's datum and reference script (needed for inline datums). */
  resolveHashes?: boolean
}

const UNREACHABLE = /ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|EPIPE|UND_ERR_SOCKET|other side closed/
const STRING_QUANTITIES = 'application/json;asset-quantity=string'

/** An answer of Kupo that is not a success. */
class KupoStatus extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.status = status
  }
}

export class KupoClient {
  private readonly baseUrl: string
  private readonly timeoutMs: number
  private readonly calls: UpstreamCalls

  constructor(options: KupoClientOptions) {
    this.baseUrl = options.url.replace(/\/+$/, '')
    this.timeoutMs = options.timeoutMs
    this.calls = new UpstreamCalls(options.retries, (error, operation, remainingBackoff) => this.translate(error, operation, remainingBackoff))
  }

  /** The outputs matching the pattern (`*` for all), newest first unless `order` says otherwise. */
  async matches(pattern: string, query: MatchQuery = {}): Promise<KupoMatch[]> {
    const matches = await this.read<unknown>(`/matches/${patternPath(pattern)}${matchSearch(query)}`)
    if (!Array.isArray(matches)) throw new KupoStatus(502, `/matches/${pattern} answered what is not a list`)
    return matches as KupoMatch[]
  }

  /** The unspent outputs matching the pattern, oldest first, with their inline datums. */
  async utxos(pattern: string): Promise<ChainUtxo[]> {
    return (await this.matches(pattern, { unspent: true, resolveHashes: true, order: 'oldest_first' })).map(toUtxo)
  }

  /** What the unspent outputs matching the pattern hold together. */
  async balance(pattern: string): Promise<Value> {
    return sumValues((await this.matches(pattern, { unspent: true })).map(valueOf))
  }

  /** Whether any output, spent or unspent, ever matched the pattern. */
  async seen(pattern: string): Promise<boolean> {
    return (await this.matches(pattern, { unspent: true })).length > 0 || (await this.matches(pattern, { spent: true })).length > 0
  }

  /** The output `index` of transaction `txHash`, spent or not; null when Kupo has none. */
  /** The outputs a block made (spent or not), in transaction and output order. */
  async blockOutputs(block: { slot: number; id: string }): Promise<{ txHash: string; txIndex: number; outputIndex: number; content: ChainOutputContent }[]> {
    // Whether Kupo's bounds include their slot or not, these take in the block's slot; the filter keeps only the block's outputs.
    const matches = await this.matches('*', { ...(block.slot > 0 ? { createdAfter: block.slot - 1 } : {}), createdBefore: block.slot + 1, resolveHashes: true })
    return matches
      .filter(match => match.created_at.slot_no === block.slot && match.created_at.header_hash === block.id)
      .sort((a, b) => a.transaction_index - b.transaction_index || a.output_index - b.output_index)
      .map(match => ({ txHash: match.transaction_id, txIndex: match.transaction_index, outputIndex: match.output_index, content: outputContent(match) }))
  }

  async output(txHash: string, index: number): Promise<ChainOutputContent | null> {
    const [match] = await this.matches(`${index}@${txHash}`, { resolveHashes: true })
    return match ? outputContent(match) : null
  }

  /** A datum (CBOR hex) by its hash; null when Kupo has not seen it. */
  async datum(hash: string): Promise<string | null> {
    const found = await this.read<{ datum: string } | null>(`/datums/${encodeURIComponent(hash)}`)
    return found?.datum ?? null
  }

  /** A script by its hash; null when Kupo has not seen it. */
  async script(hash: string): Promise<KupoScript | null> {
    return this.read<KupoScript | null>(`/scripts/${encodeURIComponent(hash)}`)
  }

  private read<T>(path: string): Promise<T> {
    return this.calls.call('read', () => this.request<T>(path))
  }

  private async request<T>(path: string): Promise<T> {
    const response = await fetch(`${this.baseUrl}${path}`, { headers: { accept: STRING_QUANTITIES }, signal: AbortSignal.timeout(this.timeoutMs) })
    this.calls.noteBackoff(response.status, response.headers.get('retry-after'))
    const text = await response.text()
    if (!response.ok) throw new KupoStatus(response.status, kupoHint(text) || response.statusText)
    try {
      return JSON.parse(text) as T
    } catch {
      throw new KupoStatus(502, `${path.split('?')[0]} answered what is not JSON`)
    }
  }

  private translate(error: unknown, operation: UpstreamOperation, remainingBackoff: (status: number) => number | undefined): unknown {
    if (error instanceof KupoStatus) return upstreamStatusError(error.status, operation, `Kupo: ${error.message}`, remainingBackoff(error.status))
    const name = (error as Error)?.name
    if (name === 'TimeoutError' || name === 'AbortError') return new ApiError(503, 'UPSTREAM_TIMEOUT', `chain-A upstream (Kupo) did not answer within ${this.timeoutMs} ms`)
    const cause = (error as { cause?: { code?: string; message?: string } })?.cause
    const reason = `${cause?.code ?? ''} ${cause?.message ?? ''} ${(error as Error)?.message ?? ''}`
    // fetch's failures are TypeErrors (of the realm fetch runs in: compared by name)
    if (name === 'TypeError' && UNREACHABLE.test(reason)) return new ApiError(503, 'UPSTREAM_UNAVAILABLE', `chain-A upstream (Kupo) is unreachable (${cause?.code ?? 'connection failed'})`)
    if (name === 'TypeError') return new ApiError(503, 'UPSTREAM_UNAVAILABLE', `chain-A upstream (Kupo) answered unreadably (${(error as Error).message})`)
    return error
  }
}

// ---- Kupo's JSON as the port's types ----------------------------------------------------------

/** Kupo names an asset `{policy id}.{asset name}`, or the policy id alone for the empty name. */
const unitOf = (asset: string) => asset.replace('.', '')

export function valueOf(match: KupoMatch): Value {
  const assets = new Map(Object.entries(match.value.assets ?? {}).map(([asset, quantity]) => [unitOf(asset), BigInt(quantity)]))
  return { coin: BigInt(match.value.coins), assets }
}

/**
 * What the output holds. As Blockfrost, the datum hash is the declared one only: an inline datum
 * is given as such (Kupo gives its hash too). The inline datum needs the match read with `resolveHashes`.
 */
export function outputContent(match: KupoMatch): ChainOutputContent {
  const value = valueOf(match)
  return {
    address: match.address,
    lovelace: String(value.coin),
    assets: assetList(value.assets),
    dataHash: match.datum_type === 'hash' ? match.datum_hash : null,
    inlineDatum: match.datum_type === 'inline' ? (match.datum ?? null) : null,
    referenceScriptHash: match.script_hash,
  }
}

export function toUtxo(match: KupoMatch): ChainUtxo {
  return { ...outputContent(match), txHash: match.transaction_id, outputIndex: match.output_index, blockHash: match.created_at.header_hash }
}

// ---- requests --------------------------------------------------------------------------------

/** A pattern in the path: credentials span two segments (`{payment}/{delegation}`); `*`, `@` and `.` stay as they are. */
const patternPath = (pattern: string) => pattern.split('/').map(part => encodeURIComponent(part).replace(/%40/g, '@')).join('/')

function boundText(bound: KupoBound | undefined): string | undefined {
  if (bound === undefined) return undefined
  return typeof bound === 'number' ? String(bound) : `${bound.slot_no}.${bound.header_hash}`
}

/** Kupo's query string: flags without a value, filters and bounds with one. */
function matchSearch(query: MatchQuery): string {
  const flags = { unspent: query.unspent, spent: query.spent, resolve_hashes: query.resolveHashes }
  const values = {
    order: query.order,
    policy_id: query.policyId,
    asset_name: query.assetName,
    transaction_id: query.transactionId,
    output_index: query.outputIndex,
    created_after: boundText(query.createdAfter),
    created_before: boundText(query.createdBefore),
    spent_after: boundText(query.spentAfter),
    spent_before: boundText(query.spentBefore),
  }
  const items = [
    ...Object.entries(flags).filter(([, on]) => on).map(([name]) => name),
    ...Object.entries(values).filter(([, value]) => value !== undefined).map(([name, value]) => `${name}=${encodeURIComponent(String(value))}`),
  ]
  return items.length ? `?${items.join('&')}` : ''
}

/** Kupo's errors are `{hint}`; other answers are text. */
function kupoHint(text: string): string {
  try {
    const body = JSON.parse(text) as { hint?: unknown }
    if (typeof body?.hint === 'string') return body.hint
  } catch {
    // not JSON: the text itself
  }
  return text.slice(0, 500)
}
