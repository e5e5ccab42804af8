import cds from '@sap/cds'
import { SyncState as ChainASyncState } from '#cds-models/chaina'
import { SyncState as ChainBSyncState } from '#cds-models/chainb'
import { badInput } from '../lib/errors.ts'
import { SOURCES, foldChain } from './bucket-writer.ts'

const { UPDATE } = cds.ql

/** The operator's internals: folding the buckets again, pausing and resuming a chain's follower. */

const CHAINS = SOURCES.map(source => source.chain)

function chainNamed(value: unknown, { optional = false } = {}) {
  if (optional && (value === null || value === undefined)) return undefined
  const source = SOURCES.find(candidate => candidate.chain === value)
  if (!source) throw badInput('UNKNOWN_CHAIN', `chain must be one of ${CHAINS.join(', ')}`, 'chain')
  return source
}

/** Folds the buckets of one chain (or both) again from a time; everything indexed when none is given. */
export async function rebuild(chain: unknown, fromTime: unknown) {
  const only = chainNamed(chain, { optional: true })
  const from = fromTime === null || fromTime === undefined ? 0 : new Date(fromTime as string).getTime()
  if (Number.isNaN(from)) throw badInput('INVALID_PARAMETER', 'fromTime must be a timestamp', 'fromTime')
  const outcomes = []
  for (const source of only ? [only] : SOURCES) outcomes.push(await foldChain(source, Date.now(), { from }))
  return outcomes
}

/** Pauses (or resumes) a chain's follower on every instance: it reads nothing until resumed. */
export async function setFollowerPaused(chain: unknown, paused: boolean) {
  const source = chainNamed(chain)!
  const state = source.chain === 'chain-a' ? ChainASyncState : ChainBSyncState
  const changed = await UPDATE.entity(state).set({ paused }).where({ ID: source.chain })
  if (Number(changed) !== 1) throw badInput('NOT_INDEXED', `${source.chain}'s follower has not started yet`, 'chain')
  return { chain: source.chain, paused, message: paused ? `${source.chain}'s follower is paused on every instance.` : `${source.chain}'s follower resumes.` }
}
