import cds from '@sap/cds'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { buildSchema, type GraphQLSchema } from 'graphql'
import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import { unshieldedAddress } from '../../srv/chains/chain-b/unshielded-address.ts'
import { encodeVaultState } from '../../srv/chains/chain-b/vault-codec.ts'
import { withIndexerInt } from './indexer-int.ts'
import type { Ledger } from './ledger.ts'
import { PROTOCOL_VERSION, type Block, type ContractActionRecord, type TxRecord, type Utxo } from './types.ts'

/**
 * The devnet's answers to the indexer's GraphQL API (indexer-schema.graphql, a subset of the
 * public schema v4): views of the ledger's records whose fields are values or functions (the
 * default resolver calls them), with `__typename` for the interfaces; and the root value with the
 * queries and the subscriptions.
 */

/** The schema file, in the project (the devnet runs from the project's folder, embedded or standalone). */
const indexerSchemaFile = () => resolve(cds.root, 'srv/chains/chain-b/indexer-schema.graphql')
let schema: GraphQLSchema | undefined
export const indexerSchema = () => (schema ??= withIndexerInt(buildSchema(readFileSync(indexerSchemaFile(), 'utf8'))))

type BlockOffset = { hash?: string | null; height?: number | null }
type TransactionOffset = { hash?: string | null; identifier?: string | null }
type ContractActionOffset = { blockOffset?: BlockOffset | null; transactionOffset?: TransactionOffset | null }

const hex = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('hex')

export function rootValue(ledger: Ledger) {
  const views = new Views(ledger)
  return {
    block: ({ offset }: { offset?: BlockOffset | null }) => {
      const block = offset ? blockAt(ledger, offset) : ledger.tip
      return block ? views.block(block) : null
    },
    transactions: ({ offset }: { offset: TransactionOffset }) => {
      const records = offset.hash ? ledger.transactionsByHash(offset.hash) : ledger.transactionsByIdentifier(offset.identifier ?? '')
      return records.map(tx => views.transaction(tx))
    },
    contractAction: ({ address, offset }: { address: string; offset?: ContractActionOffset | null }) => {
      const action = contractActionAt(ledger, address, offset)
      return action ? views.action(action.action, action.tx) : null
    },
    currentEpochInfo: () => ledger.epochAt(Math.floor(Date.now() / 1000)),
    blocks: ({ offset }: { offset?: BlockOffset | null }) => {
      const start = offset ? blockAt(ledger, offset)?.height ?? offset.height ?? ledger.tip.height + 1 : ledger.tip.height
      return new BlockFeed(ledger, start, block => [{ blocks: views.block(block) }])
    },
    contractActions: ({ address, offset }: { address: string; offset?: BlockOffset | null }) => {
      const start = offset ? blockAt(ledger, offset)?.height ?? offset.height ?? ledger.tip.height + 1 : ledger.tip.height
      return new BlockFeed(ledger, start, block => block.transactions.flatMap(tx =>
        tx.actions.filter(action => action.address === address).map(action => ({ contractActions: views.action(action, tx) }))))
    },
  }
}

function blockAt(ledger: Ledger, offset: BlockOffset): Block | undefined {
  if (offset.hash) return ledger.blockByHash(offset.hash)
  return typeof offset.height === 'number' ? ledger.blockAt(offset.height) : undefined
}

function contractActionAt(ledger: Ledger, address: string, offset?: ContractActionOffset | null) {
  const actions = ledger.actionsOf(address)
  if (!offset) return actions.at(-1)
  if (offset.blockOffset) {
    const block = blockAt(ledger, offset.blockOffset)
    if (!block) return undefined
    return actions.filter(({ tx }) => tx.height <= block.height).at(-1)
  }
  const records = offset.transactionOffset?.hash ? ledger.transactionsByHash(offset.transactionOffset.hash) : ledger.transactionsByIdentifier(offset.transactionOffset?.identifier ?? '')
  const ids = new Set(records.map(tx => tx.id))
  return actions.filter(({ tx }) => ids.has(tx.id)).at(-1)
}

class Views {
  private readonly ledger: Ledger
  /**
   * The vault's states as Midnight's serialized ContractState, by their content: encoding one
   * takes long (its records go through the ledger's WebAssembly), and the newest is asked for
   * again and again. By content, not by action: a reorg may give an action index another state.
   */
  private readonly encodedStates = new LRUCache<string, Promise<string>>({ max: 16 })
  constructor(ledger: Ledger) {
    this.ledger = ledger
  }

  block(block: Block): Record<string, unknown> {
    return {
      hash: block.hash,
      height: block.height,
      protocolVersion: PROTOCOL_VERSION,
      // Unix milliseconds, as the public indexer gives a block's time (the node's); the ledger keeps seconds.
      timestamp: block.timestamp * 1000,
      author: block.author,
      ledgerParameters: block.parameters.serialized,
      parent: () => (block.parentHash ? this.block(this.ledger.blockAt(block.height - 1)!) : null),
      transactions: () => block.transactions.map(tx => this.transaction(tx)),
      systemParameters: { dParameter: { numPermissionedCandidates: this.ledger.producers.length, numRegisteredCandidates: 0 }, termsAndConditions: null },
    }
  }

  transaction(tx: TxRecord): Record<string, unknown> {
    const common = {
      __typename: tx.kind,
      id: tx.id,
      hash: tx.hash,
      protocolVersion: PROTOCOL_VERSION,
      raw: tx.body.type === 'deploy' ? tx.body.transaction : hex(tx.body),
      block: () => this.block(this.ledger.blockAt(tx.height)!),
      contractActions: () => tx.actions.map(action => this.action(action, tx)),
      unshieldedCreatedOutputs: () => tx.created.map(utxo => this.utxo(utxo)),
      unshieldedSpentOutputs: () => tx.spent.map(utxo => this.utxo(utxo)),
      zswapLedgerEvents: () => tx.zswap.events.map(event => ({ ...event, maxId: this.ledger.zswapEventCount() - 1, protocolVersion: PROTOCOL_VERSION })),
      dustLedgerEvents: () => this.dustEvents(tx),
    }
    if (tx.kind === 'SystemTransaction') return common
    return {
      ...common,
      transactionResult: tx.result,
      identifiers: tx.identifiers,
      zswapMerkleTreeRoot: tx.zswap.root,
      merkleTreeRoot: tx.zswap.root,
      zswapStartIndex: tx.zswap.startIndex,
      startIndex: tx.zswap.startIndex,
      zswapEndIndex: tx.zswap.endIndex,
      endIndex: tx.zswap.endIndex,
      fees: tx.fees,
    }
  }

  /** A fee paid is a DUST spend; a parameter update a parameter change. */
  private dustEvents(tx: TxRecord) {
    const event = (typename: string) => ({ __typename: typename, id: tx.id, raw: tx.hash, maxId: this.ledger.tip.transactions.at(-1)?.id ?? tx.id, protocolVersion: PROTOCOL_VERSION })
    if (tx.kind === 'RegularTransaction') return tx.body.type === 'deploy' ? [] : [event('DustSpendProcessed')]
    return tx.body.type === 'parameters' ? [event('ParamChange')] : []
  }

  private encodedStateAt(index: number): Promise<string> {
    const state = this.ledger.vaultStateAt(index)
    const key = createHash('sha256').update(JSON.stringify(state)).digest('hex')
    let encoded = this.encodedStates.get(key)
    if (!encoded) {
      encoded = encodeVaultState(state)
      this.encodedStates.set(key, encoded)
      encoded.catch(() => this.encodedStates.delete(key))
    }
    return encoded
  }

  action(action: ContractActionRecord, tx: TxRecord): Record<string, unknown> {
    const view: Record<string, unknown> = {
      __typename: action.kind,
      address: action.address,
      state: () => this.encodedStateAt(action.index),
      zswapState: this.ledger.vaultZswapState,
      transaction: () => this.transaction(tx),
      unshieldedBalances: [],
    }
    if (action.kind === 'ContractCall') {
      view.entryPoint = action.entryPoint
      view.deploy = () => {
        const deploy = this.ledger.actionsOf(action.address)[0]
        return this.action(deploy.action, deploy.tx)
      }
    }
    return view
  }

  utxo(utxo: Utxo): Record<string, unknown> {
    return {
      owner: unshieldedAddress(utxo.owner),
      tokenType: utxo.tokenType,
      value: utxo.value,
      intentHash: utxo.intentHash,
      outputIndex: utxo.outputIndex,
      ctime: utxo.ctime,
      initialNonce: utxo.intentHash,
      registeredForDustGeneration: false,
      createdAtTransaction: () => this.transaction(this.ledger.transactionById(utxo.createdTxId)!),
      spentAtTransaction: () => {
        const id = this.ledger.spentAt(utxo)
        return id === undefined ? null : this.transaction(this.ledger.transactionById(id)!)
      },
    }
  }
}

/**
 * A subscription's source: the events of each block from a height on, then of each new block; after
 * a reorg it goes back to the first replaced height, so the new blocks are delivered too.
 */
class BlockFeed<T> implements AsyncIterableIterator<T> {
  private readonly ledger: Ledger
  private readonly eventsOf: (block: Block) => T[]
  private next_: number
  private queue: T[] = []
  private waiting?: (result: IteratorResult<T>) => void
  private done = false
  private readonly wake = () => this.pump()
  private readonly rewind = (height: number) => {
    this.next_ = Math.min(this.next_, height + 1)
  }

  constructor(ledger: Ledger, fromHeight: number, eventsOf: (block: Block) => T[]) {
    this.ledger = ledger
    this.eventsOf = eventsOf
    this.next_ = Math.max(0, fromHeight)
    ledger.on('block', this.wake)
    ledger.on('reorg', this.rewind)
  }

  [Symbol.asyncIterator]() {
    return this
  }

  next(): Promise<IteratorResult<T>> {
    if (this.done) return Promise.resolve({ value: undefined, done: true })
    this.fill()
    if (this.queue.length) return Promise.resolve({ value: this.queue.shift()!, done: false })
    return new Promise(resolve => (this.waiting = resolve))
  }

  return(): Promise<IteratorResult<T>> {
    this.done = true
    this.ledger.off('block', this.wake)
    this.ledger.off('reorg', this.rewind)
    this.waiting?.({ value: undefined, done: true })
    this.waiting = undefined
    return Promise.resolve({ value: undefined, done: true })
  }

  private fill() {
    while (!this.queue.length && this.next_ <= this.ledger.tip.height) this.queue.push(...this.eventsOf(this.ledger.blockAt(this.next_++)!))
  }

  private pump() {
    if (!this.waiting) return
    this.fill()
    if (!this.queue.length) return
    const resolve = this.waiting
    this.waiting = undefined
    resolve({ value: this.queue.shift()!, done: false })
  }
}
