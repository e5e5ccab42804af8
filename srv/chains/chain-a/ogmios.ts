import { ApiError, isApiError } from '../../lib/errors.ts'
import type { ChainAConfig } from './config.ts'
import { KupoClient } from './kupo.ts'
import { OgmiosLedgerReads } from './ogmios-ledger.ts'
import { ChainSyncIndex } from './ogmios-index.ts'
import { OgmiosRpc } from './ogmios-rpc.ts'
import type {
  ChainAccount,
  ChainAddress,
  ChainAddressTransaction,
  ChainAPort,
  ChainAssetHistoryEntry,
  ChainBlock,
  ChainDelegator,
  ChainDrep,
  ChainEpoch,
  ChainGenesis,
  ChainNetwork,
  ChainPool,
  ChainPoolSummary,
  ChainProtocolParameters,
  ChainTransaction,
  ChainUtxo,
  ListPage,
} from './port.ts'

/** What the adapter needs of the chain-a options. */
export type OgmiosConfig = Pick<ChainAConfig, 'network' | 'ogmiosUrl' | 'kupoUrl' | 'ogmiosSyncFrom' | 'ogmiosIndexBlocks' | 'timeoutMs' | 'retries'>

function required(value: string | undefined, variable: string): string {
  if (!value) throw new ApiError(503, 'UPSTREAM_NOT_CONFIGURED', `the ogmios kind of chain A needs ${variable}`)
  return value
}

/**
 * The chain-A port over a node of one's own: Ogmios (v6, JSON-RPC over one WebSocket) for the
 * ledger's state and submission, Kupo (v2) for outputs by address, credential and asset, and a chain
 * index of its own, fed by Ogmios's chain synchronisation from OGMIOS_SYNC_FROM, for what neither
 * answers (blocks, transactions by hash, an address's or an asset's history, epochs). The index holds
 * the newest OGMIOS_INDEX_BLOCKS blocks; older ones are read from the read index the follower keeps,
 * which tells the index where to resume after a restart (followFrom; docs/chain-a-backends.md).
 */
export class OgmiosAdapter implements ChainAPort {
  readonly networkName: string
  private readonly rpc: OgmiosRpc
  private readonly index: ChainSyncIndex
  private readonly ledger: OgmiosLedgerReads

  constructor(config: OgmiosConfig) {
    this.networkName = config.network
    this.rpc = new OgmiosRpc({ url: required(config.ogmiosUrl, 'OGMIOS_URL'), timeoutMs: config.timeoutMs })
    const kupo = new KupoClient({ url: required(config.kupoUrl, 'KUPO_URL'), timeoutMs: config.timeoutMs, retries: config.retries })
    this.index = new ChainSyncIndex({
      rpc: this.rpc, from: config.ogmiosSyncFrom, maxBlocks: config.ogmiosIndexBlocks,
      resolveOutput: (txHash, index) => kupo.output(txHash, index),
      genesisOutputs: genesis => kupo.blockOutputs(genesis),
    })
    const index = this.index
    this.ledger = new OgmiosLedgerReads({
      rpc: this.rpc, kupo, network: config.network,
      figures: {
        poolBlockCounts: (poolId, epoch) => index.poolBlockCounts(poolId, epoch),
        accountTotals: stakeAddress => index.accountTotals(stakeAddress),
        currentEpoch: async () => (await index.tip()).epoch,
      },
    })
    this.index.start()
  }

  /**
   * A read whose answer could not be taken apart (Ogmios or Kupo answered what they do not
   * answer) is the upstream's failure, 503, never a 500.
   */
  private async answer<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read()
    } catch (error) {
      if (isApiError(error)) throw error
      throw new ApiError(503, 'UPSTREAM_UNAVAILABLE', `chain-A upstream (Ogmios with Kupo) answered what cannot be read: ${error instanceof Error ? error.message : String(error)}`.slice(0, 500))
    }
  }

  /** Ends chain synchronisation and the connection (at shutdown). */
  async close(): Promise<void> {
    this.index.close()
    await this.rpc.close()
  }

  tip(): Promise<ChainBlock> { return this.answer(() => this.index.tip()) }
  block(hashOrHeight: string | number): Promise<ChainBlock | null> { return this.answer(() => this.index.block(hashOrHeight)) }
  epoch(epoch: number): Promise<ChainEpoch | null> { return this.answer(() => this.index.epoch(epoch)) }
  latestEpoch(): Promise<ChainEpoch> { return this.answer(() => this.index.latestEpoch()) }
  epochsAfter(epoch: number, count: number): Promise<ChainEpoch[]> { return this.answer(() => this.index.epochsAfter(epoch, count)) }
  blocksAfter(height: number, count: number): Promise<ChainBlock[]> { return this.answer(() => this.index.blocksAfter(height, count)) }
  blockTransactions(hashOrHeight: string | number, page: ListPage): Promise<string[] | null> { return this.answer(() => this.index.blockTransactions(hashOrHeight, page)) }
  epochBlocks(epoch: number, page: ListPage): Promise<string[] | null> { return this.answer(() => this.index.epochBlocks(epoch, page)) }
  transaction(hash: string): Promise<ChainTransaction | null> { return this.answer(() => this.index.transaction(hash)) }
  addressTransactions(address: string, limit: number): Promise<ChainAddressTransaction[]> { return this.answer(() => this.index.addressTransactions(address, limit)) }
  addressTransactionPage(address: string, page: ListPage): Promise<ChainAddressTransaction[]> { return this.answer(() => this.index.addressTransactionPage(address, page)) }
  assetHistory(unit: string, limit: number): Promise<ChainAssetHistoryEntry[] | null> { return this.answer(() => this.index.assetHistory(unit, limit)) }
  assetHistoryPage(unit: string, page: ListPage): Promise<ChainAssetHistoryEntry[] | null> { return this.answer(() => this.index.assetHistoryPage(unit, page)) }
  poolDelegators(poolId: string, page: ListPage): Promise<ChainDelegator[] | null> { return this.answer(() => this.index.poolDelegators(poolId, page)) }

  accountAddresses(stakeAddress: string, page: ListPage): Promise<string[] | null> { return this.answer(() => this.index.accountAddresses(stakeAddress, page)) }

  protocolParameters(epoch?: number): Promise<ChainProtocolParameters | null> { return this.answer(() => this.ledger.protocolParameters(epoch)) }
  address(address: string): Promise<ChainAddress | null> { return this.answer(() => this.ledger.address(address)) }
  addressUtxos(address: string): Promise<ChainUtxo[]> { return this.answer(() => this.ledger.addressUtxos(address)) }
  account(stakeAddress: string): Promise<ChainAccount | null> { return this.answer(() => this.ledger.account(stakeAddress)) }
  pool(poolId: string): Promise<ChainPool | null> { return this.answer(() => this.ledger.pool(poolId)) }
  pools(page: ListPage): Promise<ChainPoolSummary[]> { return this.answer(() => this.ledger.pools(page)) }
  drep(drepId: string): Promise<ChainDrep | null> { return this.answer(() => this.ledger.drep(drepId)) }
  drepDelegators(drepId: string, page: ListPage): Promise<ChainDelegator[] | null> { return this.answer(() => this.ledger.drepDelegators(drepId, page)) }
  dreps(page: ListPage): Promise<ChainDrep[]> { return this.answer(() => this.ledger.dreps(page)) }
  network(): Promise<ChainNetwork> { return this.answer(() => this.ledger.network()) }
  genesis(): Promise<ChainGenesis> { return this.answer(() => this.ledger.genesis()) }
  submit(cbor: Uint8Array): Promise<string> { return this.answer(() => this.ledger.submit(cbor)) }
  followFrom(points: { slot: number; hash: string }[]): Promise<void> { return this.answer(() => this.index.followFrom(points)) }

  coverage(): string | undefined {
    const from = this.index.heldFrom
    if (from?.height === 0) return undefined
    const held = from ? `blocks from height ${from.height} (slot ${from.slot}) on` : 'no block yet'
    return `the chain index of the ogmios kind holds ${held}; an older block or transaction is known only where the follower indexed it`
  }
}
