using { ChainBService } from './service';
using { chainb } from '../../db/chain-b';

/**
 * The chain index as ChainBService serves it: blocks, transactions with their segments and contract
 * actions, unshielded UTXOs, as the indexer service's follower wrote them (rolled back and read again
 * on a reorg). Read-only, with every OData query option; associations let a client expand a block's
 * transactions or navigate to a transaction's segments.
 */
extend service ChainBService with {
  @readonly entity Blocks              as projection on chainb.Blocks;
  @readonly entity Transactions        as projection on chainb.Transactions;
  @readonly entity TransactionSegments as projection on chainb.TransactionSegments;
  @readonly entity ContractActions     as projection on chainb.ContractActions;
  @readonly entity UnshieldedUtxos     as projection on chainb.UnshieldedUtxos;
}
