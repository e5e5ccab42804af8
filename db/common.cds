/**
 * Types every bounded context shares.
 *
 * Tenancy (DESIGN 5): every record a caller creates belongs to its owner, the CAP user id. Through
 * the hosted gateway that is the key (`key:<keyId>`, the same across rotations); self-hosted the
 * user (mocked or JWT) or the grant (`grant:<grantId>` for an x-agent-token). Records made for
 * another record (a signing request for a build, an audit entry for a request) carry that record's
 * owner, so the handlers set it; an insert that does not defaults to the caller.
 */
namespace common;

type Owner : String(255);

aspect Owned {
  owner : Owner not null @cds.on.insert: $user;
}

/**
 * JSON carried in a string parameter. `@json` tells the input guard (srv/lib/input-guard.ts) to
 * refuse nesting beyond its bound before any handler parses it.
 */
@json
type JsonText : LargeString;

/**
 * A chain follower's one state row, first part: which row (the chain) and which network its index
 * holds. Each chain's SyncState includes FollowedChain, then its own elements, then FollowerProgress,
 * and sets its ID's default.
 */
aspect FollowedChain {
  key ID      : String(10);
      network : String(16);
}

/** Where a chain follower stands, and its lease: the instance that holds it follows, the others stand by until it expires. */
aspect FollowerProgress {
  chainHeight         : Integer;
  chainTipAt          : Timestamp;
  indexedHeight       : Integer;
  indexedHash         : String(64);
  indexedAt           : Timestamp;
  /** The time of the block at indexedHeight (lag in seconds = chainTipAt - indexedBlockAt). */
  indexedBlockAt      : Timestamp;
  /** Blocks at or below it are final: they no longer change. */
  finalizedHeight     : Integer;
  /** syncing, synced, paused, error */
  status              : String(10) enum { syncing; synced; paused; error };
  lastError           : String(500);
  lastErrorAt         : Timestamp;
  consecutiveErrors   : Integer default 0;
  blocksIndexed       : Integer default 0;
  transactionsIndexed : Integer default 0;
  reorgs              : Integer default 0;
  /** Set by an operator: no instance follows until resumed. */
  paused              : Boolean default false;
  /** The follower instance holding the lease: the one that follows; the others stand by until it expires. */
  leaseOwner          : String(120);
  leaseExpiresAt      : Timestamp;
}

/** Each reorganisation a chain follower went through: the blocks from forkHeight on were replaced. */
aspect ReorgEntry {
  key ID               : UUID;
      detectedAt       : Timestamp;
      /** The first height that was replaced. */
      forkHeight       : Integer;
      oldTipHash       : String(64);
      newTipHash       : String(64);
      blocksRolledBack : Integer;
      /** reorg (the upstream replaced blocks) or reindex (an operator asked for it). */
      cause            : String(8) enum { reorg; reindex };
}
