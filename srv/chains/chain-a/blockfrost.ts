import { BlockFrostAPI } from '@blockfrost/blockfrost-js'
import { ApiError } from '../../lib/errors.ts'
import type { ChainAConfig } from './config.ts'
import { LIST_PAGE_SIZE } from './port.ts'
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
import {
  toAccount,
  toAddress,
  toAddressTransaction,
  toAssetHistoryEntry,
  toBlock,
  toDrep,
  toDrepDelegator,
  toEpoch,
  toGenesis,
  toNetwork,
  toPool,
  toPoolDelegator,
  toPoolSummary,
  toProtocolParameters,
  toTransaction,
  toUtxo,
} from './blockfrost-mappers.ts'
import { upstreamError } from './upstream-errors.ts'
import { UpstreamCalls } from './upstream-calls.ts'

/** What the adapter needs of the chain-a options. */
export type BlockfrostConfig = Pick<ChainAConfig, 'network' | 'projectId' | 'url' | 'timeoutMs' | 'retries' | 'clientRateLimit'>

type SdkOptions = NonNullable<ConstructorParameters<typeof BlockFrostAPI>[0]>
type RetrySettings = NonNullable<SdkOptions['retrySettings']>
type Pagination = { page: number; count: number; order?: 'asc' | 'desc' }

const PAGE_SIZE = LIST_PAGE_SIZE
const HOSTED_NETWORKS = ['preprod', 'preview', 'mainnet'] as const
type HostedNetwork = (typeof HOSTED_NETWORKS)[number]

const isHostedNetwork = (network: string): network is HostedNetwork => (HOSTED_NETWORKS as readonly string[]).includes(network)
const segment = (value: string) => encodeURIComponent(value)
const pagination = ({ page, order }: ListPage): Pagination => ({ page, count: PAGE_SIZE, order })
const pageCount = (count: number) => Math.min(PAGE_SIZE, Math.max(1, Math.floor(count)))

/**
 * The SDK never retries: its HTTP client's own retry can throw outside the request's promise when
 * the network fails (an uncaught error that would stop the server). `call` retries reads instead.
 */
const NO_SDK_RETRIES: RetrySettings = {
  limit: 0,
  methods: [],
  statusCodes: [],
  errorCodes: [],
  calculateDelay: () => 0,
}

function sdkOptions(config: BlockfrostConfig): SdkOptions {
  const common = {
    requestTimeout: config.timeoutMs,
    retrySettings: NO_SDK_RETRIES,
    rateLimiter: config.clientRateLimit,
  }
  if (config.url) {
    const network = isHostedNetwork(config.network) ? config.network : undefined
    return { ...common, customBackend: config.url, projectId: config.projectId || undefined, network }
  }
  if (!config.projectId)
    throw new ApiError(503, 'UPSTREAM_NOT_CONFIGURED', 'chain-A upstream is not configured: set BLOCKFROST_PROJECT_ID (hosted Blockfrost), BLOCKFROST_URL (a Blockfrost-compatible server) or enable the devnet (CHAIN_A_DEVNET)')
  if (!isHostedNetwork(config.network))
    throw new ApiError(503, 'UPSTREAM_NOT_CONFIGURED', `chain-A network '${config.network}' is not served by hosted Blockfrost (expected ${HOSTED_NETWORKS.join(', ')}); set BLOCKFROST_URL to reach any other network`)
  return { ...common, projectId: config.projectId, network: config.network }
}

/** The chain-A port over Blockfrost (hosted, self-hosted or the devnet's compatible API). */
export class BlockfrostAdapter implements ChainAPort {
  readonly networkName: string
  private readonly api: BlockFrostAPI
  private readonly calls: UpstreamCalls

  constructor(config: BlockfrostConfig) {
    this.networkName = config.network
    this.calls = new UpstreamCalls(config.retries, (error, operation, remainingBackoff) => upstreamError(error, operation, config.timeoutMs, remainingBackoff))
    this.api = new BlockFrostAPI(sdkOptions(config))
    // The SDK's errors drop the response headers, so Retry-After is read off every response here.
    this.api.instance = this.api.instance.extend({
      hooks: {
        afterResponse: [
          response => {
            this.calls.noteBackoff(response.statusCode, response.headers['retry-after'])
            return response
          },
        ],
      },
    })
  }

  async tip(): Promise<ChainBlock> {
    return toBlock(await this.calls.call('read', () => this.api.blocksLatest()))
  }

  async block(hashOrHeight: string | number): Promise<ChainBlock | null> {
    const id = typeof hashOrHeight === 'number' ? hashOrHeight : segment(hashOrHeight)
    const block = await this.calls.find(() => this.api.blocks(id))
    return block && toBlock(block)
  }

  async epoch(epoch: number): Promise<ChainEpoch | null> {
    const found = await this.calls.find(() => this.api.epochs(epoch))
    return found && toEpoch(found)
  }

  async latestEpoch(): Promise<ChainEpoch> {
    return toEpoch(await this.calls.call('read', () => this.api.epochsLatest()))
  }

  async protocolParameters(epoch?: number): Promise<ChainProtocolParameters | null> {
    const params = await this.calls.find(() => (epoch === undefined ? this.api.epochsLatestParameters() : this.api.epochsParameters(epoch)))
    return params && toProtocolParameters(params)
  }

  async transaction(hash: string): Promise<ChainTransaction | null> {
    const id = segment(hash)
    const [tx, utxos, metadata] = await Promise.all([
      this.calls.find(() => this.api.txs(id)),
      this.calls.find(() => this.api.txsUtxos(id)),
      this.calls.find(() => this.api.txsMetadata(id)),
    ])
    return tx && toTransaction(tx, utxos, metadata)
  }

  async address(address: string): Promise<ChainAddress | null> {
    const found = await this.calls.find(() => this.api.addresses(segment(address)))
    return found && toAddress(found)
  }

  async addressUtxos(address: string): Promise<ChainUtxo[]> {
    const id = segment(address)
    const utxos = await this.allPages(pagination => this.api.addressesUtxos(id, pagination))
    return (utxos ?? []).map(toUtxo)
  }

  async addressTransactions(address: string, limit: number): Promise<ChainAddressTransaction[]> {
    const id = segment(address)
    const txs = await this.newestFirst(limit, pagination => this.api.addressesTransactions(id, pagination))
    return (txs ?? []).map(toAddressTransaction)
  }

  async assetHistory(unit: string, limit: number): Promise<ChainAssetHistoryEntry[] | null> {
    const id = segment(unit)
    const history = await this.newestFirst(limit, pagination => this.api.assetsHistory(id, pagination))
    return history && history.map(toAssetHistoryEntry)
  }

  async account(stakeAddress: string): Promise<ChainAccount | null> {
    const found = await this.calls.find(() => this.api.accounts(segment(stakeAddress)))
    return found && toAccount(found)
  }

  async pool(poolId: string): Promise<ChainPool | null> {
    const id = segment(poolId)
    const [pool, metadata] = await Promise.all([this.calls.find(() => this.api.poolsById(id)), this.calls.find(() => this.api.poolMetadata(id))])
    return pool && toPool(pool, metadata)
  }

  async drep(drepId: string): Promise<ChainDrep | null> {
    const found = await this.calls.find(() => this.api.governance.drepsById(segment(drepId)))
    return found && toDrep(found)
  }

  async epochsAfter(epoch: number, count: number): Promise<ChainEpoch[]> {
    const epochs = await this.calls.find(() => this.api.epochsNext(epoch, { count: pageCount(count), page: 1 }))
    return (epochs ?? []).map(toEpoch)
  }

  async blocksAfter(height: number, count: number): Promise<ChainBlock[]> {
    const blocks = await this.calls.find(() => this.api.blocksNext(height, { count: pageCount(count), page: 1 }))
    return (blocks ?? []).map(toBlock)
  }

  async blockTransactions(hashOrHeight: string | number, page: ListPage): Promise<string[] | null> {
    const id = typeof hashOrHeight === 'number' ? hashOrHeight : segment(hashOrHeight)
    return this.calls.find(() => this.api.blocksTxs(id, pagination(page)))
  }

  async epochBlocks(epoch: number, page: ListPage): Promise<string[] | null> {
    return this.calls.find(() => this.api.epochsBlocks(epoch, pagination(page)))
  }

  async addressTransactionPage(address: string, page: ListPage): Promise<ChainAddressTransaction[]> {
    const txs = await this.calls.find(() => this.api.addressesTransactions(segment(address), pagination(page)))
    return (txs ?? []).map(toAddressTransaction)
  }

  async assetHistoryPage(unit: string, page: ListPage): Promise<ChainAssetHistoryEntry[] | null> {
    const history = await this.calls.find(() => this.api.assetsHistory(segment(unit), pagination(page)))
    return history && history.map(toAssetHistoryEntry)
  }

  async pools(page: ListPage): Promise<ChainPoolSummary[]> {
    return (await this.calls.call('read', () => this.api.poolsExtended(pagination(page)))).map(toPoolSummary)
  }

  async dreps(page: ListPage): Promise<ChainDrep[]> {
    return (await this.calls.call('read', () => this.api.governance.dreps(pagination(page)))).map(toDrep)
  }

  async poolDelegators(poolId: string, page: ListPage): Promise<ChainDelegator[] | null> {
    const delegators = await this.calls.find(() => this.api.poolsByIdDelegators(segment(poolId), pagination(page)))
    return delegators && delegators.map(toPoolDelegator)
  }

  async drepDelegators(drepId: string, page: ListPage): Promise<ChainDelegator[] | null> {
    const delegators = await this.calls.find(() => this.api.governance.drepsByIdDelegators(segment(drepId), pagination(page)))
    return delegators && delegators.map(toDrepDelegator)
  }

  async accountAddresses(stakeAddress: string, page: ListPage): Promise<string[] | null> {
    const addresses = await this.calls.find(() => this.api.accountsAddresses(segment(stakeAddress), pagination(page)))
    return addresses && addresses.map(entry => entry.address)
  }

  async network(): Promise<ChainNetwork> {
    return toNetwork(await this.calls.call('read', () => this.api.network()))
  }

  async genesis(): Promise<ChainGenesis> {
    return toGenesis(await this.calls.call('read', () => this.api.genesis()))
  }

  async submit(cbor: Uint8Array): Promise<string> {
    const hash: unknown = await this.calls.call('submit', () => this.api.txSubmit(cbor))
    if (typeof hash !== 'string') throw new ApiError(503, 'UPSTREAM_UNAVAILABLE', 'chain-A upstream accepted the transaction but answered no transaction hash')
    return hash
  }

  /** Every page of a collection, read in order until a short page; null when the first is 404. */
  private async allPages<T>(fetchPage: (pagination: Pagination) => Promise<T[]>): Promise<T[] | null> {
    const rows: T[] = []
    for (let page = 1; ; page++) {
      const batch = await this.calls.find(() => fetchPage({ page, count: PAGE_SIZE }))
      if (batch === null) return page === 1 ? null : rows
      rows.push(...batch)
      if (batch.length < PAGE_SIZE) return rows
    }
  }

  /**
   * The newest `limit` rows. The first page tells whether more exist; the further pages that
   * `limit` needs are then read in parallel.
   */
  private async newestFirst<T>(limit: number, fetchPage: (pagination: Pagination) => Promise<T[]>): Promise<T[] | null> {
    const wanted = Math.max(0, Math.floor(limit))
    if (wanted === 0) return []
    const count = Math.min(wanted, PAGE_SIZE)
    const first = await this.calls.find(() => fetchPage({ page: 1, count, order: 'desc' }))
    if (first === null || wanted <= count || first.length < count) return first && first.slice(0, wanted)
    const more = Array.from({ length: Math.ceil(wanted / count) - 1 }, (_, i) =>
      this.calls.find(() => fetchPage({ page: i + 2, count, order: 'desc' })),
    )
    const rest = await Promise.all(more)
    return [first, ...rest].flatMap(batch => batch ?? []).slice(0, wanted)
  }
}
