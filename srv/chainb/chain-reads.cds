using { ChainBService } from './service';
using { ChainBIndex } from '../chainb-indexer/chain-index';

/**
 * The chain index as ChainBService serves it: blocks, transactions with their segments and contract
 * actions, unshielded UTXOs, as the indexer service's follower wrote them (rolled back and read again
 * on a reorg), read through what the index's owner offers (ChainBIndex). Read-only, with every OData
 * query option; associations let a client expand a block's transactions or navigate to a
 * transaction's segments.
 */
extend service ChainBService with {
  @readonly entity Blocks              as projection on ChainBIndex.Blocks;
  @readonly entity Transactions        as projection on ChainBIndex.Transactions;
  @readonly entity TransactionSegments as projection on ChainBIndex.TransactionSegments;
  @readonly entity ContractActions     as projection on ChainBIndex.ContractActions;
  @readonly entity UnshieldedUtxos     as projection on ChainBIndex.UnshieldedUtxos;
}
