import http from 'node:http'
import type * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import type { DevnetConfig } from '../../srv/chains/chain-a/config.ts'
import { closeServer, listen, startBlockProducer } from '../shared/lifecycle.ts'
import { shown } from '../shared/state.ts'
import { ActivityGenerator } from './activity.ts'
import { createApp, RequestCounter } from './api/app.ts'
import { describeWallet, type DevnetWallet } from './genesis.ts'
import { Ledger } from './ledger.ts'
import { OgmiosServer } from './ogmios/server.ts'
import { openChain, type OpenedChain } from './state.ts'
import type { Block } from './types.ts'

/**
 * The embedded chain-A devnet: a local Cardano-like ledger that validates every transaction,
 * produces blocks on a timer (or on request), optionally generates background activity, and
 * serves a Blockfrost v0-compatible HTTP API so the product reaches it through blockfrost-js.
 * With a state folder (`stateDir`, development) it keeps its chain there and resumes it at the next
 * start; without one (tests) each start makes a new chain in memory.
 */

export interface DevnetOptions extends DevnetConfig {
  /** 0 (default) picks a free port. */
  port?: number
  host?: string
}

export interface WalletKeyPair {
  address: string
  stakeAddress: string
  payment: CSL.PrivateKey
  stake: CSL.PrivateKey
}

export class ChainADevnet {
  readonly ledger: Ledger
  readonly activity: ActivityGenerator
  readonly url: string
  private readonly options: DevnetOptions
  private readonly chain: OpenedChain
  private readonly server: http.Server
  private readonly counter: RequestCounter
  private readonly ogmios: OgmiosServer
  private stopProducer: () => void = () => {}
  private latencyMs: number

  private constructor(options: DevnetOptions, chain: OpenedChain, server: http.Server, counter: RequestCounter, url: string, ogmios: OgmiosServer) {
    this.options = options
    this.ogmios = ogmios
    this.chain = chain
    this.ledger = chain.ledger
    this.activity = new ActivityGenerator(chain.ledger)
    this.server = server
    this.counter = counter
    this.url = url
    this.latencyMs = options.latencyMs ?? 0
  }

  static async start(options: DevnetOptions): Promise<ChainADevnet> {
    const host = options.host ?? '127.0.0.1'
    const { seed, wallets, slotLengthMs, epochLength, securityParam } = options
    const chain = openChain({ seed, wallets, slotLengthMs, epochLength, securityParam }, options.stateDir)
    const counter = new RequestCounter()
    let url = ''
    // The app asks for the latency of the devnet it is served by, which exists once the server listens.
    const served: { devnet?: ChainADevnet } = {}
    const app = createApp(chain.ledger, counter, () => url, () => served.devnet?.latencyMs ?? 0)
    // Ogmios' JSON-RPC over WebSocket (upgrades on /ogmios and /) and its health document; every other request is the app's.
    const ogmios = new OgmiosServer(chain.ledger)
    const server = http.createServer((req, res) => {
      if (!ogmios.serveHttp(req, res)) void app(req, res)
    })
    ogmios.attach(server)
    try {
      url = await listen(server, options.port, host)
    } catch (error) {
      ogmios.close()
      chain.close()
      throw error
    }
    const devnet = new ChainADevnet(options, chain, server, counter, url, ogmios)
    served.devnet = devnet
    devnet.stopProducer = startBlockProducer(options.blockTimeMs, () => devnet.produceBlock(), 'chain-a')
    return devnet
  }

  /** Delays every HTTP answer by this many milliseconds (0: answer at once). */
  setLatency(ms: number) {
    this.latencyMs = Math.max(0, ms)
  }

  /** The funded test wallets (never spent by the activity generator). */
  wallets(): DevnetWallet[] {
    return this.ledger.genesis.testWallets.map(describeWallet)
  }

  /** The signing keys of a test wallet, by name (e.g. 'wallet-1'). */
  walletKeys(name: string): WalletKeyPair {
    const wallet = this.ledger.genesis.testWallets.find(w => w.name === name)
    if (!wallet) throw new Error(`No devnet test wallet named '${name}'`)
    return { address: wallet.address, stakeAddress: wallet.stakeAddress, payment: wallet.payment, stake: wallet.stake }
  }

  /** Produces the next block now, including every still-valid mempool transaction that fits. */
  produceBlock(): Block {
    const block = this.ledger.produceBlock()
    if (this.options.activity) this.activity.afterBlock()
    this.ogmios.notify()
    return block
  }

  /**
   * Removes the newest `depth` blocks so that the next produced ones form a fork (tests of reorg
   * handling); their transactions go back to the mempool when they still validate. Refused for a
   * chain kept in a state folder. Answers the removed blocks, oldest first.
   */
  rollBack(depth: number): Block[] {
    const removed = this.ledger.rollBack(depth)
    this.ogmios.notify()
    return removed
  }

  /** Submits a transaction in-process, through the same validation as POST /tx/submit. */
  submit(cbor: Uint8Array): string {
    return this.ledger.submit(cbor)
  }

  /** HTTP requests served whose path starts with the prefix (all of them without one). */
  requestCount(pathPrefix?: string): number {
    return this.counter.count(pathPrefix)
  }

  resetRequestCounts() {
    this.counter.reset()
  }

  /** The folder the chain is kept in, or undefined when it lives in memory only. */
  get stateDir(): string | undefined {
    return this.chain.stateDir
  }

  summary(): string {
    const tip = this.ledger.tip
    const kept = this.chain.stateDir
      ? `, chain ${this.chain.resumed ? 'resumed from' : 'kept in'} ${shown(this.chain.stateDir)} (system start ${new Date(this.ledger.systemStartMs).toISOString()})`
      : ', chain in memory'
    return `chain-A devnet at ${this.url}: seed '${this.ledger.seed}', ${this.ledger.genesis.testWallets.length} test wallets, ${this.ledger.pools.size} pools, tip #${tip.height} (slot ${tip.slot}, epoch ${tip.epoch}), ` +
      (this.options.blockTimeMs > 0 ? `a block every ${this.options.blockTimeMs} ms` : 'blocks on request') + (this.options.activity ? ', activity on' : '') + kept
  }

  async stop(): Promise<void> {
    this.stopProducer()
    this.stopProducer = () => {}
    this.ogmios.close()
    await closeServer(this.server)
    this.chain.close()
  }
}

