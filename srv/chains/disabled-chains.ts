import type { IncomingMessage, ServerResponse } from 'node:http'
import { sendError } from '../lib/http-safety.ts'
import { chainAEnabled } from './chain-a/config.ts'
import { chainBEnabled } from './chain-b/config.ts'

/**
 * A chain turned off (CHAIN_A_ENABLED=false, CHAIN_B_ENABLED=false: a deployment without that
 * chain's upstream) answers its routes 503 CHAIN_A_DISABLED / CHAIN_B_DISABLED, before the hosted
 * gateway, so nothing is charged. Runs on canonical paths (after the route aliases).
 */
const CHAIN_ROUTES = {
  A: ['/odata/v4/chaina-odata', '/odata/v4/chaina-sign', '/odata/v4/chaina-transaction'],
  B: ['/odata/v4/chainb', '/odata/v4/chainb-indexer', '/odata/v4/chainb-verify', '/zk-config'],
} as const

const under = (path: string, base: string) => path === base || path.startsWith(base + '/') || path.startsWith(base + '?') || path.startsWith(base + '(')

/**
 * The middleware, or undefined when both chains are on (read once at start). A chain whose routes
 * a remote instance serves (`servedElsewhere`: the hosted gateway forwards them) is never refused here.
 */
export function refuseDisabledChains(headers: Record<string, number>, servedElsewhere: readonly ('A' | 'B')[] = []) {
  const disabled = (['A', 'B'] as const).filter(chain => !(chain === 'A' ? chainAEnabled() : chainBEnabled()) && !servedElsewhere.includes(chain))
  if (!disabled.length) return undefined
  return (req: IncomingMessage, res: ServerResponse, next: () => void) => {
    const path = req.url ?? '/'
    const chain = disabled.find(name => CHAIN_ROUTES[name].some(base => under(path, base)))
    if (!chain) return next()
    sendError(res, 503, `CHAIN_${chain}_DISABLED`, `Chain ${chain} is turned off in this deployment (CHAIN_${chain}_ENABLED=false)`, headers)
  }
}
