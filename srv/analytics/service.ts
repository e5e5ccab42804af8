import cds from '@sap/cds'
import {
  anomalies as anomaliesFunction, compare as compareFunction, concentration as concentrationFunction, daily as dailyFunction,
  distributions as distributionsFunction, keyFigures as keyFiguresFunction, overview as overviewFunction, pauseFollower,
  rankings as rankingsFunction, rebuildBuckets, resumeFollower,
} from '#cds-models/AnalyticsService'
import { scheduleJob } from '../lib/scheduled-job.ts'
import { anomalies } from './anomalies.ts'
import { foldAll } from './bucket-writer.ts'
import { rebuild, setFollowerPaused } from './internals.ts'
import { writerSettings } from './settings.ts'
import { concentration, daily, distributions, rankings } from './tables.ts'
import { compare, keyFigures, overview } from './windowed.ts'

/**
 * Analytics over both chains (read-only). The bucket writer folds what the chain followers index
 * every ANALYTICS_WRITER_INTERVAL_MS (default 10 s) once the services are served, unless
 * ANALYTICS_WRITER_ENABLED is false; several instances take turns (bucket-writer.ts).
 */
export class AnalyticsService extends cds.ApplicationService {
  init() {
    this.on(overviewFunction, () => overview())
    this.on(keyFiguresFunction, req => keyFigures(req.data.window))
    this.on(compareFunction, req => compare(req.data.metric, req.data.window))
    this.on(dailyFunction, req => daily(req.data.topic, req.data.days))
    this.on(rankingsFunction, req => rankings(req.data.ranking, req.data.window, req.data.top))
    this.on(concentrationFunction, req => concentration(req.data.resource, req.data.window))
    this.on(distributionsFunction, req => distributions(req.data.distribution, req.data.window, req.data.bins))
    this.on(anomaliesFunction, req => anomalies(req.data.metric, req.data.window))
    this.on(rebuildBuckets, req => rebuild(req.data.chain, req.data.fromTime))
    this.on(pauseFollower, req => setFollowerPaused(req.data.chain, true))
    this.on(resumeFollower, req => setFollowerPaused(req.data.chain, false))
    cds.once('served', () => startWriter())
    return super.init()
  }
}

function startWriter() {
  const { enabled, intervalMs } = writerSettings()
  if (!enabled) return
  const job = scheduleJob('analytics bucket writer', intervalMs, () => foldAll())
  setImmediate(() => job.runNow().catch(error => cds.log('analytics').warn('analytics bucket writer failed', error)))
}
