import { embeddedDevnet } from '../../devnet/chain-a/embedded.ts'
import type { ChainADevnet } from '../../devnet/chain-a/index.ts'
import type { ActivityEvent, ActivityKind } from '../../devnet/chain-a/activity.ts'

/** The devnet the application under test started (server.ts starts it in the test profile). */
export function runningDevnet(): ChainADevnet {
  const devnet = embeddedDevnet()
  if (!devnet) throw new Error('the application did not start an embedded devnet')
  return devnet
}

/**
 * Grows the devnet's chain with activity rounds, one block after each, until every kind asked for
 * has happened `times` times (or `maxRounds` is reached). Answers the accepted events.
 */
export function growChain(devnet: ChainADevnet, kinds: ActivityKind[], times = 1, maxRounds = 400): ActivityEvent[] {
  const events: ActivityEvent[] = []
  const missing = () => kinds.filter(kind => events.filter(event => event.kind === kind).length < times)
  for (let round = 0; round < maxRounds && missing().length; round++) {
    const event = devnet.activity.round()
    devnet.produceBlock()
    if (event.txHash) events.push(event)
  }
  if (missing().length) throw new Error(`the devnet produced too few ${missing().join(', ')} in ${maxRounds} rounds`)
  return events
}

export const firstOf = (events: ActivityEvent[], kind: ActivityKind) => events.find(event => event.kind === kind)!.txHash!

/** Produces blocks until the given transaction is `depth` blocks deep. */
export function bury(devnet: ChainADevnet, depth: number) {
  for (let i = 0; i < depth; i++) devnet.produceBlock()
}

/**
 * A pool's ticker as the chain-A kind under test reports it: the ogmios kind has no pool metadata
 * (Ogmios gives its URL and hash, not the document; docs/chain-a-backends.md), the others fetch it.
 */
export const expectedTicker = () => (process.env.CHAIN_A_KIND === 'ogmios' ? null : expect.stringMatching(/^DEV/))
