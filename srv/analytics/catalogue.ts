import { badInput } from '../lib/errors.ts'

/**
 * The metric catalogue (reference gateway-lanes-analytics.md section 7): each metric's name
 * (`<group>.<name>`), what it measures, its unit, and the chains that have it. How each is worked
 * out over a window is in figures.ts.
 */

export type Chain = 'chain-a' | 'chain-b'

export interface Metric {
  name: string
  description: string
  unit: string
  chains: readonly Chain[]
}

const BOTH: readonly Chain[] = ['chain-a', 'chain-b']
const metric = (name: string, description: string, unit: string, chains: readonly Chain[]): Metric => ({ name, description, unit, chains })

export const METRICS: readonly Metric[] = [
  metric('chain.blocks', 'blocks made in the window', 'blocks', BOTH),
  metric('chain.block_interval_avg', 'mean seconds between consecutive blocks', 's', BOTH),
  metric('chain.epoch', 'the current epoch', 'epoch', BOTH),
  metric('tx.count', 'transactions (chain B: regular ones; system transactions excluded)', 'transactions', BOTH),
  metric('tx.system', 'system transactions', 'transactions', ['chain-b']),
  metric('tx.tps', 'transactions per second over the window', 'tx/s', BOTH),
  metric('tx.per_block', 'transactions per block', 'transactions', BOTH),
  metric('tx.failed', 'failed transactions (chain A: collateral taken; chain B: FAILURE or PARTIAL_SUCCESS)', 'transactions', BOTH),
  metric('tx.failed_ratio', 'failed transactions / transactions', 'ratio', BOTH),
  metric('tx.shielded', 'regular transactions with shielded (zswap) activity', 'transactions', ['chain-b']),
  metric('tx.shielded_ratio', 'shielded transactions / transactions', 'ratio', ['chain-b']),
  metric('tx.script', 'transactions running a script (chain A: redeemers; chain B: contract actions)', 'transactions', BOTH),
  metric('contract.calls', 'contract calls', 'calls', ['chain-b']),
  metric('contract.deploys', 'contract deployments', 'deploys', ['chain-b']),
  metric('contract.active', 'distinct contracts with an action', 'contracts', ['chain-b']),
  metric('fee.total', 'fees paid (chain A: lovelace; chain B: DUST, smallest unit)', 'fee unit', BOTH),
  metric('fee.avg', 'mean fee per transaction', 'fee unit', BOTH),
  metric('fee.min', 'smallest fee of a transaction', 'fee unit', BOTH),
  metric('fee.max', 'largest fee of a transaction', 'fee unit', BOTH),
  metric('fee.p50', 'median fee per transaction', 'fee unit', BOTH),
  metric('fee.p95', '95th percentile of the fee per transaction', 'fee unit', BOTH),
  metric('volume.output_lovelace', 'lovelace in transaction outputs (change included)', 'lovelace', ['chain-a']),
  metric('asset.mint_events', 'mint and burn events of native assets', 'events', ['chain-a']),
  metric('asset.active', 'distinct native assets in transaction outputs', 'assets', ['chain-a']),
  metric('address.active', 'distinct addresses in inputs or outputs (chain B: unshielded owners)', 'addresses', BOTH),
  metric('producer.count', 'distinct block producers', 'producers', BOTH),
  metric('producer.nakamoto', 'fewest producers with more than half of the blocks', 'producers', BOTH),
  metric('producer.gini', 'Gini coefficient of blocks per producer', 'ratio', BOTH),
  metric('producer.hhi', 'Herfindahl-Hirschman index of blocks per producer', 'index', BOTH),
  metric('producer.top10_share', 'share of the blocks made by the 10 largest producers', 'ratio', BOTH),
  metric('sync.lag_blocks', 'blocks between the chain tip and the indexed height', 'blocks', BOTH),
  metric('sync.reorgs', 'reorganisations followed', 'reorgs', BOTH),
]

const BY_NAME = new Map(METRICS.map(entry => [entry.name, entry]))

/** A metric by name; anything else is 400 UNKNOWN_METRIC listing the valid names. */
export function metricNamed(name: unknown): Metric {
  const found = typeof name === 'string' ? BY_NAME.get(name) : undefined
  if (!found) throw badInput('UNKNOWN_METRIC', `metric must be one of ${METRICS.map(entry => entry.name).join(', ')}`, 'metric')
  return found
}
