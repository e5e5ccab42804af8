import cds from '@sap/cds'
import { NetworkParametersCache, NetworkParametersCache_, ProtocolParametersCache } from '#cds-models/chainatx'
import { RecordChain, RecordProtocolParameters } from '#cds-models/ChainAChainRecords'
import { InternalService } from '../lib/internal-service.ts'

/** The chain records' writes (chain-records.cds), each in the caller's transaction. */

const { INSERT, UPSERT, DELETE } = cds.ql

export class ChainAChainRecords extends InternalService {
  init() {
    this.on(RecordChain, req => recordChain(req.data.chain!))
    this.on(RecordProtocolParameters, req => recordProtocolParameters(req.data.parameters!))
    return super.init()
  }
}

async function recordChain(chain: NetworkParametersCache): Promise<void> {
  await DELETE.from(NetworkParametersCache_)
  await INSERT.into(NetworkParametersCache).entries(chain)
}

async function recordProtocolParameters(parameters: ProtocolParametersCache): Promise<void> {
  await UPSERT.into(ProtocolParametersCache).entries(parameters)
}
