import http from 'node:http'
import { resolve } from 'node:path'
import cds from '@sap/cds'
import type { ChainBDevnetConfig } from '../../srv/chains/chain-b/config.ts'
import { closeServer, listen, startBlockProducer } from '../shared/lifecycle.ts'
import { shown } from '../shared/state.ts'
import { ActivityGenerator } from './activity.ts'
import type { Ledger } from './ledger.ts'
import { handleRequests } from './server.ts'
import { openChain, type OpenedChain } from './state.ts'
import type { Block } from './types.ts'

/**
 * The chain-B devnet: a local ledger with the attestation vault, producing blocks on a clock (or on
 * request), optionally with background activity, served over the Midnight indexer's GraphQL API
 * (`/api/v4/graphql`, subscriptions at `/api/v4/graphql/ws`) and a submission API of its own. With
 * a state folder it keeps its chain there and resumes it at the next start.
 */

interface ChainBDevnetOptions extends ChainBDevnetConfig {
  /** 0 (default) picks a free port. */
  port?: number
  host?: string
  /** Blocks below the tip after which a block counts as final (reported by the status). */
  finalityDepth?: number
}

export class ChainBDevnet {
  readonly ledger: Ledger
  readonly activity: ActivityGenerator
  /** The base URL; the indexer API is at `${url}/api/v4/graphql`. */
  readonly url: string
  private readonly options: ChainBDevnetOptions
  private readonly chain: OpenedChain
  private readonly server: http.Server
  private stopProducer: () => void = () => {}
  private endSubscriptions: () => void = () => {}

  private constructor(options: ChainBDevnetOptions, chain: OpenedChain, server: http.Server, url: string) {
    this.options = options
    this.chain = chain
    this.ledger = chain.ledger
    this.activity = new ActivityGenerator(chain.ledger)
    this.server = server
    this.url = url
  }

  static async start(options: ChainBDevnetOptions): Promise<ChainBDevnet> {
    const host = options.host ?? '127.0.0.1'
    const chain = await openChain({ seed: options.seed, epochLength: options.epochLength }, options.stateDir)
    const server = http.createServer()
    const served: { devnet?: ChainBDevnet } = {}
    const endSubscriptions = handleRequests(server, { ledger: chain.ledger, zkKeysDir: options.zkKeysDir ?? resolve(cds.root, 'zk/keys'), produceBlocks: count => served.devnet!.produceBlocks(count), status: () => served.devnet!.status() })
    let url: string
    try {
      url = await listen(server, options.port, host)
    } catch (error) {
      chain.close()
      throw error
    }
    const devnet = new ChainBDevnet(options, chain, server, url)
    devnet.endSubscriptions = endSubscriptions
    served.devnet = devnet
    devnet.stopProducer = startBlockProducer(options.blockTimeMs, () => devnet.produceBlock(), 'chain-b')
    return devnet
  }

  get indexerUrl(): string {
    return `${this.url}/api/v4/graphql`
  }

  get indexerWsUrl(): string {
    return `${this.url.replace(/^http/, 'ws')}/api/v4/graphql/ws`
  }

  get submitUrl(): string {
    return `${this.url}/api/v4/submit`
  }

  get vaultAddress(): string {
    return this.ledger.vaultAddress
  }

  get stateDir(): string | undefined {
    return this.chain.stateDir
  }

  /** Produces the next block now (with the activity generator's next transaction queued after it, when on). */
  produceBlock(): Block {
    const block = this.ledger.produceBlock()
    if (this.options.activity) this.activity.round()
    return block
  }

  produceBlocks(count: number): number {
    for (let i = 0; i < count; i++) this.produceBlock()
    return this.ledger.tip.height
  }

  /** Replaces the blocks above a height (see Ledger.reorg). */
  reorg(height: number, options: { drop?: boolean; blocks?: number } = {}) {
    return this.ledger.reorg(height, options)
  }

  status() {
    const tip = this.ledger.tip
    const depth = this.options.finalityDepth ?? 3
    return {
      tipHeight: tip.height,
      tipHash: tip.hash,
      finalizedHeight: Math.max(0, tip.height - depth),
      finalityDepth: depth,
      vaultAddress: this.ledger.vaultAddress,
      mempool: this.ledger.mempool.length,
      epoch: this.ledger.epochAt(Math.floor(Date.now() / 1000)),
      blockTimeMs: this.options.blockTimeMs,
      activity: this.options.activity,
    }
  }

  summary(): string {
    const tip = this.ledger.tip
    const kept = this.chain.stateDir ? `, chain ${this.chain.resumed ? 'resumed from' : 'kept in'} ${shown(this.chain.stateDir)}` : ', chain in memory'
    return `chain-B devnet at ${this.indexerUrl}: seed '${this.ledger.seed}', vault ${this.ledger.vaultAddress}, tip #${tip.height}, ` +
      (this.options.blockTimeMs > 0 ? `a block every ${this.options.blockTimeMs} ms` : 'blocks on request') + (this.options.activity ? ', activity on' : '') + kept
  }

  async stop(): Promise<void> {
    this.stopProducer()
    this.stopProducer = () => {}
    this.endSubscriptions()
    await closeServer(this.server)
    this.chain.close()
  }
}
