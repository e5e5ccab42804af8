import { createHash } from 'node:crypto'
import type { IncomingMessage, ServerResponse, Server } from 'node:http'
import { execute, parse, subscribe, validate, type DocumentNode, type ExecutionResult, GraphQLError } from 'graphql'
import { LRUCache } from 'lru-cache'
import { WebSocketServer, type WebSocket } from 'ws'
import type { SponsoredCall } from '../../srv/chains/chain-b/port.ts'
import { checkCallProofs } from './contract.ts'
import { indexerSchema, rootValue } from './graphql.ts'
import type { Ledger } from './ledger.ts'
import { LedgerRejection } from './types.ts'

/**
 * The devnet's HTTP API, on one node:http server:
 * - `POST /api/v4/graphql`: the indexer's GraphQL queries (schema v4 subset);
 * - `GET /api/v4/graphql/ws` (upgrade): its `graphql-transport-ws` subscriptions;
 * - `POST /api/v4/submit`, `GET /api/v4/sponsors/<publicKey>`, `POST /api/v4/faucet`: the submission
 *   API (the devnet's own; the public indexer has none);
 * - `/api/v4/devnet/...`: control for development and tests (produce blocks, reorg, status).
 */

interface DevnetControl {
  ledger: Ledger
  /** Where the verification keys of recordAttestations' proofs are. */
  zkKeysDir: string
  produceBlocks(count: number): number
  status(): Record<string, unknown>
}

const MAX_BODY = 1024 * 1024

/**
 * Serves the devnet's routes on `server`; answers a function that ends every subscription (an
 * upgraded connection is no longer the HTTP server's: `server.close()` alone would wait for it).
 */
export function handleRequests(server: Server, control: DevnetControl): () => void {
  const root = rootValue(control.ledger)
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    route(request, response, control, root).catch(error => answer(response, 500, { error: { code: 'DEVNET_ERROR', message: (error as Error).message } }))
  })
  const sockets = new WebSocketServer({ noServer: true, handleProtocols: protocols => (protocols.has('graphql-transport-ws') ? 'graphql-transport-ws' : false) })
  server.on('upgrade', (request, socket, head) => {
    if (new URL(request.url ?? '/', 'http://devnet').pathname !== '/api/v4/graphql/ws') return socket.destroy()
    sockets.handleUpgrade(request, socket, head, ws => serveSubscriptions(ws, root))
  })
  server.on('close', () => sockets.close())
  return () => {
    for (const client of sockets.clients) client.terminate()
    sockets.close()
  }
}

async function route(request: IncomingMessage, response: ServerResponse, control: DevnetControl, root: object) {
  const path = new URL(request.url ?? '/', 'http://devnet').pathname.replace(/\/+$/, '')
  const { ledger } = control
  try {
    if (path === '/api/v4/graphql' && request.method === 'POST') {
      const body = await readJson(request)
      if (!body || typeof body.query !== 'string') return answer(response, 400, { errors: [{ message: 'A GraphQL request has a query' }] })
      return answer(response, 200, await run(body.query, body.variables, root, body.operationName))
    }
    if (path === '/api/v4/submit' && request.method === 'POST') {
      const call = (await readJson(request)) as SponsoredCall
      await checkCallProofs(call?.call, control.zkKeysDir)
      return answer(response, 200, ledger.submitCall(call))
    }
    const sponsor = /^\/api\/v4\/sponsors\/([^/]+)$/.exec(path)
    if (sponsor && request.method === 'GET') return answer(response, 200, { publicKey: sponsor[1], balance: String(ledger.availableDust(sponsor[1])), confirmed: String(ledger.dustBalance(sponsor[1])) })
    if (path === '/api/v4/faucet' && request.method === 'POST') {
      const body = await readJson(request)
      const amount = /^[0-9]{1,30}$/.test(String(body?.amount ?? '')) ? BigInt(body.amount) : -1n
      const { hash } = ledger.grantDust(body?.publicKey, amount)
      return answer(response, 200, { hash, publicKey: body.publicKey, balance: String(ledger.availableDust(body.publicKey)) })
    }
    if (path === '/api/v4/devnet/status' && request.method === 'GET') return answer(response, 200, control.status())
    if (path === '/api/v4/devnet/blocks' && request.method === 'POST') {
      const count = Number((await readJson(request))?.count ?? 1)
      if (!Number.isInteger(count) || count < 1 || count > 1000) throw new LedgerRejection(400, 'INVALID_COUNT', 'count must be 1 to 1000')
      control.produceBlocks(count)
      return answer(response, 200, control.status())
    }
    if (path === '/api/v4/devnet/reorg' && request.method === 'POST') {
      const body = await readJson(request)
      const { removed } = ledger.reorg(Number(body?.height), { drop: body?.drop === true, blocks: body?.blocks === undefined ? undefined : Number(body.blocks) })
      return answer(response, 200, { removed, ...control.status() })
    }
    const transaction = /^\/api\/v4\/devnet\/transactions\/([0-9a-f]{64})$/.exec(path)
    if (transaction && request.method === 'GET') {
      const record = ledger.transactionsByHash(transaction[1])[0] ?? ledger.transactionsByIdentifier(transaction[1])[0]
      const pending = !record && ledger.mempool.some(body => hashMatches(body, transaction[1]))
      if (!record) return answer(response, pending ? 200 : 404, pending ? { hash: transaction[1], pending: true } : { error: { code: 'UNKNOWN_TRANSACTION', message: `No transaction ${transaction[1]}` } })
      return answer(response, 200, { hash: record.hash, height: record.height, status: record.result?.status ?? null, failure: record.failure ?? null, pending: false })
    }
    return answer(response, 404, { error: { code: 'NOT_FOUND', message: `No devnet route ${request.method} ${path}` } })
  } catch (error) {
    if (error instanceof LedgerRejection) return answer(response, error.status, { error: { code: error.code, message: error.message } })
    throw error
  }
}

const hashMatches = (body: unknown, hash: string) => createHash('sha256').update(JSON.stringify(body)).digest('hex') === hash

/** Parses, validates and executes a query document. */
async function run(query: string, variables: Record<string, unknown> | undefined, root: object, operationName?: string): Promise<ExecutionResult> {
  const document = parseDocument(query)
  if (!('kind' in document)) return document
  return execute({ schema: indexerSchema(), document, rootValue: root, variableValues: variables ?? {}, operationName })
}

/**
 * Documents that parsed and validated, by their text: clients send the same few queries over and
 * over, and parsing and validating them again cost more than answering them.
 */
const validDocuments = new LRUCache<string, DocumentNode>({ max: 200 })

function parseDocument(query: string): DocumentNode | ExecutionResult {
  const known = validDocuments.get(query)
  if (known) return known
  const parsed = parseAndValidate(query)
  if ('kind' in parsed) validDocuments.set(query, parsed)
  return parsed
}

function parseAndValidate(query: string): DocumentNode | ExecutionResult {
  let document: DocumentNode
  try {
    document = parse(query)
  } catch (error) {
    return { errors: [error as GraphQLError] }
  }
  const errors = validate(indexerSchema(), document)
  return errors.length ? { errors } : document
}

/** The graphql-transport-ws protocol: connection_init/ack, subscribe/next/error/complete, ping/pong. */
function serveSubscriptions(ws: WebSocket, root: object) {
  const running = new Map<string, AsyncIterator<ExecutionResult>>()
  let acknowledged = false
  const send = (message: object) => ws.readyState === ws.OPEN && ws.send(JSON.stringify(message))
  const initTimeout = setTimeout(() => !acknowledged && ws.close(4408, 'Connection initialisation timeout'), 10_000)
  ws.on('message', async raw => {
    let message: { type?: string; id?: string; payload?: { query?: string; variables?: Record<string, unknown>; operationName?: string } }
    try {
      message = JSON.parse(String(raw))
    } catch {
      return ws.close(4400, 'Invalid message')
    }
    switch (message.type) {
      case 'connection_init':
        if (acknowledged) return ws.close(4429, 'Too many initialisation requests')
        acknowledged = true
        clearTimeout(initTimeout)
        return send({ type: 'connection_ack' })
      case 'ping':
        return send({ type: 'pong' })
      case 'pong':
        return
      case 'subscribe': {
        if (!acknowledged) return ws.close(4401, 'Unauthorized')
        const id = message.id
        if (!id || running.has(id)) return ws.close(4409, `Subscriber for ${id} already exists`)
        const document = parseDocument(message.payload?.query ?? '')
        if (!('kind' in document)) return send({ id, type: 'error', payload: document.errors })
        const result = await subscribe({ schema: indexerSchema(), document, rootValue: root, variableValues: message.payload?.variables ?? {}, operationName: message.payload?.operationName })
        if (!(Symbol.asyncIterator in result)) {
          if (result.errors?.length) return send({ id, type: 'error', payload: result.errors })
          send({ id, type: 'next', payload: result })
          return send({ id, type: 'complete' })
        }
        const iterator = result as AsyncGenerator<ExecutionResult>
        running.set(id, iterator)
        forward(iterator, id, send, () => running.delete(id))
        return
      }
      case 'complete': {
        const iterator = running.get(message.id ?? '')
        running.delete(message.id ?? '')
        await iterator?.return?.()
        return
      }
      default:
        return ws.close(4400, `Unknown message type ${message.type}`)
    }
  })
  ws.on('close', () => {
    clearTimeout(initTimeout)
    for (const iterator of running.values()) iterator.return?.()
    running.clear()
  })
}

async function forward(iterator: AsyncIterator<ExecutionResult>, id: string, send: (message: object) => void, finished: () => void) {
  try {
    for (let step = await iterator.next(); !step.done; step = await iterator.next()) send({ id, type: 'next', payload: step.value })
    send({ id, type: 'complete' })
  } catch (error) {
    send({ id, type: 'error', payload: [{ message: (error as Error).message }] })
  } finally {
    finished()
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON body of any shape; each route checks what it reads
function readJson(request: IncomingMessage): Promise<any> {
  return new Promise((resolve, reject) => {
    let size = 0
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY) {
        reject(new LedgerRejection(413, 'BODY_TOO_LARGE', `The body exceeds ${MAX_BODY} bytes`))
        request.destroy()
      } else chunks.push(chunk)
    })
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      if (!text) return resolve(undefined)
      try {
        resolve(JSON.parse(text))
      } catch {
        reject(new LedgerRejection(400, 'MALFORMED_JSON', 'The body is not JSON'))
      }
    })
    request.on('error', reject)
  })
}

function answer(response: ServerResponse, status: number, body: unknown) {
  if (response.headersSent) return
  const text = JSON.stringify(body)
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  response.end(text)
}
