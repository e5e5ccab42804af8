import type { Router } from 'express'
import type { Ledger } from '../ledger.ts'
import { badRequest, found, notFound, paginate, paging } from './http.ts'
import { assetJson } from './present.ts'

/** A unit: policy id (28 bytes) followed by an asset name of at most 32 bytes, hex. */
export function assetParameter(value: string): string {
  if (!/^[0-9a-f]{56}([0-9a-f]{2}){0,32}$/i.test(value)) throw badRequest('Invalid or malformed asset format.')
  return value.toLowerCase()
}

/** Native assets. */
export function assetRoutes(router: Router, ledger: Ledger) {
  const asset = (value: string) => found(ledger.assets.get(assetParameter(value)))

  router.get('/assets', (req, res) => {
    res.json(paginate([...ledger.assets.values()], paging(req)).map(a => ({ asset: a.unit, quantity: String(a.quantity) })))
  })
  router.get('/assets/policy/:policy', (req, res) => {
    if (!/^[0-9a-f]{56}$/i.test(req.params.policy)) throw badRequest('Invalid or malformed policy format.')
    const policy = req.params.policy.toLowerCase()
    const assets = [...ledger.assets.values()].filter(a => a.policyId === policy)
    if (assets.length === 0) throw notFound()
    res.json(paginate(assets, paging(req)).map(a => ({ asset: a.unit, quantity: String(a.quantity) })))
  })
  router.get('/assets/:asset', (req, res) => { res.json(assetJson(asset(req.params.asset))) })
  router.get('/assets/:asset/history', (req, res) => {
    res.json(paginate(asset(req.params.asset).history, paging(req)).map(h => ({ tx_hash: h.txHash, action: h.action, amount: String(h.amount) })))
  })
  router.get('/assets/:asset/txs', (req, res) => { res.json(paginate(asset(req.params.asset).txs, paging(req))) })
  router.get('/assets/:asset/addresses', (req, res) => {
    const { unit } = asset(req.params.asset)
    const holders = new Map<string, bigint>()
    for (const output of ledger.unspentWithAsset(unit)) holders.set(output.address, (holders.get(output.address) ?? 0n) + output.value.assets.get(unit)!)
    res.json(paginate([...holders], paging(req)).map(([address, quantity]) => ({ address, quantity: String(quantity) })))
  })
}
