import type { Router } from 'express'
import type { Ledger } from '../ledger.ts'
import type { Block } from '../types.ts'
import { badRequest, found, numberParameter, paginate, paging } from './http.ts'
import { blockJson, epochJson, genesisJson, networkJson, parametersJson } from './present.ts'

/** Root, health, genesis, network, blocks and epochs. */
export function chainRoutes(router: Router, ledger: Ledger, url: () => string) {
  router.get('/', (_req, res) => { res.json({ url: url() + '/', version: '0.1.0' }) })
  router.get('/health', (_req, res) => { res.json({ is_healthy: true }) })
  router.get('/health/clock', (_req, res) => { res.json({ server_time: Date.now() }) })
  router.get('/genesis', (_req, res) => { res.json(genesisJson(ledger)) })
  router.get('/network', (_req, res) => { res.json(networkJson(ledger)) })

  const blockParameter = (value: string): Block => {
    if (/^[0-9a-f]{64}$/i.test(value)) return found(ledger.block(value.toLowerCase()))
    if (/^\d+$/.test(value)) return found(ledger.block(numberParameter(value, 'block number')))
    throw badRequest('Invalid or malformed block hash or number.')
  }

  router.get('/blocks/latest', (_req, res) => { res.json(blockJson(ledger, ledger.tip)) })
  router.get('/blocks/latest/txs', (req, res) => { res.json(paginate(ledger.tip.txs, paging(req))) })
  router.get('/blocks/slot/:slot', (req, res) => {
    const slot = numberParameter(req.params.slot, 'slot number')
    res.json(blockJson(ledger, found(ledger.blocks.find(block => block.slot === slot))))
  })
  router.get('/blocks/:block', (req, res) => { res.json(blockJson(ledger, blockParameter(req.params.block))) })
  router.get('/blocks/:block/txs', (req, res) => { res.json(paginate(blockParameter(req.params.block).txs, paging(req))) })
  router.get('/blocks/:block/next', (req, res) => {
    const { count, page } = paging(req)
    const from = blockParameter(req.params.block).height + 1 + (page - 1) * count
    res.json(ledger.blocks.slice(from, from + count).map(block => blockJson(ledger, block)))
  })
  router.get('/blocks/:block/previous', (req, res) => {
    const { count, page } = paging(req)
    const to = blockParameter(req.params.block).height - (page - 1) * count
    res.json(to <= 0 ? [] : ledger.blocks.slice(Math.max(0, to - count), to).map(block => blockJson(ledger, block)))
  })

  const epochParameter = (value: string) => found(ledger.epochs.get(numberParameter(value, 'epoch number')))

  router.get('/epochs/latest', (_req, res) => { res.json(epochJson(ledger, ledger.latestEpoch)) })
  router.get('/epochs/latest/parameters', (_req, res) => { res.json(parametersJson(ledger, ledger.latestEpoch)) })
  router.get('/epochs/:epoch', (req, res) => { res.json(epochJson(ledger, epochParameter(req.params.epoch))) })
  /** Epochs are numbered from 0 without gaps; both lists answer oldest first, as the block lists do. */
  const epochsFrom = (from: number, to: number) =>
    Array.from({ length: Math.max(0, Math.min(to, ledger.currentEpoch + 1) - from) }, (_, i) => epochJson(ledger, ledger.epochs.get(from + i)!))
  router.get('/epochs/:epoch/next', (req, res) => {
    const { count, page } = paging(req)
    const from = epochParameter(req.params.epoch).epoch + 1 + (page - 1) * count
    res.json(epochsFrom(from, from + count))
  })
  router.get('/epochs/:epoch/previous', (req, res) => {
    const { count, page } = paging(req)
    const to = epochParameter(req.params.epoch).epoch - (page - 1) * count
    res.json(epochsFrom(Math.max(0, to - count), to))
  })
  router.get('/epochs/:epoch/parameters', (req, res) => { res.json(parametersJson(ledger, epochParameter(req.params.epoch))) })
  router.get('/epochs/:epoch/blocks', (req, res) => { res.json(paginate(epochParameter(req.params.epoch).blocks, paging(req))) })
}

