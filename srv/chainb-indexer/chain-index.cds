using { chainb as db } from '../../db/chain-b';

/**
 * What other services may read of chain B's index, and the operator's pause of its follower.
 * Internal: served over no protocol, so no HTTP caller (and no gateway route) reaches it. Callers
 * run it in their own context, so its reads join their transaction.
 */
@protocol: 'none'
service ChainBIndex {

  @readonly entity Blocks          as projection on db.Blocks;
  @readonly entity Transactions    as projection on db.Transactions;
  @readonly entity TransactionSegments as projection on db.TransactionSegments;
  @readonly entity ContractActions as projection on db.ContractActions;
  @readonly entity UnshieldedUtxos as projection on db.UnshieldedUtxos;
  @readonly entity ReorgLog        as projection on db.ReorgLog;
  @readonly entity SyncState       as projection on db.SyncState excluding { leaseOwner, leaseExpiresAt };

  /** Pauses the follower on every instance (false when it has not started yet): it indexes nothing until resumed. */
  action PauseFollower() returns Boolean;
  /** Resumes the follower (false when it has not started yet). */
  action ResumeFollower() returns Boolean;
}
