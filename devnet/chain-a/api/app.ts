import express from 'express'
import type { Ledger } from '../ledger.ts'
import { addressRoutes } from './addresses.ts'
import { assetRoutes } from './assets.ts'
import { chainRoutes } from './chain.ts'
import { koiosRouter } from '../koios/app.ts'
import { kupoRouter } from '../kupo/app.ts'
import { errorHandler, notFound } from './http.ts'
import { stakingRoutes } from './staking.ts'
import { transactionRoutes } from './transactions.ts'
import { utilityRoutes } from './utils.ts'

/** Counts of requests served, per path; benchmarks and tests count upstream calls with it. */
export class RequestCounter {
  private readonly counts = new Map<string, number>()

  record(path: string) {
    this.counts.set(path, (this.counts.get(path) ?? 0) + 1)
  }

  /** Requests whose path starts with the prefix (all requests without one). */
  count(prefix = ''): number {
    let total = 0
    for (const [path, count] of this.counts) if (path.startsWith(prefix)) total += count
    return total
  }

  reset() {
    this.counts.clear()
  }
}

/**
 * The Blockfrost v0-compatible API, mounted at the root (no /api/v0 prefix), and Koios' REST API v1
 * at /koios/api/v1 (`../koios/`). `latencyMs` delays
 * every answer, to stand in for a remote upstream (Blockfrost answers in tens of milliseconds).
 */
export function createApp(ledger: Ledger, counter: RequestCounter, url: () => string, latencyMs: () => number = () => 0): express.Express {
  const app = express()
  app.disable('x-powered-by')
  app.set('etag', false)
  app.use((req, _res, next) => {
    counter.record(req.path)
    const delay = latencyMs()
    if (delay > 0) setTimeout(next, delay)
    else next()
  })
  // Koios' REST API v1 over the same ledger, with PostgREST's conventions and errors.
  app.use('/koios/api/v1', koiosRouter(ledger))
  // Kupo's HTTP API over the same ledger, indexing every output (`--match "*"`).
  app.use('/kupo', kupoRouter(ledger))
  const router = express.Router({ strict: false })
  chainRoutes(router, ledger, url)
  transactionRoutes(router, ledger)
  addressRoutes(router, ledger)
  assetRoutes(router, ledger)
  stakingRoutes(router, ledger)
  utilityRoutes(router, ledger)
  app.use(router)
  app.use(() => { throw notFound() })
  app.use(errorHandler)
  return app
}
