import cds from '@sap/cds'
import {
  Transactions, TransactionInputs, TransactionOutputs, TransactionInputAssets, TransactionOutputAssets, TransactionMetadata_,
  Addresses, AddressAssets, AddressUTxOs, AddressTransactions, Accounts, Pools, Dreps, AssetHistory_,
  GetTransactionByHash, GetAddressByBech32, GetUTxOsByAddress, GetAssetsByAddress, GetMetadataByTxHash, GetPoolById,
  GetAccountByStakeAddress, GetDrepById, GetTransactionsByAddress, GetAssetHistory, GetUTxOByRef, GetInputsByTxHash,
  GetOutputsByTxHash, GetInputAssetsByTxHash, GetOutputAssetsByTxHash,
} from '#cds-models/ChainAReadService'
import { CHAIN_CHANGED, chainA, type ChainAService } from '../chains/chain-a/index.ts'
import {
  parseAddress, parseAssetUnit, parseDrepId, parseOutputIndex, parsePoolId, parseStakeAddress, parseTxHash,
} from '../chains/chain-a/identifiers.ts'
import { notFound } from '../lib/errors.ts'
import { onStop } from '../lib/graceful-stop.ts'
import { ChainAFollower } from './follower.ts'
import { followerSettings } from './follower-settings.ts'
import { forgetSyncState } from './follower-store.ts'
import { ChainAIndex, HISTORY_LIMIT } from './indexer.ts'
import { indexForRead, localName, notFoundIn } from './read-index.ts'

const { SELECT } = cds.ql

let sharedIndex: ChainAIndex | undefined
/** One index per process: its single-flight map and freshness memory must be shared by all requests. */
export function chainAIndex(chain?: ChainAService): ChainAIndex {
  if (chain) sharedIndex ??= new ChainAIndex(chain, chain.settings.ttlSeconds)
  if (!sharedIndex) throw new Error('the chain-A read service has not started: it makes the index')
  return sharedIndex
}

export class ChainAReadService extends cds.ApplicationService {
  /** This instance's chain-A follower, when it runs here (CHAIN_A_FOLLOWER_ENABLED). */
  follower?: ChainAFollower

  async init() {
    const chain = await chainA()
    const index = chainAIndex(chain)
    chain.on(CHAIN_CHANGED, () => cds.tx(() => index.purge()))
    chain.on(CHAIN_CHANGED, () => cds.tx(() => forgetSyncState()))
    this.on('READ', '*', indexingFirst(index))
    this.on('READ', '*', answerNotFoundByName)
    this.serveTransactionActions(index)
    this.serveAddressActions(index)
    this.serveRegistryActions(index)
    cds.once('served', () => forgetWhatSubmissionsChange(index))
    cds.once('served', () => this.startFollower(chain, index))
    return super.init()
  }

  /** The follower indexes the chain in the background once the services are served, and stops on shutdown. */
  private startFollower(chain: ChainAService, index: ChainAIndex) {
    if (!followerSettings().enabled) return
    this.follower = new ChainAFollower({ chain, index }).start()
    onStop(() => this.follower?.stop())
  }

  private serveTransactionActions(index: ChainAIndex) {
    const knownTransaction = async (hash: unknown, target: string) => {
      const txHash = parseTxHash(hash, target)
      await index.transaction(txHash)
      const found = await SELECT.one.from(Transactions).where({ hash: txHash })
      if (!found) throw notFound('TRANSACTION_NOT_FOUND', `Transaction ${txHash} is not on chain${inParentheses(await coverage())}`, target)
      return found
    }
    const rowsOf = (entity: any, ...order: string[]) => async (req: cds.Request) => {
      const { hash } = await knownTransaction(req.data.hash, 'hash')
      return SELECT.from(entity).where({ txHash: hash }).orderBy(...order)
    }
    this.on(GetTransactionByHash, req => knownTransaction(req.data.hash, 'hash'))
    this.on(GetMetadataByTxHash, async req => {
      const { hash } = await knownTransaction(req.data.tx_hash, 'tx_hash')
      return SELECT.from(TransactionMetadata_).where({ txHash: hash }).orderBy('label')
    })
    this.on(GetInputsByTxHash, rowsOf(TransactionInputs, 'inputIndex'))
    this.on(GetOutputsByTxHash, rowsOf(TransactionOutputs, 'outputIndex'))
    this.on(GetInputAssetsByTxHash, rowsOf(TransactionInputAssets, 'inputIndex', 'unit'))
    this.on(GetOutputAssetsByTxHash, rowsOf(TransactionOutputAssets, 'outputIndex', 'unit'))
    this.on(GetUTxOByRef, async req => {
      const txHash = parseTxHash(req.data.txHash, 'txHash')
      const outputIndex = parseOutputIndex(req.data.outputIndex)
      await knownTransaction(txHash, 'txHash')
      const address = await index.utxo(txHash, outputIndex)
      if (!address) throw notFound('OUTPUT_NOT_FOUND', `Transaction ${txHash} has no output ${outputIndex}`, 'outputIndex')
      const utxo = await SELECT.one.from(AddressUTxOs).where({ txHash, outputIndex })
      if (!utxo) throw notFound('UTXO_SPENT', `Output ${txHash}#${outputIndex} has been spent`, 'outputIndex')
      return utxo
    })
  }

  private serveAddressActions(index: ChainAIndex) {
    const indexedAddress = async (value: unknown) => {
      const address = parseAddress(value, index.network)
      await index.address(address)
      return address
    }
    this.on(GetAddressByBech32, async req => SELECT.one.from(Addresses).where({ address: await indexedAddress(req.data.address) }))
    this.on(GetUTxOsByAddress, async req => SELECT.from(AddressUTxOs).where({ address: await indexedAddress(req.data.address) }).orderBy('txHash', 'outputIndex'))
    this.on(GetAssetsByAddress, async req => SELECT.from(AddressAssets).where({ address: await indexedAddress(req.data.address) }).orderBy('unit'))
    this.on(GetTransactionsByAddress, async req => {
      const address = parseAddress(req.data.address, index.network)
      await index.addressTransactions(address)
      return SELECT.from(AddressTransactions).where({ address }).orderBy('blockHeight desc', 'txIndex desc').limit(HISTORY_LIMIT)
    })
  }

  private serveRegistryActions(index: ChainAIndex) {
    this.on(GetPoolById, async req => {
      const poolId = parsePoolId(req.data.poolId)
      await index.pool(poolId)
      return (await SELECT.one.from(Pools).where({ poolId })) ?? rejectNotFound('POOL_NOT_FOUND', `Pool ${poolId} is not registered`, 'poolId')
    })
    this.on(GetAccountByStakeAddress, async req => {
      const stakeAddress = parseStakeAddress(req.data.stakeAddress, index.network)
      await index.account(stakeAddress)
      return (await SELECT.one.from(Accounts).where({ stakeAddress })) ?? rejectNotFound('ACCOUNT_NOT_FOUND', `Stake address ${stakeAddress} has no account on chain`, 'stakeAddress')
    })
    this.on(GetDrepById, async req => {
      const drepId = parseDrepId(req.data.drepId)
      await index.drep(drepId)
      return (await SELECT.one.from(Dreps).where({ drepId })) ?? rejectNotFound('DREP_NOT_FOUND', `DRep ${drepId} is not registered`, 'drepId')
    })
    this.on(GetAssetHistory, async req => {
      const unit = parseAssetUnit(req.data.unit)
      await index.assetHistory(unit)
      const history = await SELECT.from(AssetHistory_).where({ unit }).orderBy('position')
      if (!history.length) throw notFound('ASSET_NOT_FOUND', `Asset ${unit} has never been minted${inParentheses(await coverage())}`, 'unit')
      return history
    })
  }
}

/** How far back the upstream's history reaches, when not to the chain's start (the ogmios kind's own index). */
async function coverage(): Promise<string | undefined> {
  try {
    return (await chainA()).port.coverage?.()
  } catch {
    return undefined
  }
}
const inParentheses = (text: string | undefined) => (text ? ` (${text})` : '')

function rejectNotFound(code: string, message: string, target: string): never {
  throw notFound(code, message, target)
}

/**
 * Indexes what a read needs, once every `before` handler (the grant check among them) has let it
 * through. As a `before` handler it would run in parallel with them: a read refused meanwhile is
 * rolled back while the index still queries, and a query whose transaction began during that
 * rollback keeps its connection inside the transaction for good.
 */
function indexingFirst(index: ChainAIndex) {
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- the type CAP's `on` handlers receive
  return async (req: cds.Request, next: Function) => {
    await indexForRead(index, req.query as Parameters<typeof indexForRead>[1])
    return next()
  }
}

/** A keyed read that finds nothing answers 404 with a code naming what is missing. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- the type CAP's `on` handlers receive
async function answerNotFoundByName(req: cds.Request, next: Function) {
  const result = await next()
  const keyed = req.params?.length && (req.query as any).SELECT?.one
  if (keyed && (result === null || result === undefined)) throw notFoundIn(localName(req.target!.name), req.params[req.params.length - 1], await coverage())
  return result
}

/** Transactions submitted through the transaction service change what is cached here. */
function forgetWhatSubmissionsChange(index: ChainAIndex) {
  const transactions = cds.services['ChainATransactionService' as any] as cds.Service | undefined
  transactions?.on('TransactionSubmitted', (msg: any) => index.forgetTransaction(msg.data))
}
