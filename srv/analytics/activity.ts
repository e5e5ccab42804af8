import { bucketStart, type Resolution } from './windows.ts'

/**
 * What the bucket writer folds, the same for both chains: blocks, transactions and contract actions
 * as each chain's source (chain-a-source.ts, chain-b-source.ts) reads them from its follower's
 * index. `foldActivity` turns them into the additive figures of each bucket; the writer stores
 * hours and days, and a 1h window folds its minutes the same way on the fly.
 */

export interface BlockItem { height: number; time: number; producer: string | null; epoch: number | null }

export interface TransactionItem {
  blockHeight: number
  /** Chain B's system transactions: counted apart, never as tx.count. */
  system: boolean
  failed: boolean
  shielded: boolean
  script: boolean
  fee: number | null
  /** Chain A: lovelace in the outputs, and each output's address with its lovelace. */
  outputLovelace?: number
  outputs?: { address: string; lovelace: number }[]
  /** Addresses in inputs or outputs (chain B: unshielded owners). */
  addresses?: string[]
  /** Chain A: mint and burn events, and the assets the transaction moves or mints. */
  mintEvents?: number
  assets?: string[]
}

export interface ActionItem { blockHeight: number; contract: string; kind: 'call' | 'deploy' | 'update' }

export interface Activity { blocks: BlockItem[]; transactions: TransactionItem[]; actions: ActionItem[] }

/** One bucket's figure of a metric (and dimension): the value, how many items, their smallest and largest. */
export interface Figure { value: number; count: number; min?: number; max?: number }

/** Figures of one bucket by `metric` + DIMENSION_SEPARATOR + dimension ('' for the whole chain). */
export type BucketFigures = Map<string, Figure>

export const DIMENSION_SEPARATOR = '\u0000'
export const figureKey = (metric: string, dimension = '') => metric + DIMENSION_SEPARATOR + dimension
export const splitKey = (key: string) => {
  const at = key.indexOf(DIMENSION_SEPARATOR)
  return { metric: key.slice(0, at), dimension: key.slice(at + 1) }
}

/** Figures per bucket of a resolution, from the activity of whole blocks. */
export function foldActivity(activity: Activity, resolution: Resolution): Map<number, BucketFigures> {
  const bucketOfHeight = new Map(activity.blocks.map(block => [block.height, bucketStart(block.time, resolution)]))
  const buckets = new Map<number, BucketFigures>()
  /** Adds an item to a bucket's figure; `ranged` is what its min and max keep (the amount itself when true). */
  const add = (start: number | undefined, metric: string, amount = 1, dimension = '', ranged: boolean | number = false) => {
    if (start === undefined) return
    let figures = buckets.get(start)
    if (!figures) buckets.set(start, (figures = new Map()))
    const key = figureKey(metric, dimension)
    const figure = figures.get(key) ?? { value: 0, count: 0 }
    figure.value += amount
    figure.count += 1
    if (ranged !== false) {
      const item = ranged === true ? amount : ranged
      figure.min = Math.min(figure.min ?? item, item)
      figure.max = Math.max(figure.max ?? item, item)
    }
    figures.set(key, figure)
  }

  for (const block of activity.blocks) {
    const start = bucketOfHeight.get(block.height)
    // The first and last block's time (seconds) give the mean interval over any run of buckets.
    add(start, 'chain.blocks', 1, '', block.time / 1000)
    if (block.epoch !== null) add(start, 'chain.epoch', 0, '', block.epoch)
    if (block.producer) add(start, 'producer.blocks', 1, block.producer)
  }
  for (const tx of activity.transactions) {
    const start = bucketOfHeight.get(tx.blockHeight)
    if (tx.system) {
      add(start, 'tx.system')
      continue
    }
    add(start, 'tx.count')
    if (tx.failed) add(start, 'tx.failed')
    if (tx.shielded) add(start, 'tx.shielded')
    if (tx.script) add(start, 'tx.script')
    if (tx.fee !== null) add(start, 'fee.total', tx.fee, '', true)
    if (tx.outputLovelace !== undefined) add(start, 'volume.output_lovelace', tx.outputLovelace)
    if (tx.mintEvents) add(start, 'asset.mint_events', tx.mintEvents)
    for (const output of tx.outputs ?? []) add(start, 'address.volume', output.lovelace, output.address)
    for (const address of new Set(tx.addresses ?? [])) add(start, 'address.txs', 1, address)
    for (const asset of new Set(tx.assets ?? [])) add(start, 'asset.txs', 1, asset)
  }
  for (const action of activity.actions) {
    const start = bucketOfHeight.get(action.blockHeight)
    add(start, 'contract.actions', 1, action.contract)
    if (action.kind === 'call') {
      add(start, 'contract.calls')
      add(start, 'contract.calls', 1, action.contract)
    }
    if (action.kind === 'deploy') add(start, 'contract.deploys')
  }
  return buckets
}
