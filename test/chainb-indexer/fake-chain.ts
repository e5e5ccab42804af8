import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ChainBBlock, ChainBPort, ChainBTransaction, ChainBUtxo } from '../../srv/chains/chain-b/port.ts'
import { ApiError } from '../../srv/lib/errors.ts'

/**
 * A chain-B port over an in-memory chain, for the follower's unit tests only: blocks on request,
 * reorgs that replace blocks above a height, and an upstream that can be down. Outputs are owned by
 * unshielded addresses recorded on Midnight's public networks (Bech32m, longer than a hash).
 */

const hash = (...parts: unknown[]) => createHash('sha256').update(parts.map(String).join('|')).digest('hex')
export const PUBLIC_ADDRESSES = (JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'chain-b', 'public-unshielded-addresses.json'), 'utf8')) as { addresses: string[] }).addresses

export interface FakeTx { spends?: ChainBUtxo[]; outputs?: number; shielded?: boolean; call?: boolean }

export class FakeChain implements ChainBPort {
  blocks: ChainBBlock[] = []
  down = false
  private fork = 0
  private nextTxId = 0
  private subscribers = new Set<(block: ChainBBlock) => void>()

  constructor() {
    this.produce(1)
  }

  /** Appends `count` blocks; `txs` gives the transactions of each (default: one regular transfer). */
  produce(count: number, txs: (height: number) => FakeTx[] = () => [{}]): ChainBBlock[] {
    const made: ChainBBlock[] = []
    for (let i = 0; i < count; i++) {
      const height = this.blocks.length
      const parent = this.blocks.at(-1) ?? null
      const blockHash = hash('block', height, this.fork, parent?.hash)
      const block: ChainBBlock = {
        hash: blockHash, height, protocolVersion: 1, timestamp: 1_700_000_000 + height * 6, author: hash('author', height % 3), parentHash: parent?.hash ?? null,
        transactions: height === 0 ? [] : txs(height).map((tx, index) => this.transaction(blockHash, index, tx)),
      }
      this.blocks.push(block)
      made.push(block)
      for (const notify of this.subscribers) notify(block)
    }
    return made
  }

  /** Replaces every block from `height` on with `replaceWith` new blocks (fewer when some are dropped). */
  reorg(height: number, replaceWith: number, txs?: (height: number) => FakeTx[]): ChainBBlock[] {
    this.fork++
    this.blocks = this.blocks.slice(0, height)
    return this.produce(replaceWith, txs)
  }

  private transaction(blockHash: string, index: number, tx: FakeTx): ChainBTransaction {
    const txHash = hash('tx', blockHash, index)
    const outputs: ChainBUtxo[] = Array.from({ length: tx.outputs ?? 1 }, (_, outputIndex) => ({
      owner: PUBLIC_ADDRESSES[outputIndex % PUBLIC_ADDRESSES.length], tokenType: '0'.repeat(64), value: String(1_000_000n * BigInt(outputIndex + 1)), intentHash: hash('intent', txHash), outputIndex,
    }))
    return {
      kind: 'RegularTransaction', id: this.nextTxId++, hash: txHash, protocolVersion: 1, identifiers: [hash('id', txHash)],
      result: { status: 'SUCCESS', segments: [{ id: 0, success: true }] }, fees: { paidFees: '1000', estimatedFees: '1200' },
      merkleTreeRoot: hash('root', txHash), startIndex: 0, endIndex: 1,
      contractActions: tx.call ? [{ kind: 'ContractCall', address: hash('vault'), state: 'abcd', entryPoint: 'anchor' }] : [],
      unshieldedCreatedOutputs: outputs, unshieldedSpentOutputs: tx.spends ?? [], zswapLedgerEvents: tx.shielded ? 2 : 0,
    }
  }

  private check() {
    if (this.down) throw new ApiError(503, 'CHAIN_B_UNAVAILABLE', 'the fake chain is down')
  }

  async tip() { this.check(); return this.blocks.at(-1)! }
  async block(offset: { hash: string } | { height: number }) {
    this.check()
    return ('height' in offset ? this.blocks[offset.height] : this.blocks.find(block => block.hash === offset.hash)) ?? null
  }
  async transactions() { return [] }
  async contractAction() { return null }
  async contractStateVersion() { return null }
  async currentEpoch() { return null }
  subscribeBlocks(_fromHeight: number, onBlock: (block: ChainBBlock) => void) {
    this.subscribers.add(onBlock)
    return () => { this.subscribers.delete(onBlock) }
  }
  async submit(): Promise<never> { throw new Error('not in the fake') }
  async sponsorBalance() { return '0' }
}
