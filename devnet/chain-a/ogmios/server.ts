import type http from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocketServer, type RawData, type WebSocket } from 'ws'
import type { Ledger } from '../ledger.ts'
import type { Block } from '../types.ts'
import { parse, stringify } from './json.ts'
import { InvalidParams, METHODS } from './methods.ts'
import { block as blockJson, point, tip, type Json } from './present.ts'

/**
 * Ogmios v6's JSON-RPC 2.0 over WebSocket, on the devnet's HTTP server: upgrade requests on
 * `/ogmios` and on `/` (where Ogmios itself listens; plain HTTP requests there stay Blockfrost's).
 * Ledger-state queries, transaction submission and evaluation (`methods.ts`) and chain
 * synchronisation (findIntersection, nextBlock) over the same ledger. `GET /ogmios/health`
 * answers Ogmios' health document, which the official client reads before it connects.
 */

export const OGMIOS_PATHS = new Set(['/ogmios', '/ogmios/', '/'])

/** Bigger requests are refused by the WebSocket layer (a transaction is at most 16 KiB). */
const MAX_PAYLOAD = 4 * 1024 * 1024
/** Blocks remembered per connection for rollbacks; a deeper rollback goes back through the ledger's own blocks. */
const DELIVERED_KEPT = 5000
/** How often the chain is looked at for blocks produced or removed behind the devnet's back. */
const POLL_MS = 200

export interface OgmiosOptions {
  /** Transactions in chain synchronisation carry their CBOR (`cbor`), as `ogmios --include-cbor`; on by default. */
  includeCbor?: boolean
}

type Point = { slot: number; id: string } | 'origin'

/** A request waiting for its answer: the id to echo (when the request had one). */
interface Waiting {
  id: unknown
  hasId: boolean
}

/** One client connection: its chain-sync cursor and the nextBlock requests not answered yet. */
class Session {
  /** The newest block delivered (or intersected at); null before any (the origin). */
  cursor: Block | null = null
  /** After findIntersection, the first nextBlock rolls back to the intersection. */
  rollBackTo: Point | null = null
  readonly waiting: Waiting[] = []
  /** Blocks this client was given, by hash: what a rollback walks back through. */
  readonly delivered = new Map<string, Block>()
  readonly socket: WebSocket

  constructor(socket: WebSocket) {
    this.socket = socket
  }
}

export class OgmiosServer {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_PAYLOAD })
  private readonly sessions = new Set<Session>()
  private readonly includeCbor: boolean
  private readonly startedAt = new Date()
  private lastTip: string
  private lastTipUpdate = new Date()
  private readonly timer: NodeJS.Timeout
  private readonly ledger: Ledger

  constructor(ledger: Ledger, options: OgmiosOptions = {}) {
    this.ledger = ledger
    this.includeCbor = options.includeCbor ?? true
    this.lastTip = ledger.tip.hash
    this.wss.on('connection', socket => this.open(socket))
    this.timer = setInterval(() => {
      if (this.ledger.tip.hash !== this.lastTip) this.notify()
    }, POLL_MS)
    this.timer.unref()
  }

  /** Takes WebSocket upgrades on Ogmios' paths; leaves others to whoever else listens for upgrades. */
  attach(server: http.Server) {
    server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      if (OGMIOS_PATHS.has(pathOf(req))) {
        this.wss.handleUpgrade(req, socket, head, ws => this.wss.emit('connection', ws, req))
      } else if (server.listenerCount('upgrade') === 1) {
        socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n')
      }
    })
  }

  /** `GET /ogmios/health`; answers whether it took the request. */
  serveHttp(req: http.IncomingMessage, res: http.ServerResponse): boolean {
    const path = pathOf(req)
    if (path !== '/ogmios/health' || (req.method !== 'GET' && req.method !== 'HEAD')) return false
    const t = this.ledger.tip
    const body = stringify({
      startTime: this.startedAt.toISOString(),
      lastKnownTip: tip(t),
      lastTipUpdate: this.lastTipUpdate.toISOString(),
      networkSynchronization: 1,
      currentEra: 'conway',
      metrics: { activeConnections: this.sessions.size, totalConnections: this.sessions.size, sessionDurations: { max: 0, mean: 0, min: 0 }, totalMessages: 0, totalUnrouted: 0, runtimeStats: {} },
      connectionStatus: 'connected',
      currentEpoch: t.epoch,
      slotInEpoch: t.epochSlot,
      version: 'v6.14.0 (chain-A devnet)',
      network: 'testnet',
    })
    res.writeHead(200, { 'Content-Type': 'application/json' })
    res.end(req.method === 'HEAD' ? undefined : body)
    return true
  }

  /** The chain changed (a block was produced or blocks were rolled back): answers waiting nextBlock requests. */
  notify() {
    if (this.ledger.tip.hash !== this.lastTip) {
      this.lastTip = this.ledger.tip.hash
      this.lastTipUpdate = new Date()
    }
    for (const session of this.sessions) this.drain(session)
  }

  close() {
    clearInterval(this.timer)
    for (const session of this.sessions) session.socket.terminate()
    this.sessions.clear()
    this.wss.close()
  }

  private open(socket: WebSocket) {
    const session = new Session(socket)
    this.sessions.add(session)
    socket.on('message', (data: RawData, isBinary: boolean) => {
      try {
        this.receive(session, isBinary ? Buffer.from(data as Buffer).toString('utf8') : data.toString())
      } catch (error) {
        this.send(session, { jsonrpc: '2.0', error: { code: -32603, message: `Internal error: ${(error as Error)?.message ?? error}` }, id: null })
      }
    })
    socket.on('close', () => this.sessions.delete(session))
    socket.on('error', () => this.sessions.delete(session))
  }

  private send(session: Session, message: Json) {
    if (session.socket.readyState !== session.socket.OPEN) return
    session.socket.send(stringify(message))
  }

  private receive(session: Session, text: string) {
    let request: unknown
    try {
      request = parse(text)
    } catch (error) {
      return this.send(session, { jsonrpc: '2.0', error: { code: -32700, message: `Parse error: the request is not JSON (${(error as Error).message})` }, id: null })
    }
    if (!request || typeof request !== 'object' || Array.isArray(request) || typeof (request as { method?: unknown }).method !== 'string') {
      return this.send(session, { jsonrpc: '2.0', error: { code: -32600, message: "Invalid request: expected a JSON-RPC 2.0 object with a 'method'." }, id: null })
    }
    const { method, params } = request as { method: string; params?: unknown }
    const waiting: Waiting = { id: (request as { id?: unknown }).id ?? null, hasId: 'id' in request }
    const reply = (body: Record<string, unknown>, withMethod = true) =>
      this.send(session, { jsonrpc: '2.0', ...(withMethod ? { method } : {}), ...body, ...(waiting.hasId ? { id: waiting.id } : {}) })
    if (params !== undefined && (params === null || typeof params !== 'object' || Array.isArray(params))) {
      return reply({ error: { code: -32602, message: 'Invalid params: params must be an object.' } }, false)
    }
    const args = (params ?? {}) as Record<string, unknown>
    try {
      if (method === 'nextBlock') {
        session.waiting.push(waiting)
        return this.drain(session)
      }
      if (method === 'findIntersection') return reply(this.findIntersection(session, args))
      const handler = Object.hasOwn(METHODS, method) ? METHODS[method] : undefined
      if (!handler) return reply({ error: { code: -32601, message: `Method not found: '${method.slice(0, 100)}' is not a method this server knows.` } }, false)
      reply(handler(this.ledger, args))
    } catch (error) {
      if (error instanceof InvalidParams) return reply({ error: { code: -32602, message: `Invalid params: ${error.message}` } }, false)
      reply({ error: { code: -32603, message: `Internal error: ${(error as Error)?.message ?? error}` } }, false)
    }
  }

  // ---- chain synchronisation --------------------------------------------------------------

  private findIntersection(session: Session, params: Record<string, unknown>) {
    const points = params.points ?? []
    if (!Array.isArray(points)) throw new InvalidParams("'points' must be an array of points ({ slot, id }) or 'origin'")
    let best: { block: Block | null; point: Point } | undefined
    for (const p of points) {
      if (p === 'origin') {
        best ??= { block: null, point: 'origin' }
        continue
      }
      const { slot, id } = (p ?? {}) as { slot?: unknown; id?: unknown }
      if (!Number.isInteger(slot) || typeof id !== 'string' || !/^[0-9a-fA-F]{64}$/.test(id)) {
        throw new InvalidParams("'points' must be an array of points ({ slot, id }) or 'origin'")
      }
      const found = this.ledger.block(id.toLowerCase())
      if (found && found.slot === slot && (!best?.block || found.height > best.block.height)) best = { block: found, point: point(found) }
    }
    const currentTip = tip(this.ledger.tip)
    if (!best) return { error: { code: 1000, message: 'No intersection found with the requested points.', data: { tip: currentTip } } }
    session.cursor = best.block
    session.delivered.clear()
    if (best.block) session.delivered.set(best.block.hash, best.block)
    session.rollBackTo = best.point
    return { result: { intersection: best.point, tip: currentTip } }
  }

  /** Answers the waiting nextBlock requests, in order, while there is something to answer with. */
  private drain(session: Session) {
    while (session.waiting.length > 0) {
      const result = this.step(session)
      if (!result) return
      const waiting = session.waiting.shift()!
      this.send(session, { jsonrpc: '2.0', method: 'nextBlock', result, ...(waiting.hasId ? { id: waiting.id } : {}) })
    }
  }

  /** The next answer for the session's cursor, or undefined when it has to wait for a block. */
  private step(session: Session): Json | undefined {
    const currentTip = tip(this.ledger.tip)
    if (session.rollBackTo !== null) {
      const to = session.rollBackTo
      session.rollBackTo = null
      return { direction: 'backward', point: to, tip: currentTip }
    }
    const cursor = session.cursor
    if (cursor && this.ledger.block(cursor.height)?.hash !== cursor.hash) {
      // The cursor's block left the chain: back to the newest delivered block still on it.
      let back: Block | undefined = cursor
      while (back && this.ledger.block(back.height)?.hash !== back.hash) {
        session.delivered.delete(back.hash)
        back = back.previousBlock ? session.delivered.get(back.previousBlock) ?? this.ledger.block(back.previousBlock) : undefined
      }
      const to = back ?? this.ledger.block(0)!
      session.cursor = to
      return { direction: 'backward', point: point(to), tip: currentTip }
    }
    // The genesis block holds the initial distribution, which the Shelley genesis configuration
    // describes; synchronisation starts with the block after it.
    const next = this.ledger.block(cursor ? cursor.height + 1 : 1)
    if (!next) return undefined
    session.cursor = next
    session.delivered.set(next.hash, next)
    if (session.delivered.size > DELIVERED_KEPT) session.delivered.delete(session.delivered.keys().next().value!)
    return { direction: 'forward', block: blockJson(this.ledger, next, this.includeCbor), tip: currentTip }
  }
}

function pathOf(req: http.IncomingMessage): string {
  try {
    return new URL(req.url ?? '/', 'http://devnet').pathname
  } catch {
    return ''
  }
}
