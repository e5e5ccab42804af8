import { badInput } from '../lib/errors.ts'

/**
 * The metric catalogue (reference gateway-lanes-analytics.md section 7): each metric's name
 * (`<group>.<name>`), what it measures, its unit, the chains that have it (A: Cardano, B: Midnight),
 * and how a window combines its buckets: `sum` (additive: counts, totals), `ratio` (of two sums),
 * `mean` or `last` (of the bucket values), or `raw` (computed over the window's rows: distinct
 * counts, percentiles, concentration).
 */

export type Chain = 'chain-a' | 'chain-b'
export type Combination = 'sum' | 'ratio' | 'mean' | 'last' | 'raw'

export interface Metric {
  name: string
  description: string
  unit: string
  chains: readonly Chain[]
  combine: Combination
}

const BOTH: readonly Chain[] = ['chain-a', 'chain-b']
const metric = (name: string, description: string, unit: string, chains: readonly Chain[], combine: Combination): Metric => ({ name, description, unit, chains, combine })

export const METRICS: readonly Metric[] = [
  metric('chain.blocks', 'blocks made in the window', 'blocks', BOTH, 'sum'),
  metric('chain.block_interval_avg', 'mean seconds between consecutive blocks', 's', BOTH, 'raw'),
  metric('chain.epoch', 'the current epoch', 'epoch', BOTH, 'last'),
  metric('tx.count', 'transactions (chain B: regular ones; system transactions excluded)', 'transactions', BOTH, 'sum'),
  metric('tx.system', 'system transactions', 'transactions', ['chain-b'], 'sum'),
  metric('tx.tps', 'transactions per second over the window', 'tx/s', BOTH, 'ratio'),
  metric('tx.per_block', 'transactions per block', 'transactions', BOTH, 'ratio'),
  metric('tx.failed', 'failed transactions (chain A: collateral taken; chain B: FAILURE or PARTIAL_SUCCESS)', 'transactions', BOTH, 'sum'),
  metric('tx.failed_ratio', 'failed transactions / transactions', 'ratio', BOTH, 'ratio'),
  metric('tx.shielded', 'regular transactions with shielded (zswap) activity', 'transactions', ['chain-b'], 'sum'),
  metric('tx.shielded_ratio', 'shielded transactions / transactions', 'ratio', ['chain-b'], 'ratio'),
  metric('tx.script', 'transactions running a script (chain A: redeemers; chain B: contract actions)', 'transactions', BOTH, 'sum'),
  metric('contract.calls', 'contract calls', 'calls', ['chain-b'], 'sum'),
  metric('contract.deploys', 'contract deployments', 'deploys', ['chain-b'], 'sum'),
  metric('contract.active', 'distinct contracts with an action', 'contracts', ['chain-b'], 'raw'),
  metric('fee.total', 'fees paid (chain A: lovelace; chain B: DUST, smallest unit)', 'fee unit', BOTH, 'sum'),
  metric('fee.avg', 'mean fee per transaction', 'fee unit', BOTH, 'ratio'),
  metric('fee.p50', 'median fee per transaction', 'fee unit', BOTH, 'raw'),
  metric('fee.p95', '95th percentile of the fee per transaction', 'fee unit', BOTH, 'raw'),
  metric('volume.output_lovelace', 'lovelace in transaction outputs (change included)', 'lovelace', ['chain-a'], 'sum'),
  metric('asset.mint_events', 'mint and burn events of native assets', 'events', ['chain-a'], 'sum'),
  metric('address.active', 'distinct addresses in inputs or outputs (chain B: unshielded owners)', 'addresses', BOTH, 'raw'),
  metric('producer.count', 'distinct block producers', 'producers', BOTH, 'raw'),
  metric('producer.nakamoto', 'fewest producers with more than half of the blocks', 'producers', BOTH, 'raw'),
  metric('producer.gini', 'Gini coefficient of blocks per producer', 'ratio', BOTH, 'raw'),
  metric('producer.hhi', 'Herfindahl-Hirschman index of blocks per producer', 'index', BOTH, 'raw'),
  metric('sync.lag_blocks', 'blocks between the chain tip and the indexed height', 'blocks', BOTH, 'last'),
  metric('sync.reorgs', 'reorganisations followed', 'reorgs', BOTH, 'sum'),
]

const BY_NAME = new Map(METRICS.map(entry => [entry.name, entry]))

/** A metric by name; anything else is 400 UNKNOWN_METRIC listing the valid names. */
export function metricNamed(name: unknown): Metric {
  const found = typeof name === 'string' ? BY_NAME.get(name) : undefined
  if (!found) throw badInput('UNKNOWN_METRIC', `metric must be one of ${METRICS.map(entry => entry.name).join(', ')}`, 'metric')
  return found
}
