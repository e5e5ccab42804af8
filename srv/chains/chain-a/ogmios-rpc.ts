import WebSocket, { type RawData } from 'ws'
import { ApiError } from '../../lib/errors.ts'

/**
 * One JSON-RPC 2.0 connection to Ogmios (v6, over WebSocket), shared by every request: requests are
 * pipelined (each carries an id, answers may come in any order), the connection is opened at the
 * first request and again after it was lost, with back-off between failed attempts. While chain
 * synchronisation listens (`onConnect`), a lost connection is reopened by itself.
 *
 * A lost connection fails the requests it carried with 503 UPSTREAM_UNAVAILABLE, except a
 * submission that had been sent: the node may or may not have it, so it fails with 503
 * SUBMIT_UNCONFIRMED, and sending the same signed transaction again is safe (the ledger takes a
 * transaction once).
 */

/** Ogmios answers no bigger message than a block or a large UTxO set; a bigger one ends the connection. */
const MAX_PAYLOAD = 64 * 1024 * 1024
const FIRST_BACKOFF_MS = 250
const MAX_BACKOFF_MS = 30_000
/** Chain synchronisation's nextBlock waits at the tip until the node adopts a block: it has no time-out. */
const WAITS_FOR_THE_CHAIN = new Set(['nextBlock'])
const SUBMISSIONS = new Set(['submitTransaction'])

/** An error answer of Ogmios: the JSON-RPC error object. */
export class OgmiosRpcError extends Error {
  readonly code: number
  readonly data: unknown
  constructor(code: number, message: string, data: unknown) {
    super(message)
    this.code = code
    this.data = data
  }
}

export interface OgmiosRpcOptions {
  /** ws:// or wss:// URL of Ogmios. */
  url: string
  /** How long a request waits for its answer (nextBlock excepted). */
  timeoutMs: number
}

interface Pending {
  method: string
  resolve: (result: unknown) => void
  reject: (error: unknown) => void
  timer?: NodeJS.Timeout
}

/** JSON with integers beyond 2^53 kept exact, as `bigint` (Ogmios writes lovelace as plain integers). */
export function parseOgmiosJson(text: string): unknown {
  return JSON.parse(text, function (this: unknown, _key: string, value: unknown, context?: { source?: string }) {
    if (typeof value === 'number' && !Number.isSafeInteger(value) && context?.source && /^-?\d+$/.test(context.source)) return BigInt(context.source)
    return value
  } as (key: string, value: unknown) => unknown)
}

const unavailable = (message: string, retryAfter?: number) => new ApiError(503, 'UPSTREAM_UNAVAILABLE', `chain-A upstream (Ogmios) ${message}`, { retryAfter })

function submissionUnconfirmed(reason: string): ApiError {
  return new ApiError(503, 'SUBMIT_UNCONFIRMED', `the transaction was sent to Ogmios but ${reason}, so whether the node has it is unknown; sending the same signed transaction again is safe`)
}

export class OgmiosRpc {
  private readonly url: string
  private readonly timeoutMs: number
  private socket: WebSocket | undefined
  private opening: Promise<WebSocket> | undefined
  private readonly pending = new Map<number, Pending>()
  private readonly connectListeners: Array<() => void> = []
  private nextId = 1
  private failedAttempts = 0
  private retryAt = 0
  private reconnectTimer: NodeJS.Timeout | undefined
  private closed = false

  constructor(options: OgmiosRpcOptions) {
    this.url = options.url
    this.timeoutMs = options.timeoutMs
  }

  /** Called after every (re)connection, before the requests waiting for it are sent. */
  onConnect(listener: () => void): void {
    this.connectListeners.push(listener)
    this.connectSoon()
  }

  /** One request; resolves with its `result`, rejects with OgmiosRpcError (an error answer) or an ApiError (the connection). */
  async request<T>(method: string, params?: Record<string, unknown>): Promise<T> {
    const socket = await this.connection()
    const id = this.nextId++
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = { method, resolve: resolve as (result: unknown) => void, reject }
      if (!WAITS_FOR_THE_CHAIN.has(method)) pending.timer = setTimeout(() => this.timeOut(id), this.timeoutMs)
      this.pending.set(id, pending)
      socket.send(JSON.stringify({ jsonrpc: '2.0', method, ...(params ? { params } : {}), id }), error => {
        if (error) this.settle(id, pending => pending.reject(this.lostError(pending, error.message)))
      })
    })
  }

  /** Ends the connection and opens a new one (requests it carried fail as on a loss); listeners are told. */
  reconnect(): void {
    this.socket?.terminate()
  }

  async close(): Promise<void> {
    this.closed = true
    clearTimeout(this.reconnectTimer)
    const socket = this.socket
    this.drop(new ApiError(503, 'UPSTREAM_UNAVAILABLE', 'chain-A upstream (Ogmios) connection was closed by the server shutting down'))
    if (socket && socket.readyState !== WebSocket.CLOSED) {
      await new Promise<void>(resolve => {
        socket.once('close', () => resolve())
        socket.terminate()
      })
    }
  }

  /** The open connection, opened now when there is none; fails at once while backing off after failed attempts. */
  private connection(): Promise<WebSocket> {
    if (this.closed) return Promise.reject(unavailable('connection is closed'))
    if (this.socket?.readyState === WebSocket.OPEN) return Promise.resolve(this.socket)
    if (this.opening) return this.opening
    const wait = this.retryAt - Date.now()
    if (wait > 0) return Promise.reject(unavailable(`is unreachable (${this.failedAttempts} attempts); trying again in ${Math.ceil(wait / 1000)} s`, Math.ceil(wait / 1000)))
    this.opening = this.open().finally(() => { this.opening = undefined })
    return this.opening
  }

  private open(): Promise<WebSocket> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(this.url, { maxPayload: MAX_PAYLOAD, handshakeTimeout: this.timeoutMs })
      socket.once('open', () => {
        this.socket = socket
        this.failedAttempts = 0
        this.retryAt = 0
        socket.on('message', data => this.receive(data))
        socket.on('close', () => this.lost(socket, 'closed the connection'))
        for (const listener of this.connectListeners) listener()
        resolve(socket)
      })
      socket.on('error', error => {
        if (socket.readyState === WebSocket.CONNECTING || this.socket !== socket) {
          this.failedAttempts++
          this.retryAt = Date.now() + Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (this.failedAttempts - 1))
          reject(unavailable(`is unreachable: ${error.message}`))
          this.connectSoon()
          return
        }
        socket.terminate()
      })
    })
  }

  /** While chain synchronisation listens, the connection is kept open: reopened after the back-off. */
  private connectSoon(): void {
    if (this.closed || this.connectListeners.length === 0 || this.reconnectTimer || this.opening || this.socket?.readyState === WebSocket.OPEN) return
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined
      this.connection().catch(() => this.connectSoon())
    }, Math.max(0, this.retryAt - Date.now()))
    this.reconnectTimer.unref()
  }

  private receive(data: RawData): void {
    let message: { id?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } }
    try {
      message = parseOgmiosJson(data.toString()) as typeof message
    } catch {
      this.socket?.terminate()
      return
    }
    const id = typeof message?.id === 'number' ? message.id : undefined
    if (id === undefined) return
    this.settle(id, pending => {
      if (message.error) {
        const { code, message: text, data: detail } = message.error
        pending.reject(new OgmiosRpcError(typeof code === 'number' ? code : 0, typeof text === 'string' ? text : 'Ogmios answered an error', detail))
      } else pending.resolve(message.result)
    })
  }

  private settle(id: number, answer: (pending: Pending) => void): void {
    const pending = this.pending.get(id)
    if (!pending) return
    this.pending.delete(id)
    clearTimeout(pending.timer)
    answer(pending)
  }

  private timeOut(id: number): void {
    this.settle(id, pending => pending.reject(SUBMISSIONS.has(pending.method)
      ? submissionUnconfirmed(`no answer came within ${this.timeoutMs} ms`)
      : new ApiError(504, 'UPSTREAM_TIMEOUT', `chain-A upstream (Ogmios) did not answer ${pending.method} within ${this.timeoutMs} ms`)))
  }

  private lostError(pending: Pending, reason: string): ApiError {
    return SUBMISSIONS.has(pending.method) ? submissionUnconfirmed(`the connection was lost (${reason})`) : unavailable(`connection was lost (${reason})`)
  }

  private lost(socket: WebSocket, reason: string): void {
    if (this.socket !== socket) return
    this.socket = undefined
    for (const id of [...this.pending.keys()]) this.settle(id, pending => pending.reject(this.lostError(pending, reason)))
    this.connectSoon()
  }

  private drop(error: ApiError): void {
    const socket = this.socket
    this.socket = undefined
    for (const id of [...this.pending.keys()]) this.settle(id, pending => pending.reject(error))
    socket?.removeAllListeners('close')
  }
}
