import cds from '@sap/cds'
import { SyncState } from '#cds-models/chainb'
import { PauseFollower, ResumeFollower } from '#cds-models/ChainBIndex'
import { InternalService } from '../lib/internal-service.ts'
import { SYNC_ID } from './store.ts'

/** The index's side for other services (chain-index.cds): its reads are the projections; pausing is here. */

const { UPDATE } = cds.ql

export class ChainBIndex extends InternalService {
  init() {
    this.on(PauseFollower, () => setPaused(true))
    this.on(ResumeFollower, () => setPaused(false))
    return super.init()
  }
}

/** Sets the operator's pause; false when the follower has no state yet. */
async function setPaused(paused: boolean): Promise<boolean> {
  return Number(await UPDATE.entity(SyncState).set({ paused }).where({ ID: SYNC_ID })) === 1
}
