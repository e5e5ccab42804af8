import { PauseFollower, ResumeFollower } from '#cds-models/ChainAFollowerIndex'
import { InternalService } from '../lib/internal-service.ts'
import { syncState } from './follower-store.ts'

/** The follower index's side for other services (follower-index.cds): its reads are the projections; pausing is here. */

export class ChainAFollowerIndex extends InternalService {
  init() {
    this.on(PauseFollower, () => syncState.setPaused(true))
    this.on(ResumeFollower, () => syncState.setPaused(false))
    return super.init()
  }
}

