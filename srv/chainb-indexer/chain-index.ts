import { PauseFollower, ResumeFollower } from '#cds-models/ChainBIndex'
import { InternalService } from '../lib/internal-service.ts'
import { syncState } from './store.ts'

/** The index's side for other services (chain-index.cds): its reads are the projections; pausing is here. */

export class ChainBIndex extends InternalService {
  init() {
    this.on(PauseFollower, () => syncState.setPaused(true))
    this.on(ResumeFollower, () => syncState.setPaused(false))
    return super.init()
  }
}

