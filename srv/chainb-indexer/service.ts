import cds from '@sap/cds'
import {
  getCounters, getHealth, getLiveness, getReadiness, getReorgHistory, getSyncStatus, pauseCrawler, reindexFromHeight, resumeCrawler,
} from '#cds-models/ChainBIndexerService'
import { chainB } from '../chains/chain-b/index.ts'
import { ApiError } from '../lib/errors.ts'
import { onStop } from '../lib/graceful-stop.ts'
import { Follower } from './follower.ts'
import { indexerSettings } from './settings.ts'
import { counters, health, liveness, readiness, reorgHistory, syncStatus } from './status.ts'
import { ensureSyncState, positionOf, readSyncState, rollBackFrom, setPaused } from './store.ts'

/**
 * The chain-B indexer service: the follower's state and health for everyone, crawler control for
 * the operator. The follower starts once the services are served (when CHAIN_B_CRAWLER_ENABLED is
 * not false) and stops on shutdown.
 */
export class ChainBIndexerService extends cds.ApplicationService {
  /** This instance's follower, when the crawler runs here. */
  follower?: Follower

  init() {
    this.on(getSyncStatus, () => syncStatus())
    this.on(getHealth, () => health(this.instanceId))
    this.on(getReorgHistory, req => reorgHistory(req.data.limit))
    this.on(getCounters, () => counters())
    this.on(getLiveness, () => liveness(this.instanceId))
    this.on(getReadiness, async () => readiness(this.instanceId, !!this.follower, (await chainB()).port))
    this.on(pauseCrawler, () => this.pause())
    this.on(resumeCrawler, req => this.resume(req))
    this.on(reindexFromHeight, req => this.reindex(req, req.data.height))

    cds.once('served', () => this.startFollower())
    return super.init()
  }

  get instanceId() {
    return this.follower?.instanceId ?? null
  }

  private async startFollower() {
    if (!indexerSettings().enabled) return
    const chain = await chainB()
    this.follower = new Follower({ port: chain.port, finalityDepth: chain.settings.finalityDepth, network: chain.settings.network }).start()
    onStop(() => this.follower?.stop())
    this.wake()
  }

  /** Runs the follower soon, outside the request (after its transaction ends). */
  private wake() {
    const follower = this.follower
    if (follower) setImmediate(() => follower.runNow().catch(error => cds.log('chainb-indexer').warn('chain-b follower run failed', error)))
  }

  private async pause() {
    await this.ensureState()
    await setPaused(true)
    return { status: 'paused', running: false, message: 'Indexing paused on every instance until resumeCrawler.' }
  }

  private async resume(req: cds.Request) {
    await this.ensureState()
    await setPaused(false)
    req.on('succeeded', () => this.wake())
    return { status: 'resumed', running: true, message: this.follower ? 'Indexing resumed.' : 'Indexing resumed; the crawler runs on another instance.' }
  }

  /** Rolls the index back to below `height` (clamped to what is indexed); the follower reads it again from there. */
  private async reindex(req: cds.Request, height: unknown) {
    if (typeof height !== 'number' || !Number.isInteger(height) || height < 0) throw new ApiError(400, 'INVALID_HEIGHT', 'height must be a whole number of 0 or more')
    await this.ensureState()
    const state = await readSyncState()
    const at = positionOf(state!)
    const effective = Math.min(height, at.height + 1)
    const base = { requestedHeight: height, effectiveStartHeight: effective, crawlerResumed: !state?.paused }
    if (effective > at.height) {
      return { ...base, status: 'unchanged', message: `Nothing is indexed at or above height ${height}.`, blocksRolledBack: 0, transactionsRolledBack: 0 }
    }
    const rollback = await rollBackFrom(effective, 'reindex', {})
    req.on('succeeded', () => this.wake())
    return {
      ...base, status: 'completed', message: `Rolled back from height ${effective}; ${state?.paused ? 'resume the crawler to read again' : 'reading again from there'}.`,
      blocksRolledBack: rollback.blocksRolledBack, transactionsRolledBack: rollback.transactionsRolledBack,
    }
  }

  /** The row exists once a follower has run anywhere; else it is created here, with the network when chain B answers. */
  private async ensureState() {
    if (await readSyncState()) return
    const network = await chainB().then(chain => chain.settings.network, () => null)
    await ensureSyncState(network)
  }
}
