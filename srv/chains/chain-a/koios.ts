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
import * as map from './koios-mappers.ts'
import { UpstreamCalls } from './upstream-calls.ts'
import { upstreamStatusError, type UpstreamOperation } from './upstream-errors.ts'

/** What the adapter needs of the chain-a options. */
export type KoiosConfig = Pick<ChainAConfig, 'network' | 'koiosUrl' | 'koiosToken' | 'timeoutMs' | 'retries'>

/** Koios's largest page (PostgREST's row limit there). */
const KOIOS_PAGE = 1000
/** Koios answers at most this many items of a list given in a body (hashes, addresses, ids). */
const KOIOS_BATCH = 50
/** The most calls a transaction read makes to find who spent its outputs (docs/chain-a-backends.md). */
const SPENDER_SEARCH_CALLS = 8
const HOSTED: Record<string, string> = {
  mainnet: 'https://api.koios.rest/api/v1',
  preprod: 'https://preprod.koios.rest/api/v1',
  preview: 'https://preview.koios.rest/api/v1',
}
const UNREACHABLE = /ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|EPIPE|UND_ERR_SOCKET|other side closed/

type Query = Record<string, string | number | undefined>

/** An answer of Koios that is not a success. */
class KoiosStatus extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.status = status
  }
}

/** Koios's base URL: the configured one, else the hosted one of the network. */
export function koiosBaseUrl(config: Pick<ChainAConfig, 'network' | 'koiosUrl'>): string {
  const url = config.koiosUrl ?? HOSTED[config.network]
  if (!url) throw new ApiError(503, 'UPSTREAM_NOT_CONFIGURED', `chain-A network '${config.network}' has no hosted Koios (expected ${Object.keys(HOSTED).join(', ')}); set KOIOS_URL`)
  return url.replace(/\/+$/, '')
}

/**
 * The chain-A port over Koios's REST API v1 (hosted Koios, an instance of one's own, or the devnet's
 * compatible API), a bearer token optional. Lists are read with Koios's paging (`offset`, `limit`,
 * `order`), lists of hashes in batches; a 429 is honoured like Blockfrost's.
 *
 * Koios lists an address's or a block's transactions without their index in the block; it is read
 * from tx_info, and an address's history is ordered by height and index within each page it reads.
 */
export class KoiosAdapter implements ChainAPort {
  readonly networkName: string
  private readonly baseUrl: string
  private readonly token?: string
  private readonly timeoutMs: number
  private readonly calls: UpstreamCalls

  constructor(config: KoiosConfig) {
    this.networkName = config.network
    this.baseUrl = koiosBaseUrl(config)
    this.token = config.koiosToken || undefined
    this.timeoutMs = config.timeoutMs
    this.calls = new UpstreamCalls(config.retries, (error, operation, remainingBackoff) => this.translate(error, operation, remainingBackoff))
  }

  async tip(): Promise<ChainBlock> {
    const [tip] = await this.read<{ hash: string }>('/tip')
    if (!tip) throw new ApiError(503, 'UPSTREAM_UNAVAILABLE', 'chain-A upstream answered no tip')
    const block = await this.block(tip.hash)
    if (!block) throw new ApiError(503, 'UPSTREAM_UNAVAILABLE', `chain-A upstream does not know its own tip ${tip.hash}`)
    return block
  }

  async block(hashOrHeight: string | number): Promise<ChainBlock | null> {
    const hash = await this.blockHash(hashOrHeight)
    if (!hash) return null
    const [block] = await this.read<map.KoiosBlock>('/block_info', {}, { _block_hashes: [hash] })
    return block ? map.toBlock(block, block.block_height + (block.num_confirmations ?? 0)) : null
  }

  async epoch(epoch: number): Promise<ChainEpoch | null> {
    const [found] = await this.read<map.KoiosEpoch>('/epoch_info', { _epoch_no: epoch })
    return found ? map.toEpoch(found) : null
  }

  async latestEpoch(): Promise<ChainEpoch> {
    const epoch = await this.epoch(await this.tipEpoch())
    if (!epoch) throw new ApiError(503, 'UPSTREAM_UNAVAILABLE', 'chain-A upstream answered no current epoch')
    return epoch
  }

  async protocolParameters(epoch?: number): Promise<ChainProtocolParameters | null> {
    const [params] = await this.read<map.KoiosParameters>('/epoch_params', { _epoch_no: epoch ?? (await this.tipEpoch()) })
    return params ? map.toProtocolParameters(params) : null
  }

  async transaction(hash: string): Promise<ChainTransaction | null> {
    const [tx] = await this.read<map.KoiosTransaction>('/tx_info', {}, {
      _tx_hashes: [hash], _inputs: true, _metadata: true, _assets: true, _withdrawals: true, _certs: true, _scripts: true, _bytecode: false, _governance: false,
    })
    return tx ? map.toTransaction(tx, await this.spenders(tx)) : null
  }

  async address(address: string): Promise<ChainAddress | null> {
    const [found] = await this.read<map.KoiosAddress>('/address_info', {}, { _addresses: [address] })
    return found ? map.toAddress(found) : null
  }

  async addressUtxos(address: string): Promise<ChainUtxo[]> {
    const utxos = await this.readAll<map.KoiosUtxo>('/address_utxos', {}, { _addresses: [address], _extended: true })
    const hashes = await this.blockHashesAt(utxos.map(utxo => utxo.block_height))
    return utxos.map(utxo => map.toUtxo(utxo, hashes.get(utxo.block_height) ?? ''))
  }

  async addressTransactions(address: string, limit: number): Promise<ChainAddressTransaction[]> {
    const wanted = Math.max(0, Math.floor(limit))
    if (wanted === 0) return []
    const body = { _addresses: [address] }
    let rows = await this.read<AddressTx>('/address_txs', { order: 'block_height.desc', limit: Math.min(wanted, KOIOS_PAGE) }, body)
    // The last block may hold more of the address's transactions than the limit let in: all of it is read, then cut by index.
    if (rows.length === Math.min(wanted, KOIOS_PAGE)) {
      const lowest = rows.at(-1)!.block_height
      rows = [...rows.filter(row => row.block_height > lowest), ...(await this.read<AddressTx>('/address_txs', { block_height: `eq.${lowest}` }, body))]
    }
    return (await this.withIndexes(rows)).sort(newestFirst).slice(0, wanted)
  }

  async assetHistory(unit: string, limit: number): Promise<ChainAssetHistoryEntry[] | null> {
    const history = await this.mintingHistory(unit)
    return history && history.reverse().slice(0, Math.max(0, Math.floor(limit)))
  }

  async account(stakeAddress: string): Promise<ChainAccount | null> {
    const [found] = await this.read<map.KoiosAccount>('/account_info', {}, { _stake_addresses: [stakeAddress] })
    return found ? map.toAccount(found) : null
  }

  async pool(poolId: string): Promise<ChainPool | null> {
    const [found] = await this.read<map.KoiosPool>('/pool_info', {}, { _pool_bech32_ids: [poolId] })
    if (!found) return null
    const minted = await this.read<{ hash: string }>('/blocks', { pool: `eq.${poolId}`, epoch_no: `eq.${await this.tipEpoch()}`, select: 'hash', limit: KOIOS_PAGE })
    return map.toPool(found, minted.length)
  }

  async drep(drepId: string): Promise<ChainDrep | null> {
    const [found] = await this.read<map.KoiosDrep>('/drep_info', {}, { _drep_ids: [drepId] })
    return found ? map.toDrep(found) : null
  }

  async epochsAfter(epoch: number, count: number): Promise<ChainEpoch[]> {
    const epochs = await this.read<map.KoiosEpoch>('/epoch_info', { epoch_no: `gt.${epoch}`, order: 'epoch_no.asc', limit: pageCount(count) })
    return epochs.map(map.toEpoch)
  }

  async blocksAfter(height: number, count: number): Promise<ChainBlock[]> {
    const listed = await this.read<{ hash: string }>('/blocks', { block_height: `gt.${height}`, order: 'block_height.asc', limit: pageCount(count), select: 'hash' })
    // The list lacks a block's output, fees and confirmations: block_info has them.
    const blocks = await this.batched<map.KoiosBlock, string>('/block_info', '_block_hashes', listed.map(block => block.hash))
    return blocks.sort((a, b) => a.block_height - b.block_height).map(block => map.toBlock(block, block.block_height))
  }

  async blockTransactions(hashOrHeight: string | number, page: ListPage): Promise<string[] | null> {
    const hash = await this.blockHash(hashOrHeight)
    if (!hash) return null
    const rows = await this.readAll<AddressTx & { block_hash: string }>('/block_txs', {}, { _block_hashes: [hash] })
    if (!rows.length && !(await this.read('/block_info', { select: 'hash' }, { _block_hashes: [hash] })).length) return null
    const inOrder = (await this.withIndexes(rows)).sort((a, b) => a.txIndex - b.txIndex).map(tx => tx.txHash)
    return pageOf(inOrder, page)
  }

  async epochBlocks(epoch: number, page: ListPage): Promise<string[] | null> {
    if (!(await this.epoch(epoch))) return null
    const blocks = await this.read<{ hash: string }>('/blocks', { epoch_no: `eq.${epoch}`, select: 'hash', ...listOptions('block_height', page) })
    return blocks.map(block => block.hash)
  }

  async addressTransactionPage(address: string, page: ListPage): Promise<ChainAddressTransaction[]> {
    const rows = await this.read<AddressTx>('/address_txs', { ...listOptions('block_height', page, 'tx_hash') }, { _addresses: [address] })
    return (await this.withIndexes(rows)).sort(page.order === 'asc' ? oldestFirst : newestFirst)
  }

  async assetHistoryPage(unit: string, page: ListPage): Promise<ChainAssetHistoryEntry[] | null> {
    const history = await this.mintingHistory(unit)
    return history && pageOf(history, page)
  }

  async pools(page: ListPage): Promise<ChainPoolSummary[]> {
    const listed = page.order === 'asc'
      ? await this.read<{ pool_id_bech32: string }>('/pool_list', { select: 'pool_id_bech32', offset: (page.page - 1) * LIST_PAGE_SIZE, limit: LIST_PAGE_SIZE })
      : pageOf(await this.readAll<{ pool_id_bech32: string }>('/pool_list', { select: 'pool_id_bech32' }), page)
    const pools = await this.batched<map.KoiosPool, string>('/pool_info', '_pool_bech32_ids', listed.map(pool => pool.pool_id_bech32))
    const byId = new Map(pools.map(pool => [pool.pool_id_bech32, pool]))
    return listed.flatMap(({ pool_id_bech32 }) => (byId.has(pool_id_bech32) ? [map.toPoolSummary(byId.get(pool_id_bech32)!)] : []))
  }

  async dreps(page: ListPage): Promise<ChainDrep[]> {
    const listed = page.order === 'asc'
      ? await this.read<{ drep_id: string }>('/drep_list', { select: 'drep_id', offset: (page.page - 1) * LIST_PAGE_SIZE, limit: LIST_PAGE_SIZE })
      : pageOf(await this.readAll<{ drep_id: string }>('/drep_list', { select: 'drep_id' }), page)
    const dreps = await this.batched<map.KoiosDrep, string>('/drep_info', '_drep_ids', listed.map(drep => drep.drep_id))
    const byId = new Map(dreps.map(drep => [drep.drep_id, drep]))
    return listed.flatMap(({ drep_id }) => (byId.has(drep_id) ? [map.toDrep(byId.get(drep_id)!)] : []))
  }

  async poolDelegators(poolId: string, page: ListPage): Promise<ChainDelegator[] | null> {
    const delegators = await this.read<{ stake_address: string; amount: string }>('/pool_delegators', { _pool_bech32: poolId, ...listOptions('stake_address', page) })
    if (!delegators.length && !(await this.read('/pool_info', {}, { _pool_bech32_ids: [poolId] })).length) return null
    return delegators.map(delegator => ({ stakeAddress: delegator.stake_address, amount: delegator.amount }))
  }

  async drepDelegators(drepId: string, page: ListPage): Promise<ChainDelegator[] | null> {
    const delegators = await this.read<{ stake_address: string; amount: string }>('/drep_delegators', { _drep_id: drepId, ...listOptions('stake_address', page) })
    if (!delegators.length && !(await this.read('/drep_info', {}, { _drep_ids: [drepId] })).length) return null
    return delegators.map(delegator => ({ stakeAddress: delegator.stake_address, amount: delegator.amount }))
  }

  async accountAddresses(stakeAddress: string, page: ListPage): Promise<string[] | null> {
    const [found] = await this.read<{ addresses: string[] }>('/account_addresses', {}, { _stake_addresses: [stakeAddress], _empty: true })
    return found ? pageOf(found.addresses, page) : null
  }

  async network(): Promise<ChainNetwork> {
    const epoch = await this.tipEpoch()
    const [[totals], genesis, [current]] = await Promise.all([
      this.read<map.KoiosTotals>('/totals', { _epoch_no: epoch }),
      this.read<map.KoiosGenesis>('/genesis'),
      this.read<map.KoiosEpoch>('/epoch_info', { _epoch_no: epoch }),
    ])
    if (!totals || !genesis[0]) throw new ApiError(503, 'UPSTREAM_UNAVAILABLE', 'chain-A upstream answered no supply figures')
    return map.toNetwork(totals, String(genesis[0].maxlovelacesupply), current?.active_stake ?? null)
  }

  async genesis(): Promise<ChainGenesis> {
    const [genesis] = await this.read<map.KoiosGenesis>('/genesis')
    if (!genesis) throw new ApiError(503, 'UPSTREAM_UNAVAILABLE', 'chain-A upstream answered no genesis')
    return map.toGenesis(genesis)
  }

  async submit(cbor: Uint8Array): Promise<string> {
    const hash = await this.calls.call('submit', () => this.request<unknown>('POST', '/submittx', {}, Buffer.from(cbor), 'application/cbor'))
    if (typeof hash !== 'string') throw new ApiError(503, 'UPSTREAM_UNAVAILABLE', 'chain-A upstream accepted the transaction but answered no transaction hash')
    return hash
  }

  private async tipEpoch(): Promise<number> {
    const [tip] = await this.read<{ epoch_no: number }>('/tip')
    if (!tip) throw new ApiError(503, 'UPSTREAM_UNAVAILABLE', 'chain-A upstream answered no tip')
    return tip.epoch_no
  }

  private async blockHash(hashOrHeight: string | number): Promise<string | undefined> {
    if (typeof hashOrHeight === 'string' && !/^\d+$/.test(hashOrHeight)) return hashOrHeight
    const [block] = await this.read<{ hash: string }>('/blocks', { block_height: `eq.${Number(hashOrHeight)}`, select: 'hash' })
    return block?.hash
  }

  /** The hashes of the blocks at these heights. */
  private async blockHashesAt(heights: number[]): Promise<Map<number, string>> {
    const distinct = [...new Set(heights)]
    const hashes = new Map<number, string>()
    for (let at = 0; at < distinct.length; at += KOIOS_BATCH) {
      const blocks = await this.read<{ hash: string; block_height: number }>('/blocks', { block_height: `in.(${distinct.slice(at, at + KOIOS_BATCH).join(',')})`, select: 'hash,block_height' })
      for (const block of blocks) hashes.set(block.block_height, block.hash)
    }
    return hashes
  }

  /** The transactions with their index in their block (tx_info tells it; the lists do not). */
  private async withIndexes(rows: AddressTx[]): Promise<ChainAddressTransaction[]> {
    const infos = await this.batched<{ tx_hash: string; tx_block_index: number }, string>('/tx_info', '_tx_hashes', rows.map(row => row.tx_hash), { select: 'tx_hash,tx_block_index' }, {
      _inputs: false, _metadata: false, _assets: false, _withdrawals: false, _certs: false, _scripts: false, _bytecode: false,
    })
    const index = new Map(infos.map(info => [info.tx_hash, info.tx_block_index]))
    return rows.map(row => ({ txHash: row.tx_hash, txIndex: index.get(row.tx_hash) ?? 0, blockHeight: row.block_height, blockTime: row.block_time }))
  }

  /**
   * Who spent the transaction's outputs, by output index: Koios tells whether an output is spent
   * (utxo_info), not by whom; the spender is the transaction of the output's address, from the
   * output's block on, that has it among its inputs.
   */
  private async spenders(tx: map.KoiosTransaction): Promise<Map<number, string>> {
    const refs = tx.outputs.map(output => `${tx.tx_hash}#${output.tx_index}`)
    const outputs = await this.batched<{ tx_index: number; address: string; is_spent: boolean }, string>('/utxo_info', '_utxo_refs', refs, {}, { _extended: false })
    const spentAt = new Map<string, Set<number>>()
    for (const output of outputs) if (output.is_spent) spentAt.set(output.address, (spentAt.get(output.address) ?? new Set()).add(output.tx_index))
    const spenders = new Map<number, string>()
    // One read must not cost the upstream without bound (a busy address has many later transactions):
    // the search makes at most SPENDER_SEARCH_CALLS calls, the oldest candidates first; a spender it
    // does not reach stays unknown (null).
    let calls = 0
    for (const [address, indexes] of spentAt) {
      if (calls >= SPENDER_SEARCH_CALLS) break
      calls++
      const later = await this.read<AddressTx>('/address_txs', { order: 'block_height.asc', limit: KOIOS_PAGE }, { _addresses: [address], _after_block_height: tx.block_height })
      const candidates = later.map(row => row.tx_hash).filter(hash => hash !== tx.tx_hash)
      for (let at = 0; at < candidates.length && indexes.size && calls < SPENDER_SEARCH_CALLS; at += KOIOS_BATCH, calls++) {
        const inputs = await this.read<{ tx_hash: string; inputs: { tx_hash: string; tx_index: number }[] }>('/tx_info', { select: 'tx_hash,inputs' }, {
          _tx_hashes: candidates.slice(at, at + KOIOS_BATCH), _inputs: true, _metadata: false, _assets: false, _withdrawals: false, _certs: false, _scripts: false, _bytecode: false,
        })
        for (const candidate of inputs) {
          for (const input of candidate.inputs) {
            if (input.tx_hash !== tx.tx_hash || !indexes.has(input.tx_index)) continue
            spenders.set(input.tx_index, candidate.tx_hash)
            indexes.delete(input.tx_index)
          }
        }
      }
    }
    return spenders
  }

  /** An asset's mints and burns in chain order; null when it was never minted. */
  private async mintingHistory(unit: string): Promise<ChainAssetHistoryEntry[] | null> {
    const [found] = await this.read<{ minting_txs: map.KoiosMintingTx[] | null }>('/asset_history', { _asset_policy: unit.slice(0, 56), _asset_name: unit.slice(56) })
    if (!found?.minting_txs?.length) return null
    return [...found.minting_txs].sort((a, b) => a.block_time - b.block_time).map(map.toAssetHistoryEntry)
  }

  /** A list given in the body, read in batches Koios takes. */
  private async batched<T, Item>(path: string, field: string, items: Item[], query: Query = {}, body: object = {}): Promise<T[]> {
    const rows: T[] = []
    for (let at = 0; at < items.length; at += KOIOS_BATCH) rows.push(...(await this.read<T>(path, query, { ...body, [field]: items.slice(at, at + KOIOS_BATCH) })))
    return rows
  }

  /** Every row of a list, page by page. */
  private async readAll<T>(path: string, query: Query = {}, body?: object): Promise<T[]> {
    const rows: T[] = []
    for (let offset = 0; ; offset += KOIOS_PAGE) {
      const page = await this.read<T>(path, { ...query, offset, limit: KOIOS_PAGE }, body)
      rows.push(...page)
      if (page.length < KOIOS_PAGE) return rows
    }
  }

  /** A read: GET with the query, or POST with the body (Koios's RPC form); its rows. */
  private read<T>(path: string, query: Query = {}, body?: object): Promise<T[]> {
    return this.calls.call('read', async () => {
      const rows = await this.request<unknown>(body ? 'POST' : 'GET', path, query, body && Buffer.from(JSON.stringify(body)), 'application/json')
      if (!Array.isArray(rows)) throw new KoiosStatus(502, `${path} answered what is not a list`)
      return rows as T[]
    })
  }

  private async request<T>(method: 'GET' | 'POST', path: string, query: Query, body: Buffer | undefined, contentType: string): Promise<T> {
    const search = new URLSearchParams()
    for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, String(value))
    const url = `${this.baseUrl}${path}${search.size ? `?${search}` : ''}`
    const response = await fetch(url, {
      method,
      headers: { accept: 'application/json', ...(body ? { 'content-type': contentType } : {}), ...(this.token ? { authorization: `Bearer ${this.token}` } : {}) },
      body: body && new Uint8Array(body),
      signal: AbortSignal.timeout(this.timeoutMs),
    })
    this.calls.noteBackoff(response.status, response.headers.get('retry-after'))
    const text = await response.text()
    if (!response.ok) throw new KoiosStatus(response.status, koiosMessage(text) || response.statusText)
    try {
      return JSON.parse(text) as T
    } catch {
      throw new KoiosStatus(502, `${path} answered what is not JSON`)
    }
  }

  private translate(error: unknown, operation: UpstreamOperation, remainingBackoff: (status: number) => number | undefined): unknown {
    if (error instanceof KoiosStatus) return upstreamStatusError(error.status, operation, error.message, remainingBackoff(error.status))
    const name = (error as Error)?.name
    if (name === 'TimeoutError' || name === 'AbortError') return new ApiError(503, 'UPSTREAM_TIMEOUT', `chain-A upstream did not answer within ${this.timeoutMs} ms`)
    const cause = (error as { cause?: { code?: string; message?: string } })?.cause
    const reason = `${cause?.code ?? ''} ${cause?.message ?? ''} ${(error as Error)?.message ?? ''}`
    // fetch's failures are TypeErrors (of the realm fetch runs in: compared by name)
    if (name === 'TypeError' && UNREACHABLE.test(reason)) return new ApiError(503, 'UPSTREAM_UNAVAILABLE', `chain-A upstream is unreachable (${cause?.code ?? 'connection failed'})`)
    if (name === 'TypeError') return new ApiError(503, 'UPSTREAM_UNAVAILABLE', `chain-A upstream answered unreadably (${(error as Error).message})`)
    return error
  }
}

interface AddressTx { tx_hash: string; block_height: number; block_time: number }

const pageCount = (count: number) => Math.min(LIST_PAGE_SIZE, Math.max(1, Math.floor(count)))
const newestFirst = (a: ChainAddressTransaction, b: ChainAddressTransaction) => b.blockHeight - a.blockHeight || b.txIndex - a.txIndex
const oldestFirst = (a: ChainAddressTransaction, b: ChainAddressTransaction) => a.blockHeight - b.blockHeight || a.txIndex - b.txIndex

/** Koios's paging of a list in the port's order: `column` (and a tie-breaker) ascending or descending. */
function listOptions(column: string, { page, order }: ListPage, tieBreaker?: string): Query {
  const by = [column, tieBreaker].filter(Boolean).map(name => `${name}.${order}`).join(',')
  return { order: by, offset: (page - 1) * LIST_PAGE_SIZE, limit: LIST_PAGE_SIZE }
}

/** One page of a list held whole, in the port's order. */
function pageOf<T>(items: T[], { page, order }: ListPage): T[] {
  const ordered = order === 'asc' ? items : [...items].reverse()
  return ordered.slice((page - 1) * LIST_PAGE_SIZE, page * LIST_PAGE_SIZE)
}

/** PostgREST's error body names the problem in `message`; other answers are text. */
function koiosMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { message?: unknown; hint?: unknown }
    if (typeof body?.message === 'string') return body.message
  } catch {
    // not JSON: the text itself
  }
  return text.slice(0, 500)
}
