import WebSocket from 'ws'
import { ApiError } from '../../lib/errors.ts'
import { stopIfAnswered } from '../../lib/request-work.ts'
import { observeUpstream } from '../../metrics/instruments.ts'
import type { ChainBConfig } from './config.ts'
import {
  BLOCK_QUERY, BLOCKS_SUBSCRIPTION, CONTRACT_ACTION_QUERY, CONTRACT_STATE_VERSION_QUERY, EPOCH_QUERY, TRANSACTIONS_QUERY,
  type WireAction, type WireBlock, type WireTransaction, type WireUtxo,
} from './indexer-queries.ts'
import type {
  BlockOffset, ChainBBlock, ChainBContractAction, ChainBEpoch, ChainBPort, ChainBTransaction, ChainBUtxo,
  SponsoredCall, StateVersion, Submission, TransactionOffset,
} from './port.ts'

/**
 * The chain-B adapter: one GraphQL client of the Midnight indexer's public API (schema v4) over
 * HTTP, and its `graphql-transport-ws` subscriptions over WebSocket. The same client reads the
 * embedded or standalone devnet and the public indexers (preprod, preview, mainnet). Writes and
 * sponsor balances go to the submission API, which only the devnet has.
 */

type Settings = Pick<ChainBConfig, 'indexerUrl' | 'indexerWsUrl' | 'submitUrl' | 'timeoutMs'>

/** What a write answers where chain B has no submission API: the public indexers take no writes. */
export const submitNotConfigured = () =>
  new ApiError(503, 'CHAIN_B_SUBMIT_NOT_CONFIGURED', 'Chain B has no submission API here (CHAIN_B_SUBMIT_URL); the public indexers take no writes')

interface GraphQLAnswer<T> {
  data?: T | null
  errors?: { message: string }[]
}

export class IndexerClient implements ChainBPort {
  private readonly settings: Settings

  constructor(settings: Settings) {
    this.settings = settings
  }

  async tip(): Promise<ChainBBlock> {
    const block = await this.block()
    if (!block) throw new ApiError(503, 'CHAIN_B_UNAVAILABLE', 'The chain-B indexer has no block yet')
    return block
  }

  async block(offset?: BlockOffset): Promise<ChainBBlock | null> {
    const data = await this.query<{ block: WireBlock | null }>(BLOCK_QUERY, { offset: offset ?? null })
    return data.block ? toBlock(data.block) : null
  }

  async transactions(offset: TransactionOffset): Promise<(ChainBTransaction & { blockHeight: number; blockHash: string; blockTimestamp: number })[]> {
    const data = await this.query<{ transactions: WireTransaction[] }>(TRANSACTIONS_QUERY, { offset })
    return data.transactions.map(tx => ({ ...toTransaction(tx), blockHeight: tx.block!.height, blockHash: tx.block!.hash, blockTimestamp: secondsOf(tx.block!.timestamp) }))
  }

  async contractAction(address: string, offset?: { blockOffset: BlockOffset } | { transactionOffset: TransactionOffset }): Promise<(ChainBContractAction & { state: string; version: StateVersion }) | null> {
    const data = await this.query<{ contractAction: WireAction | null }>(CONTRACT_ACTION_QUERY, { address, offset: offset ?? null })
    const action = data.contractAction
    return action ? { ...toAction(action), state: action.state ?? '', version: versionOf(action) } : null
  }

  async contractStateVersion(address: string): Promise<StateVersion | null> {
    const data = await this.query<{ contractAction: WireAction | null }>(CONTRACT_STATE_VERSION_QUERY, { address })
    return data.contractAction ? versionOf(data.contractAction) : null
  }

  async currentEpoch(): Promise<ChainBEpoch | null> {
    const data = await this.query<{ currentEpochInfo: ChainBEpoch | null }>(EPOCH_QUERY, {})
    return data.currentEpochInfo
  }

  subscribeBlocks(fromHeight: number, onBlock: (block: ChainBBlock) => void, onError: (error: Error) => void): () => void {
    return subscribe<{ blocks: WireBlock }>(this.settings.indexerWsUrl, BLOCKS_SUBSCRIPTION, { offset: { height: fromHeight } },
      data => onBlock(toBlock(data.blocks)), onError)
  }

  async submit(call: SponsoredCall): Promise<Submission> {
    return this.devnetRequest<Submission>('POST', '/submit', call)
  }

  async sponsorBalance(sponsorKey: string): Promise<string> {
    const answer = await this.devnetRequest<{ balance: string }>('GET', `/sponsors/${encodeURIComponent(sponsorKey)}`)
    return answer.balance
  }

  /** Asks the devnet's faucet to credit a sponsor (the public networks have no faucet). */
  async fundSponsor(sponsorKey: string, amount: string): Promise<{ balance: string }> {
    return this.devnetRequest<{ balance: string }>('POST', '/faucet', { publicKey: sponsorKey, amount })
  }

  /** A query over HTTP; an indexer that does not answer (or not in time) is 503 CHAIN_B_UNAVAILABLE. */
  async query<T>(document: string, variables: Record<string, unknown>): Promise<T> {
    const response = await this.fetch(this.settings.indexerUrl, { method: 'POST', body: JSON.stringify({ query: document, variables }) })
    const answer = (await response.json().catch(() => ({}))) as GraphQLAnswer<T>
    if (answer.errors?.length || !answer.data) {
      const message = answer.errors?.map(error => error.message).join('; ') || `HTTP ${response.status}`
      if (response.status === 429) throw rateLimited(response)
      if (!response.ok && response.status >= 500) throw new ApiError(503, 'CHAIN_B_UNAVAILABLE', `The chain-B indexer failed: ${message}`, { retryAfter: 5 })
      throw new ApiError(502, 'CHAIN_B_UPSTREAM_ERROR', `The chain-B indexer refused the query: ${message}`)
    }
    return answer.data
  }

  private async devnetRequest<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const base = this.settings.submitUrl?.replace(/\/submit\/?$/, '')
    if (!base) throw submitNotConfigured()
    const response = await this.fetch(base + path, { method, body: body === undefined ? undefined : JSON.stringify(body) })
    const answer = (await response.json().catch(() => ({}))) as T & { error?: { code?: string; message?: string } }
    if (response.ok) return answer
    if (response.status === 429) throw rateLimited(response)
    const code = answer.error?.code ?? 'CHAIN_B_UPSTREAM_ERROR'
    const message = answer.error?.message ?? `The chain-B submission API answered HTTP ${response.status}`
    throw new ApiError(response.status >= 500 ? 503 : response.status, response.status >= 500 ? 'CHAIN_B_UNAVAILABLE' : code, message)
  }

  private async fetch(url: string, init: { method: string; body?: string }): Promise<Response> {
    stopIfAnswered()
    try {
      const request = { ...init, headers: { 'content-type': 'application/json', accept: 'application/json' }, signal: AbortSignal.timeout(this.settings.timeoutMs) }
      return await observeUpstream('chain-b', () => fetch(url, request), response => response.status)
    } catch (error) {
      const reason = (error as Error).name === 'TimeoutError' ? `did not answer within ${this.settings.timeoutMs} ms` : `does not answer (${causeOf(error)})`
      throw new ApiError(503, 'CHAIN_B_UNAVAILABLE', `The chain-B upstream at ${new URL(url).origin} ${reason}`, { retryAfter: 5 })
    }
  }
}

/** The upstream's rate limit passed on as the caller's, with the upstream's Retry-After (seconds; 5 when it gives none or a date). */
function rateLimited(response: Response): ApiError {
  const given = Number(response.headers.get('retry-after'))
  const retryAfter = Number.isInteger(given) && given > 0 ? Math.min(given, 3600) : 5
  return new ApiError(429, 'UPSTREAM_RATE_LIMITED', `The chain-B upstream rate limited this call; retry after ${retryAfter} s`, { retryAfter })
}

const causeOf = (error: unknown) => {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause
  return cause?.code ?? cause?.message ?? (error as Error).message
}

/**
 * One subscription over its own `graphql-transport-ws` connection: connection_init, then subscribe;
 * each `next` is handed on; an error, a completion or a lost connection calls `onError` once.
 * Answers a function that ends it (without calling `onError`).
 */
function subscribe<T>(wsUrl: string, query: string, variables: Record<string, unknown>, onData: (data: T) => void, onError: (error: Error) => void): () => void {
  const socket = new WebSocket(wsUrl, 'graphql-transport-ws')
  let ended = false
  const fail = (error: Error) => {
    if (ended) return
    ended = true
    socket.terminate()
    onError(error)
  }
  socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: {} })))
  socket.on('message', raw => {
    if (ended) return
    let message: { type: string; id?: string; payload?: unknown }
    try {
      message = JSON.parse(String(raw))
    } catch {
      return fail(new Error('the chain-B indexer sent a message that is not JSON'))
    }
    switch (message.type) {
      case 'connection_ack':
        socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query, variables } }))
        break
      case 'ping':
        socket.send(JSON.stringify({ type: 'pong' }))
        break
      case 'next': {
        const payload = message.payload as GraphQLAnswer<T>
        if (payload.errors?.length || !payload.data) return fail(new Error(`chain-B subscription error: ${payload.errors?.map(e => e.message).join('; ')}`))
        try {
          onData(payload.data)
        } catch (error) {
          fail(error as Error)
        }
        break
      }
      case 'error':
        return fail(new Error(`chain-B subscription refused: ${(message.payload as { message: string }[]).map(e => e.message).join('; ')}`))
      case 'complete':
        return fail(new Error('the chain-B indexer completed the subscription'))
    }
  })
  socket.on('error', error => fail(new ApiError(503, 'CHAIN_B_UNAVAILABLE', `The chain-B indexer's WebSocket at ${wsUrl} does not answer (${error.message})`)))
  socket.on('close', () => fail(new ApiError(503, 'CHAIN_B_UNAVAILABLE', `The chain-B indexer closed the subscription's WebSocket`)))
  return () => {
    if (ended) return
    ended = true
    if (socket.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify({ id: '1', type: 'complete' }))
      socket.close(1000)
    } else socket.terminate()
  }
}

const toUtxo = (utxo: WireUtxo): ChainBUtxo => ({ owner: utxo.owner, tokenType: utxo.tokenType, value: utxo.value, intentHash: utxo.intentHash, outputIndex: utxo.outputIndex })

const toAction = (action: WireAction): ChainBContractAction => ({
  kind: action.__typename,
  address: action.address,
  state: action.state ?? null,
  entryPoint: action.__typename === 'ContractCall' ? action.entryPoint ?? null : null,
})

function toTransaction(tx: WireTransaction): ChainBTransaction {
  const regular = tx.__typename === 'RegularTransaction'
  return {
    kind: tx.__typename,
    id: tx.id,
    hash: tx.hash,
    protocolVersion: tx.protocolVersion,
    identifiers: regular ? tx.identifiers ?? [] : [],
    result: regular && tx.transactionResult ? { status: tx.transactionResult.status, segments: tx.transactionResult.segments ?? [] } : null,
    fees: regular && tx.fees ? { paidFees: tx.fees.paidFees, estimatedFees: tx.fees.estimatedFees } : null,
    merkleTreeRoot: regular ? tx.zswapMerkleTreeRoot ?? null : null,
    startIndex: regular ? tx.zswapStartIndex ?? null : null,
    endIndex: regular ? tx.zswapEndIndex ?? null : null,
    contractActions: tx.contractActions.map(toAction),
    unshieldedCreatedOutputs: tx.unshieldedCreatedOutputs.map(toUtxo),
    unshieldedSpentOutputs: tx.unshieldedSpentOutputs.map(toUtxo),
    zswapLedgerEvents: tx.zswapLedgerEvents.length,
  }
}

const versionOf = (action: WireAction): StateVersion => ({ transactionId: action.transaction!.id, transactionHash: action.transaction!.hash })

/** A block's time on the indexer is the node's, in Unix milliseconds; the port speaks seconds. */
const secondsOf = (milliseconds: number) => Math.floor(milliseconds / 1000)

const toBlock = (block: WireBlock): ChainBBlock => ({
  hash: block.hash,
  height: block.height,
  protocolVersion: block.protocolVersion,
  timestamp: secondsOf(block.timestamp),
  author: block.author,
  parentHash: block.parent?.hash ?? null,
  transactions: block.transactions.map(toTransaction),
})
