/**
 * The purchase lane: packs of units sold for lovelace over x402 (version 2, scheme exact, on chain
 * A), and one row per quote a payment was presented for (a quote itself is kept by its buyer,
 * sealed by the gateway's MAC, and stored nowhere). A payment's transaction hash is unique here,
 * and its credit's reference (`payment:<hash>`) is unique in the ledger: a payment buys one pack, once.
 */
namespace gateway;

using { gateway.ApiKeys, gateway.Plans, gateway.Units } from './gateway';

/** What the purchase lane sells; seeded from db/seed, listed on /prices. */
entity Packs {
  key name        : String(20);
      description : String(200);
      units       : Units not null;
      lovelace    : Integer64 not null;
      /** The plan of a key bought with this pack (rate limits, validity). */
      plan        : Association to Plans;
      active      : Boolean not null default true;
}

@singular: 'Purchase'
@assert.unique: { payment: [txHash] }
@db.indexes: ['status, claimedAt']
entity Purchases {
  /** The quote id, bound into the payment (its CIP-20 memo) and sealed into the requirements' extra. */
  key ID          : UUID;
      lane        : String(5) enum { keys; topup } not null;
      pack        : Association to Packs not null;
      units       : Units not null;
      lovelace    : Integer64 not null;
      payTo       : String(120) not null;
      network     : String(40) not null;
      /** The key topped up; for a bought key, the key once credited. */
      apiKey      : Association to ApiKeys;
      /** The paying address (a bought key is bound to it). */
      payer       : String(120);
      /**
       * claimed: a verified payment was taken on to be submitted; submitted: the chain has it,
       * confirmations awaited; credited: the pack was credited (a new key, or a top-up);
       * rejected: the chain refused the payment (the quote may be paid again while it lasts).
       */
      status      : String(10) enum { claimed; submitted; credited; rejected } not null;
      txHash      : String(64);
      /** The payment's transaction as presented (CBOR hex), so whoever resumes a lapsed claim can submit it. */
      txCbor      : LargeString;
      claimedAt   : Timestamp;
      submittedAt : Timestamp;
      creditedAt  : Timestamp;
      /** Why the chain refused the last payment. */
      reason      : String(300);
      createdAt   : Timestamp not null;
      expiresAt   : Timestamp not null;
}
