/**
 * The gateway's records: API keys with a unit balance, their product grants, the per-key ledger,
 * the price table and the plans. Balances change only by guarded UPDATEs in the same transaction
 * as the ledger entry that explains them, so for every key: unitsLeft = sum of its ledger units.
 */
namespace gateway;

type Units : Integer64;

/** What a key may cost and how fast it may call; seeded from db/seed. */
entity Plans {
  key name          : String(20);
      description   : String(200);
      /** Units a new key of this plan starts with when none are given. */
      units         : Units;
      validityDays  : Integer;
      /** Per-key rate limit: sustained calls per second and burst. */
      ratePerSecond : Integer;
      burst         : Integer;
}

/** Units per call of each route class; seeded from db/seed, served at /prices. */
entity Prices {
  key routeClass  : String(30);
      units       : Integer;
      description : String(200);
}

@assert.unique: { secret: [secretHash] }
entity ApiKeys {
  key ID           : UUID;
      /** SHA-256 of the whole key; the key itself is shown once and never stored. */
      secretHash   : String(64) not null;
      /** The first characters of the key, to tell keys apart in lists. */
      hint         : String(16);
      plan         : Association to Plans;
      unitsLeft    : Units not null default 0;
      validUntil   : Timestamp not null;
      status       : String(10) enum { active; suspended; revoked } not null default 'active';
      /** The wallet address a purchased or wallet-issued key is bound to; empty for operator keys. */
      boundAddress : String(120);
      label        : String(100);
      createdAt    : Timestamp;
      rotatedAt    : Timestamp;
      revokedAt    : Timestamp;
      lastUsedAt   : Timestamp;
      /**
       * Counts every change of what the key may do (rotation, revocation, a grant revoked). Each
       * reservation checks it, so no gateway instance can answer from a cached copy of an older key.
       */
      version      : Integer not null default 0;
      grants       : Composition of many ProductGrants on grants.apiKey = $self;
      ledger       : Association to many LedgerEntries on ledger.apiKey = $self;
}

/**
 * An agent grant on one product (chain A or chain B): the gateway acts as the key's grant when it
 * forwards a call, and a self-hosted production instance accepts the grant's token in
 * `x-agent-token`. Only the token's hash is stored.
 */
@assert.unique: { token: [tokenHash] }
entity ProductGrants {
  key ID                : UUID;
      apiKey            : Association to ApiKeys;
      product           : String(10) enum { chainA = 'chain-a'; chainB = 'chain-b' } not null;
      tokenHash         : String(64) not null;
      tokenHint         : String(16);
      /** JSON array of allowed operations: "Service:operation", "Service:*" or "*". */
      allowedOperations : LargeString;
      status            : String(10) enum { active; revoked } not null default 'active';
      label             : String(100);
      /**
       * Whom the grant acts for, where another gateway holds it for one of its keys (`hosted:<key>`):
       * the owner of what the grant creates, so a grant issued again for the same key (after a
       * rotation, say) finds its records. Without it, the grant itself is the owner (`grant:<ID>`).
       */
      subject           : String(120);
      validUntil        : Timestamp;
      createdAt         : Timestamp;
      revokedAt         : Timestamp;
}

/**
 * An agent grant a remote product issued to this gateway for one key (srv/gateway/remote-products.ts):
 * presented on each call forwarded there. Its token is kept sealed (AES-256-GCM under a key derived
 * from GATEWAY_REMOTE_GRANT_SECRET); the row goes once the remote has revoked it.
 */
entity RemoteGrants {
  key apiKey        : Association to ApiKeys;
  key product       : String(10);
      remoteGrantId : String(64) not null;
      sealedToken   : String(400) not null;
      createdAt     : Timestamp;
}

/**
 * The one agent grant the gateway holds at a remote of the chain-B plugin's kind
 * (srv/gateway/remote-plugin.ts): pinned to the configured wallet session, shared by every key.
 * Sealed like RemoteGrants.
 */
entity RemotePluginGrants {
  key product       : String(10);
      remoteGrantId : String(64) not null;
      sealedToken   : String(400) not null;
      createdAt     : Timestamp;
}

/**
 * What a key created at a remote of the chain-B plugin's kind: its jobs, documents, attestations
 * and disclosure grants. All of them belong to one user there, so the gateway answers a key only
 * the records it holds here for it.
 */
type RemoteRecordKind : String(12) enum { job; document; attestation; disclosure };

@db.indexes: ['apiKey_ID, product, kind, createdAt']
entity RemoteRecords {
  key product  : String(10);
  key kind     : RemoteRecordKind;
  key remoteId : String(64);
      apiKey   : Association to ApiKeys not null;
      /** A job's: the request whose charge queued it (refunded when the plugin fails the job). */
      requestId: String(64);
      createdAt: Timestamp;
}

/** A named type, not an inline enum: an inline enum on an element called `kind` collides with the
 *  generated model class's own static `kind`. */
type LedgerEntryKind : String(10) enum { credit; debit; charge; refund; lease };

/**
 * One entry per charged call (kind charge: units negative, pending until the call resolves, then
 * committed or refunded), per refund and per credit. A request resolves at most once: the
 * (requestId, kind) pair is unique; a credit for something (a payment, a voucher redemption, a
 * wallet's free calls) is posted at most once: the (kind, reference) pair is unique.
 *
 * A unit lease (kind lease) sets a block of a busy key's units aside for one instance: while it is
 * pending its units are minus what is still unspent (each charge drawn on it moves units from the
 * lease to a committed charge entry), and closing it (handed back, or voided by the sweeper once
 * its holder stopped renewing it) sets them to 0 and gives the rest back to the balance.
 */
@assert.unique: { resolution: [requestId, kind], creditReference: [kind, reference] }
// The exports read a period in (createdAt, ID) order, of one key or of all (srv/operator/exports.ts).
@db.indexes: ['apiKey_ID, kind, state', 'apiKey_ID, createdAt, ID', 'createdAt, ID']
entity LedgerEntries {
  key ID         : UUID;
      apiKey     : Association to ApiKeys not null;
      kind       : LedgerEntryKind not null;
      units      : Units not null;
      state      : String(10) enum { pending; committed; refunded; posted; closed } not null;
      routeClass : String(30);
      /** Method and normalised path of the call, cut to 500 characters. */
      route      : String(500);
      /** The call's route family: the path of the service it reached (`/odata/v4/chaina-odata`). */
      routeFamily : String(60);
      requestId  : String(64);
      /** HTTP status of the answer, `timeout`, or `voided` (swept after a crash). */
      outcome    : String(20);
      note       : String(200);
      /** What a credit is for: `payment:<transaction hash>`, `voucher:<voucher id>:<redemption>`, `wallet:<address>`. */
      reference  : String(160);
      createdAt  : Timestamp not null;
      resolvedAt : Timestamp;
      /** The units a lease set aside when it was taken. */
      leased     : Units;
      /** A lease's holder renews it while it holds it; the sweeper voids a lease not renewed in time. */
      renewedAt  : Timestamp;
}

/**
 * Failed attempts of one subject (a client address, a key) against one limit (the key check, the
 * wallet sign-in, the vouchers) in a fixed window, counted by every instance alike: one upsert per
 * failure, so N instances allow as many failures as one (srv/gateway/failure-windows.ts).
 */
@db.indexes: ['windowEnds']
entity FailedAttempts {
  key scope      : String(20);
  key subject    : String(100);
      failures   : Integer not null default 0;
      /** When the window ends, in milliseconds since 1970: the failures count from 0 again after it. */
      windowEnds : Integer64 not null;
}

/**
 * The instances serving now, each refreshing its row every few seconds: the token buckets give
 * each instance its share of a limit by their number (srv/gateway/instances.ts).
 */
entity LiveInstances {
  key ID        : String(100);
      startedAt : Timestamp not null;
      /** The last heartbeat, in milliseconds since 1970. */
      seenAt    : Integer64 not null;
}
