using { chainb as db } from '../../db/chain-b';

/**
 * The chain-B indexer: where the follower stands (sync state, health, counters), the reorgs it
 * has handled, and crawler control for the operator. The follower (follower.ts) reads blocks from
 * the chain-B port into the chain index (db/chain-b.cds) that ChainBService reads; one instance
 * indexes at a time (a lease on the SyncState row).
 */
@path: 'chainb-indexer'
@requires: 'authenticated-user'
service ChainBIndexerService {

  /** Where the follower stands; the lease is an internal of the instances. */
  @readonly entity SyncState as projection on db.SyncState excluding { leaseOwner, leaseExpiresAt };
  @readonly entity ReorgLog  as projection on db.ReorgLog;

  type SyncStatus {
    network           : String(16);
    chainHeight       : Integer;
    chainTipAt        : Timestamp;
    indexedHeight     : Integer;
    indexedHash       : String(64);
    indexedAt         : Timestamp;
    finalizedHeight   : Integer;
    /** chainHeight - indexedHeight. */
    lagBlocks         : Integer;
    /** The tip's time minus the indexed block's time. */
    lagSeconds        : Integer;
    /** syncing, synced, paused, error; unknown before the first run. */
    status            : String(10);
    lastError         : String(500);
    lastErrorAt       : Timestamp;
    consecutiveErrors : Integer;
  }

  type Health {
    /** healthy, degraded (lag above degradedLag), unhealthy (lag above unhealthyLag), unknown (nothing known yet). */
    status          : String(10);
    chainHeight     : Integer;
    indexedHeight   : Integer;
    finalizedHeight : Integer;
    lag             : Integer;
    finalizedLag    : Integer;
    syncStatus      : String(10);
    degradedLag     : Integer;
    unhealthyLag    : Integer;
    instanceId      : String(120);
  }

  type Counters {
    blocks               : Integer;
    transactions         : Integer;
    shieldedTransactions : Integer;
    contractCalls        : Integer;
    reorgs               : Integer;
  }

  type Liveness {
    status     : String(10);
    timestamp  : Timestamp;
    /** Seconds since this instance started. */
    uptime     : Integer;
    instanceId : String(120);
  }

  type ReadinessChecks {
    database : Boolean;
    crawler  : Boolean;
    node     : Boolean;
  }

  type Readiness {
    ready          : Boolean;
    crawlerEnabled : Boolean;
    checks         : ReadinessChecks;
    instanceId     : String(120);
  }

  type CrawlerControl {
    status  : String(10);
    running : Boolean;
    message : String(500);
  }

  type Reindex {
    status                 : String(10);
    message                : String(500);
    requestedHeight        : Integer;
    effectiveStartHeight   : Integer;
    blocksRolledBack       : Integer;
    transactionsRolledBack : Integer;
    crawlerResumed         : Boolean;
  }

  function getSyncStatus()                returns SyncStatus;
  function getHealth()                    returns Health;
  /** The latest reorgs first; limit 1..100, default 10. */
  function getReorgHistory(limit : Integer) returns many ReorgLog;
  function getCounters()                  returns Counters;
  function getLiveness()                  returns Liveness;
  function getReadiness()                 returns Readiness;

  /** Stops indexing on every instance until resumeCrawler. */
  @requires: 'admin' action pauseCrawler()  returns CrawlerControl;
  @requires: 'admin' action resumeCrawler() returns CrawlerControl;
  /** Rolls the index back to below `height` (ReorgLog cause reindex); the follower reads it again from there. */
  @requires: 'admin' action reindexFromHeight(height : Integer) returns Reindex;
}
