import cds from '@sap/cds'
import ChainAFollowerIndex from '#cds-models/ChainAFollowerIndex'
import ChainBIndex from '#cds-models/ChainBIndex'
import { badInput } from '../lib/errors.ts'
import { SOURCES, foldChain } from './bucket-writer.ts'

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

/** Pauses (or resumes) a chain's follower on every instance through its owner: it reads nothing until resumed. */
export async function setFollowerPaused(chain: unknown, paused: boolean) {
  const source = chainNamed(chain)!
  const follower = await cds.connect.to(source.chain === 'chain-a' ? ChainAFollowerIndex : ChainBIndex)
  const changed = await (paused ? follower.PauseFollower() : follower.ResumeFollower())
  if (changed !== true) throw badInput('NOT_INDEXED', `${source.chain}'s follower has not started yet`, 'chain')
  return { chain: source.chain, paused, message: paused ? `${source.chain}'s follower is paused on every instance.` : `${source.chain}'s follower resumes.` }
}
