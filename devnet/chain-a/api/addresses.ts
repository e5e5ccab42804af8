import type { Request, Router } from 'express'
import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import { addressText, parseAddress, parseStakeAddress } from '../addresses.ts'
import type { Ledger } from '../ledger.ts'
import { GENESIS } from '../params.ts'
import { addValue, sumValues, toAmounts, zeroValue } from '../values.ts'
import { badRequest, found, paginate, paging } from './http.ts'
import { accountJson, addressSummaryJson, utxoJson } from './present.ts'
import { assetParameter } from './assets.ts'

/** Addresses and stake accounts. */
export function addressRoutes(router: Router, ledger: Ledger) {
  /** A well-formed address of this network that has appeared on chain (else 400 / 404, as Blockfrost). */
  const addressParameter = (value: string) => {
    const address = parseAddress(value)
    if (!address || address.network_id() !== GENESIS.networkId) throw badRequest('Invalid address for this network.')
    const text = addressText(address)
    return { address, text, history: found(ledger.addresses.get(text)) }
  }

  const addressJson = (address: CSL.Address, text: string) => addressSummaryJson(ledger, address, text)

  router.get('/addresses/:address', (req, res) => {
    const { address, text } = addressParameter(req.params.address)
    res.json(addressJson(address, text))
  })
  router.get('/addresses/:address/extended', (req, res) => {
    const { address, text } = addressParameter(req.params.address)
    const json = addressJson(address, text)
    res.json({
      ...json,
      amount: json.amount.map(({ unit, quantity }) => ({
        unit, quantity,
        decimals: unit === 'lovelace' ? 6 : null,
        has_nft_onchain_metadata: unit !== 'lovelace' && ledger.assets.get(unit)?.onchainMetadata != null,
      })),
    })
  })
  router.get('/addresses/:address/total', (req, res) => {
    const { text, history } = addressParameter(req.params.address)
    const outputs = history.outputs.map(ref => ledger.outputs.get(ref)!)
    const sent = zeroValue()
    for (const output of outputs) if (output.spentBy) addValue(sent, output.value)
    res.json({ address: text, received_sum: toAmounts(sumValues(outputs.map(o => o.value))), sent_sum: toAmounts(sent), tx_count: history.txs.length })
  })
  router.get('/addresses/:address/utxos', (req, res) => {
    const { text } = addressParameter(req.params.address)
    res.json(paginate(ledger.unspentAt(text), paging(req)).map(utxoJson))
  })
  router.get('/addresses/:address/utxos/:asset', (req, res) => {
    const { text } = addressParameter(req.params.address)
    const unit = assetParameter(req.params.asset)
    res.json(paginate(ledger.unspentAt(text).filter(o => o.value.assets.has(unit)), paging(req)).map(utxoJson))
  })
  router.get('/addresses/:address/transactions', (req, res) => {
    const { history } = addressParameter(req.params.address)
    const within = blockRange(req)
    const txs = history.txs.map(hash => ledger.txs.get(hash)!).filter(tx => within(tx.included.blockHeight, tx.included.index))
    res.json(paginate(txs, paging(req)).map(tx => ({ tx_hash: tx.hash, tx_index: tx.included.index, block_height: tx.included.blockHeight, block_time: tx.included.blockTime })))
  })

  const accountParameter = (value: string) => {
    const reward = parseStakeAddress(value)
    if (!reward || reward.network_id() !== GENESIS.networkId) throw badRequest('Invalid or malformed stake address.')
    return found(ledger.accounts.get(value))
  }

  router.get('/accounts/:stake', (req, res) => { res.json(accountJson(ledger, accountParameter(req.params.stake))) })
  router.get('/accounts/:stake/addresses', (req, res) => {
    res.json(paginate([...accountParameter(req.params.stake).addresses], paging(req)).map(address => ({ address })))
  })
  router.get('/accounts/:stake/rewards', (req, res) => {
    res.json(paginate(accountParameter(req.params.stake).rewardHistory, paging(req)).map(reward => ({
      epoch: reward.epoch, amount: String(reward.amount), pool_id: ledger.pools.get(reward.pool)!.id, type: reward.type,
    })))
  })
  router.get('/accounts/:stake/delegations', (req, res) => {
    res.json(paginate(accountParameter(req.params.stake).delegations, paging(req)).map(d => ({
      active_epoch: d.activeEpoch, tx_hash: d.txHash, amount: String(d.amount), pool_id: ledger.pools.get(d.pool)!.id,
      tx_slot: d.txSlot, block_time: d.blockTime, block_height: d.blockHeight,
    })))
  })
}

/** Blockfrost's `from`/`to` filters: `<block height>[:<tx index>]`, both inclusive. */
function blockRange(req: Request): (height: number, index: number) => boolean {
  const bound = (name: 'from' | 'to') => {
    const raw = req.query[name]
    if (raw === undefined) return undefined
    const match = typeof raw === 'string' ? /^(\d+)(?::(\d+))?$/.exec(raw) : null
    if (!match) throw badRequest(`querystring/${name} must match format "<block height>[:<transaction index>]"`)
    return { height: Number(match[1]), index: match[2] === undefined ? undefined : Number(match[2]) }
  }
  const from = bound('from')
  const to = bound('to')
  return (height, index) => {
    if (from && (height < from.height || (height === from.height && from.index !== undefined && index < from.index))) return false
    if (to && (height > to.height || (height === to.height && to.index !== undefined && index > to.index))) return false
    return true
  }
}
