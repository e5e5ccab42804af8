using { chainatx as db } from '../../db/chain-a-tx';

/**
 * The chain the builds are made on, as the chain-a connector learns it from the upstream: the
 * recorded genesis and the protocol parameters fetched. The transaction service owns these records;
 * the connector reads and records them here. Internal: served over no protocol, so no HTTP caller
 * (and no gateway route) reaches it. Called in the caller's context, so it joins its transaction.
 */
@protocol: 'none'
service ChainAChainRecords {

  @readonly entity NetworkParametersCache  as projection on db.NetworkParametersCache;
  @readonly entity ProtocolParametersCache as projection on db.ProtocolParametersCache;

  /** Records a genesis as the chain records are made on from now on (the only one recorded). */
  action RecordChain(chain : NetworkParametersCache);
  /** Records protocol parameters as fetched (one row per epoch). */
  action RecordProtocolParameters(parameters : ProtocolParametersCache);
}
