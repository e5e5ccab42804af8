import express, { type NextFunction, type Request, type Response, type Router } from 'express'
import type { Ledger } from '../ledger.ts'
import { createdOutputs, type Block, type Output } from '../types.ts'
import { hasAsset, matches, parsePattern, type Pattern } from './patterns.ts'
import { matchJson, metadataJson, pointJson, store, toJson } from './present.ts'

/**
 * Kupo's HTTP API (v2.12, https://cardanosolutions.github.io/kupo) over the devnet's ledger,
 * mounted at `/kupo`. The devnet indexes every output from the genesis block on, as Kupo run with
 * `--match "*" --since origin` and without `--prune-utxo`: spent outputs stay, marked with where they
 * were spent. Points are the ledger's blocks (slot and header hash), so after a rollback the matches,
 * checkpoints and metadata are those of the new chain.
 */

const VERSION = 'v2.12.0'
const JSON_TYPE = 'application/json;charset=utf-8'
const DOCS = '<https://cardanosolutions.github.io/kupo>'
/** Bodies of PUT /patterns are a few hundred bytes. */
const BODY_LIMIT = 65536

class KupoError extends Error {
  readonly status: number
  constructor(status: number, hint: string) {
    super(hint)
    this.status = status
  }
}

const badRequest = (hint: string) => new KupoError(400, hint)

const HINTS = {
  pattern: `Invalid pattern! Matches are queried with a valid pattern: the wildcard '*', an address, credentials ('{payment}/{delegation}', either side possibly '*'), an output reference ('{index}@{transaction id}') or an asset id ('{policy id}.{asset name}' or '{policy id}.*'). See ${DOCS}.`,
  statusFlag: `Invalid status flag! Give either '?spent' or '?unspent' (once, without a value), or neither. See ${DOCS}.`,
  filter: `Invalid or incomplete filter! 'policy_id' (56 hex digits) and 'asset_name' (hex) filter by asset, 'asset_name' only together with 'policy_id'; 'transaction_id' (64 hex digits) and 'output_index' (an integer) filter by output reference, 'output_index' only together with 'transaction_id'. See ${DOCS}.`,
  order: `Invalid order! 'order' is 'most_recent_first' (the default) or 'oldest_first'. See ${DOCS}.`,
  range: `Invalid slot range! 'created_after' / 'spent_after' (at most one lower bound) and 'created_before' / 'spent_before' (at most one upper bound) take a slot number or a point '{slot}.{header hash}'. See ${DOCS}.`,
  unknownPoint: 'The given point (or slot) is not on the chain. Give a point of an existing block; a very recent one may have been rolled back since it was looked up.',
  slot: 'The path parameter must be an absolute slot number: a non-negative integer.',
  strict: `Invalid query! This endpoint takes one query flag, '?strict', and nothing else. See ${DOCS}.`,
  datumHash: 'The path parameter is not a datum hash: a blake2b-256 digest in base16 (64 hex digits).',
  scriptHash: 'The path parameter is not a script hash: a blake2b-224 digest in base16 (56 hex digits).',
  metadataFilter: `Invalid filter! Metadata can only be filtered by 'transaction_id' (64 hex digits). See ${DOCS}.`,
  point: `The body must be a JSON object with 'rollback_to': { 'slot_no', optional 'header_hash' } of a block on the chain, and optional 'limit' ('within_safe_zone' or 'unsafe_allow_beyond_safe_zone'). See ${DOCS}.`,
  activePattern: 'Matches of a pattern that overlaps an active pattern cannot be removed; the devnet indexes everything (its only pattern is \'*\'), so every pattern overlaps it.',
  fixedPattern: 'The devnet always indexes every output (its pattern \'*\' cannot be removed).',
  notFound: `Endpoint not found. See the API reference at ${DOCS}.`,
  method: `Unsupported method on a known endpoint. See the API reference at ${DOCS}.`,
  accept: 'Unsupported Accept header: this endpoint answers \'application/json\' or \'text/plain\'.',
}

// ---- query strings ------------------------------------------------------------------------

type QueryItem = [name: string, value: string | null]

/** The query items in order, flags (no '=') with a null value, as Kupo reads them. */
function queryItems(req: Request): QueryItem[] {
  const at = req.originalUrl.indexOf('?')
  if (at < 0) return []
  return req.originalUrl.slice(at + 1).split('&').filter(Boolean).map(item => {
    const eq = item.indexOf('=')
    const decode = (text: string) => {
      try {
        return decodeURIComponent(text.replace(/\+/g, ' '))
      } catch {
        throw badRequest(`Malformed query string: '${text}' is not percent-encoded text.`)
      }
    }
    return eq < 0 ? [decode(item), null] : [decode(item.slice(0, eq)), decode(item.slice(eq + 1))]
  })
}

const valuesOf = (items: QueryItem[], name: string) => items.filter(([key]) => key === name).map(([, value]) => value)

/** A flag's presence: given once, without a value (an empty one is taken as none). */
function flag(items: QueryItem[], name: string, hint: string): boolean {
  const values = valuesOf(items, name)
  if (values.length > 1 || (values.length === 1 && values[0] !== null && values[0] !== '')) throw badRequest(hint)
  return values.length === 1
}

/** A parameter given at most once, with a value. */
function single(items: QueryItem[], name: string, hint: string): string | undefined {
  const values = valuesOf(items, name)
  if (values.length > 1 || (values.length === 1 && !values[0])) throw badRequest(hint)
  return values[0] ?? undefined
}

// ---- points --------------------------------------------------------------------------------

/** The newest block at or before the slot. */
function blockAtOrBefore(ledger: Ledger, slot: number): Block | undefined {
  const blocks = ledger.blocks
  let low = 0
  let high = blocks.length - 1
  let found: Block | undefined
  while (low <= high) {
    const mid = (low + high) >> 1
    if (blocks[mid].slot <= slot) {
      found = blocks[mid]
      low = mid + 1
    } else high = mid - 1
  }
  return found
}

/** The oldest block at or after the slot. */
function blockAtOrAfter(ledger: Ledger, slot: number): Block | undefined {
  const before = blockAtOrBefore(ledger, slot)
  if (before?.slot === slot) return before
  return ledger.blocks[before ? before.height + 1 : 0]
}

const SLOT = /^\d{1,15}$/

/** A slot bound: a slot number, or a point of a block on the chain (its slot). */
function slotBound(ledger: Ledger, text: string): number {
  if (SLOT.test(text)) return Number(text)
  const point = /^(\d{1,15})\.([0-9a-fA-F]{64})$/.exec(text)
  if (!point) throw badRequest(HINTS.range)
  const block = ledger.block(point[2].toLowerCase())
  if (!block || block.slot !== Number(point[1])) throw badRequest(HINTS.unknownPoint)
  return block.slot
}

// ---- matches -------------------------------------------------------------------------------

interface MatchQuery {
  status: 'spent' | 'unspent' | null
  order: 'most_recent_first' | 'oldest_first'
  created: { from: number; to: number }
  spent: { from: number; to: number } | null
  policyId: string | null
  assetName: string | null
  transactionId: string | null
  outputIndex: number | null
  resolveHashes: boolean
}

function matchQuery(ledger: Ledger, items: QueryItem[]): MatchQuery {
  const spentFlag = flag(items, 'spent', HINTS.statusFlag)
  const unspentFlag = flag(items, 'unspent', HINTS.statusFlag)
  if (spentFlag && unspentFlag) throw badRequest(HINTS.statusFlag)

  const order = single(items, 'order', HINTS.order) ?? 'most_recent_first'
  if (order !== 'most_recent_first' && order !== 'oldest_first') throw badRequest(HINTS.order)

  const bound = (name: string) => {
    const value = single(items, name, HINTS.range)
    return value === undefined ? undefined : slotBound(ledger, value)
  }
  const [createdAfter, spentAfter, createdBefore, spentBefore] = ['created_after', 'spent_after', 'created_before', 'spent_before'].map(bound)
  if ((createdAfter !== undefined && spentAfter !== undefined) || (createdBefore !== undefined && spentBefore !== undefined)) throw badRequest(HINTS.range)
  const spentRange = spentAfter !== undefined || spentBefore !== undefined

  const policyId = single(items, 'policy_id', HINTS.filter)
  const assetName = single(items, 'asset_name', HINTS.filter)
  if (policyId !== undefined && !/^[0-9a-fA-F]{56}$/.test(policyId)) throw badRequest(HINTS.filter)
  if (assetName !== undefined && (policyId === undefined || !/^([0-9a-fA-F]{2}){1,32}$/.test(assetName))) throw badRequest(HINTS.filter)
  const transactionId = single(items, 'transaction_id', HINTS.filter)
  const outputIndex = single(items, 'output_index', HINTS.filter)
  if (transactionId !== undefined && !/^[0-9a-fA-F]{64}$/.test(transactionId)) throw badRequest(HINTS.filter)
  if (outputIndex !== undefined && (transactionId === undefined || !/^\d{1,5}$/.test(outputIndex))) throw badRequest(HINTS.filter)

  return {
    status: spentFlag ? 'spent' : unspentFlag ? 'unspent' : null,
    order,
    created: { from: createdAfter ?? 0, to: createdBefore ?? Number.MAX_SAFE_INTEGER },
    spent: spentRange ? { from: spentAfter ?? 0, to: spentBefore ?? Number.MAX_SAFE_INTEGER } : null,
    policyId: policyId?.toLowerCase() ?? null,
    assetName: assetName?.toLowerCase() ?? null,
    transactionId: transactionId?.toLowerCase() ?? null,
    outputIndex: outputIndex === undefined ? null : Number(outputIndex),
    resolveHashes: flag(items, 'resolve_hashes', `Invalid query! 'resolve_hashes' is a flag, without a value. See ${DOCS}.`),
  }
}

/** The outputs a pattern can match, narrowed by the ledger's indexes where it has one. */
function candidates(ledger: Ledger, pattern: Pattern): Iterable<Output> {
  if (pattern.kind === 'address') return (ledger.addresses.get(pattern.address)?.outputs ?? []).map(ref => ledger.outputs.get(ref)!)
  if (pattern.kind === 'output') {
    const tx = ledger.txs.get(pattern.txHash)
    return tx ? createdOutputs(tx).map(([index]) => ledger.outputs.get(`${tx.hash}#${index}`)!) : []
  }
  return ledger.outputs.values()
}

function findMatches(ledger: Ledger, pattern: Pattern, query: MatchQuery): Output[] {
  const found: { output: Output; slot: number; txIndex: number }[] = []
  for (const output of candidates(ledger, pattern)) {
    if (!matches(pattern, output)) continue
    if (query.status === 'spent' && !output.spentBy) continue
    if (query.status === 'unspent' && output.spentBy) continue
    const tx = ledger.txs.get(output.txHash)!
    const slot = tx.included.slot
    if (slot < query.created.from || slot > query.created.to) continue
    if (query.spent) {
      if (!output.spentBy) continue
      const spentSlot = ledger.txs.get(output.spentBy)!.included.slot
      if (spentSlot < query.spent.from || spentSlot > query.spent.to) continue
    }
    if (query.policyId !== null && !hasAsset(output, query.policyId, query.assetName)) continue
    if (query.transactionId !== null && (output.txHash !== query.transactionId || (query.outputIndex !== null && output.index !== query.outputIndex))) continue
    found.push({ output, slot, txIndex: tx.included.index })
  }
  const direction = query.order === 'oldest_first' ? 1 : -1
  found.sort((a, b) => direction * (a.slot - b.slot || a.txIndex - b.txIndex || a.output.index - b.output.index))
  return found.map(entry => entry.output)
}

// ---- health --------------------------------------------------------------------------------

function health(ledger: Ledger) {
  const tip = ledger.tip
  return {
    connection_status: 'connected',
    most_recent_checkpoint: tip.slot,
    most_recent_node_tip: tip.slot,
    seconds_since_last_block: Math.max(0, Math.floor(Date.now() / 1000) - tip.time),
    network_synchronization: 1,
    configuration: { indexes: 'installed' },
    version: VERSION,
  }
}

function prometheus(figures: ReturnType<typeof health>): string {
  const metric = (name: string, type: string, value: string) => `# TYPE kupo_${name} ${type}\nkupo_${name}  ${value}\n`
  return [
    metric('configuration_indexes', 'gauge', figures.configuration.indexes === 'installed' ? '1.0' : '0.0'),
    metric('connection_status', 'gauge', figures.connection_status === 'connected' ? '1.0' : '0.0'),
    metric('most_recent_checkpoint', 'counter', String(figures.most_recent_checkpoint)),
    metric('most_recent_node_tip', 'counter', String(figures.most_recent_node_tip)),
    metric('network_synchronization', 'gauge', figures.network_synchronization.toFixed(5)),
    metric('seconds_since_last_block', 'gauge', figures.seconds_since_last_block.toFixed(1)),
  ].join('\n')
}

/** JSON unless the Accept header asks for text/plain; undefined for anything else. */
function healthFormat(req: Request, fallback: 'json' | 'text'): 'json' | 'text' | undefined {
  const accept = req.get('accept')
  if (!accept) return fallback
  if (accept.includes('text/plain')) return 'text'
  if (accept.includes('application/json')) return 'json'
  if (accept.includes('*/*')) return fallback
  return undefined
}

// ---- checkpoints ---------------------------------------------------------------------------

/** A sample of the chain's points, newest first: the tip, then blocks ever further back (1, 2, 4, 8… blocks), and the genesis block. */
function sampleCheckpoints(ledger: Ledger): Block[] {
  const tip = ledger.tip.height
  const heights: number[] = [tip]
  for (let distance = 1; tip - distance > 0; distance *= 2) heights.push(tip - distance)
  if (tip > 0) heights.push(0)
  return heights.map(height => ledger.block(height)!)
}

// ---- patterns ------------------------------------------------------------------------------

const PATTERNS = ['*']

/** A pattern for GET/PUT/DELETE /patterns: anything /matches takes, and a metadata tag `{n}` (for indexing only). */
const patternForIndexing = (text: string | undefined) => text !== undefined && (/^\{\d{1,20}\}$/.test(text) || parsePattern(text) !== undefined)

/** The body of PUT /patterns/{pattern} (or, with `patterns`, of PUT /patterns): a point on the chain to re-index from. */
function forcedRollback(ledger: Ledger, raw: unknown, bulk: boolean): string[] {
  let body: unknown
  try {
    body = JSON.parse(Buffer.isBuffer(raw) ? raw.toString('utf8') : '')
  } catch {
    throw badRequest(HINTS.point)
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest(HINTS.point)
  const fields = body as Record<string, unknown>
  const allowed = new Set(['rollback_to', 'limit', ...(bulk ? ['patterns'] : [])])
  if (Object.keys(fields).some(key => !allowed.has(key))) throw badRequest(HINTS.point)
  const point = fields.rollback_to as { slot_no?: unknown; header_hash?: unknown } | undefined
  if (!point || typeof point !== 'object' || typeof point.slot_no !== 'number' || !Number.isSafeInteger(point.slot_no) || point.slot_no < 0) throw badRequest(HINTS.point)
  const headerHash = point.header_hash
  if (headerHash !== undefined && (typeof headerHash !== 'string' || !/^[0-9a-fA-F]{64}$/.test(headerHash))) throw badRequest(HINTS.point)
  if (fields.limit !== undefined && fields.limit !== 'within_safe_zone' && fields.limit !== 'unsafe_allow_beyond_safe_zone') throw badRequest(HINTS.point)
  const block = blockAtOrBefore(ledger, point.slot_no)
  if (!block || block.slot !== point.slot_no || (typeof headerHash === 'string' && headerHash.toLowerCase() !== block.hash)) throw badRequest(HINTS.unknownPoint)
  if (!bulk) return []
  const patterns = fields.patterns
  if (!Array.isArray(patterns) || !patterns.every((p: unknown) => typeof p === 'string' && patternForIndexing(p))) throw badRequest(HINTS.pattern)
  return patterns as string[]
}

// ---- the router ----------------------------------------------------------------------------

export function kupoRouter(ledger: Ledger): Router {
  const router = express.Router()

  const send = (res: Response, status: number, body: unknown, contentType = JSON_TYPE, extraHeaders: Record<string, string> = {}) => {
    res.status(status)
    res.setHeader('Content-Type', contentType)
    for (const [name, value] of Object.entries(extraHeaders)) res.setHeader(name, value)
    res.end(typeof body === 'string' && contentType.startsWith('text/') ? body : toJson(body))
  }

  /** Kupo's headers on a successful answer: the most recent checkpoint and, as ETag, its header hash. */
  const stamp = (req: Request, res: Response): boolean => {
    const tip = ledger.tip
    res.setHeader('X-Most-Recent-Checkpoint', String(tip.slot))
    res.setHeader('ETag', tip.hash)
    const wanted = req.get('if-none-match')
    if (wanted && wanted.split(',').map(tag => tag.trim().replace(/^W\//, '').replace(/^"|"$/g, '')).includes(tip.hash)) {
      res.status(304).end()
      return true
    }
    return false
  }

  const ok = (req: Request, res: Response, body: () => unknown, contentType = JSON_TYPE, extraHeaders: Record<string, string> = {}) => {
    if (stamp(req, res)) return
    send(res, 200, body(), contentType, extraHeaders)
  }

  router.put(['/patterns', '/patterns/*rest', '/v1/patterns', '/v1/patterns/*rest'], express.raw({ type: () => true, limit: BODY_LIMIT }))

  router.use((req: Request, res: Response, next: NextFunction) => {
    let segments: string[]
    try {
      segments = req.path.split('/').filter(Boolean).map(decodeURIComponent)
    } catch {
      throw badRequest(HINTS.pattern)
    }
    if (segments[0] === 'v1') segments = segments.slice(1)
    const [resource, ...args] = segments
    const method = req.method === 'HEAD' ? 'GET' : req.method
    /** A pattern in the path: none is the wildcard, one or two segments (credentials) form it. */
    const patternText = args.length === 0 ? '*' : args.length <= 2 ? args.join('/') : undefined
    const items = queryItems(req)

    switch (resource) {
      case 'health':
      case 'metrics': {
        if (method !== 'GET') throw new KupoError(406, HINTS.method)
        if (args.length) throw new KupoError(404, HINTS.notFound)
        const format = healthFormat(req, resource === 'health' ? 'json' : 'text')
        if (!format) throw new KupoError(406, HINTS.accept)
        const figures = health(ledger)
        res.setHeader('X-Most-Recent-Checkpoint', String(figures.most_recent_checkpoint))
        return format === 'text' ? send(res, 200, prometheus(figures), 'text/plain;charset=utf-8') : send(res, 200, figures)
      }
      case 'checkpoints': {
        if (method !== 'GET') throw new KupoError(406, HINTS.method)
        if (args.length === 0) return ok(req, res, () => sampleCheckpoints(ledger).map(pointJson))
        if (args.length > 1) throw new KupoError(404, HINTS.notFound)
        if (!SLOT.test(args[0])) throw badRequest(HINTS.slot)
        if (items.some(([name]) => name !== 'strict')) throw badRequest(HINTS.strict)
        const strict = flag(items, 'strict', HINTS.strict)
        const slot = Number(args[0])
        const block = blockAtOrBefore(ledger, slot)
        return ok(req, res, () => (block && (!strict || block.slot === slot) ? pointJson(block) : null))
      }
      case 'matches': {
        if (method === 'DELETE') {
          if (patternText === undefined || !parsePattern(patternText)) throw badRequest(HINTS.pattern)
          throw badRequest(HINTS.activePattern)
        }
        if (method !== 'GET') throw new KupoError(406, HINTS.method)
        const pattern = patternText === undefined ? undefined : parsePattern(patternText)
        if (!pattern) throw badRequest(HINTS.pattern)
        const query = matchQuery(ledger, items)
        const asStrings = /asset-quantity\s*=\s*string/.test(req.get('accept') ?? '')
        const contentType = asStrings ? `${JSON_TYPE};asset-quantity=string` : JSON_TYPE
        return ok(req, res, () => findMatches(ledger, pattern, query).map(output => matchJson(ledger, output, { resolveHashes: query.resolveHashes, quantitiesAsStrings: asStrings })), contentType)
      }
      case 'datums': {
        if (method !== 'GET') throw new KupoError(406, HINTS.method)
        if (args.length !== 1) throw new KupoError(404, HINTS.notFound)
        if (!/^[0-9a-fA-F]{64}$/.test(args[0])) throw badRequest(HINTS.datumHash)
        return ok(req, res, () => {
          const datum = store(ledger).datums.get(args[0].toLowerCase())
          return datum ? { datum } : null
        })
      }
      case 'scripts': {
        if (method !== 'GET') throw new KupoError(406, HINTS.method)
        if (args.length !== 1) throw new KupoError(404, HINTS.notFound)
        if (!/^[0-9a-fA-F]{56}$/.test(args[0])) throw badRequest(HINTS.scriptHash)
        return ok(req, res, () => store(ledger).scripts.get(args[0].toLowerCase()) ?? null)
      }
      case 'metadata': {
        if (method !== 'GET') throw new KupoError(406, HINTS.method)
        if (args.length !== 1) throw new KupoError(404, HINTS.notFound)
        if (!SLOT.test(args[0])) throw badRequest(HINTS.slot)
        if (items.some(([name]) => ['policy_id', 'asset_name', 'output_index'].includes(name))) throw badRequest(HINTS.metadataFilter)
        const transactionId = single(items, 'transaction_id', HINTS.metadataFilter)
        if (transactionId !== undefined && !/^[0-9a-fA-F]{64}$/.test(transactionId)) throw badRequest(HINTS.metadataFilter)
        const slot = Number(args[0])
        // As Kupo: the block that follows the newest point before the slot (the block at the slot when there is one).
        const block = slot === 0 ? undefined : blockAtOrAfter(ledger, slot)
        const txs = (block?.txs ?? []).filter(hash => transactionId === undefined || hash === transactionId.toLowerCase())
        return ok(req, res, () => txs.flatMap(hash => metadataJson(ledger.txs.get(hash)!) ?? []), JSON_TYPE, block ? { 'X-Block-Header-Hash': block.hash } : {})
      }
      case 'patterns': {
        if (method === 'GET') {
          if (args.length > 0 && !patternForIndexing(patternText)) throw badRequest(HINTS.pattern)
          // '*' includes every pattern, so it is the answer for any pattern asked about.
          return ok(req, res, () => PATTERNS)
        }
        if (method === 'PUT') {
          if (args.length > 0 && !patternForIndexing(patternText)) throw badRequest(HINTS.pattern)
          forcedRollback(ledger, req.body, args.length === 0)
          // Everything is indexed from the genesis block on already: the new pattern adds nothing to '*'.
          return send(res, 200, PATTERNS)
        }
        if (method === 'DELETE') {
          if (!patternForIndexing(patternText)) throw badRequest(HINTS.pattern)
          if (patternText === '*') throw badRequest(HINTS.fixedPattern)
          return send(res, 200, { deleted: 0 })
        }
        throw new KupoError(406, HINTS.method)
      }
      default:
        next()
    }
  })

  router.use(() => {
    throw new KupoError(404, HINTS.notFound)
  })

  router.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (error instanceof KupoError) return send(res, error.status, { hint: error.message })
    const { type, status, message } = (error ?? {}) as { type?: unknown; status?: unknown; message?: unknown }
    if (type === 'entity.too.large') return send(res, 400, { hint: `The request body exceeds ${BODY_LIMIT} bytes.` })
    if (typeof status === 'number' && status >= 400 && status < 500) return send(res, status, { hint: String(message) })
    send(res, 500, { hint: 'The devnet failed to answer this request.' })
  })

  return router
}
