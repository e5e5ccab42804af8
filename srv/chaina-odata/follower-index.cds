using { chaina as db } from '../../db/chain-a';

/**
 * What other services may read of chain A as the follower indexed it into the read cache, and the
 * operator's pause of the follower. Internal: served over no protocol, so no HTTP caller (and no
 * gateway route) reaches it. Callers run it in their own context, so its reads join their
 * transaction.
 */
@protocol: 'none'
service ChainAFollowerIndex {

  @readonly entity Blocks                  as projection on db.Blocks;
  @readonly entity Transactions            as projection on db.Transactions;
  @readonly entity TransactionInputs       as projection on db.TransactionInputs;
  @readonly entity TransactionOutputs      as projection on db.TransactionOutputs;
  @readonly entity TransactionOutputAssets as projection on db.TransactionOutputAssets;
  @readonly entity Pools                   as projection on db.Pools;
  @readonly entity ReorgLog                as projection on db.ReorgLog;
  @readonly entity SyncState               as projection on db.SyncState excluding { leaseOwner, leaseExpiresAt };

  /** Pauses the follower on every instance (false when it has not started yet): it reads nothing until resumed. */
  action PauseFollower() returns Boolean;
  /** Resumes the follower (false when it has not started yet). */
  action ResumeFollower() returns Boolean;
}
