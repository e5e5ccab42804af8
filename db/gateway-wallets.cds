/**
 * The wallet lane: sign-in with a CIP-30 wallet's `signData` over a one-time message (no
 * transaction). A challenge is issued without a row (its nonce carries a MAC) and recorded once,
 * when it is used: the nonce is unique here. A sign-in opens a short session that manages the keys
 * bound to the address. Free units go once per payment credential and once per stake credential
 * (a row here per credential, ever), to addresses the chain knows, within a daily budget.
 */
namespace gateway;

using { gateway.ApiKeys, gateway.Units } from './gateway';

/**
 * A used sign-in challenge: one row per sign-in, written when the challenge is used (the nonce is
 * its key, so a challenge signs in once) and kept until a day after it expired.
 */
@db.indexes: ['expiresAt']
entity SignInChallenges {
  key nonce      : String(64);
      /** The address it was issued for, in bech32; only it may answer the challenge. */
      address    : String(120) not null;
      /** CAIP-2 style, e.g. `cardano:preprod`. */
      network    : String(40) not null;
      /** The exact text signed: its UTF-8 bytes were the signed payload. */
      message    : LargeString not null;
      issuedAt   : Timestamp not null;
      expiresAt  : Timestamp not null;
      /** When the sign-in used the challenge. */
      consumedAt : Timestamp;
}

/** A signed-in wallet: manages the keys bound to its address until it expires or signs out. Only the token's hash is stored. */
@assert.unique: { token: [tokenHash] }
entity WalletSessions {
  key ID        : UUID;
      /** SHA-256 of the session token (`cgs_…`), shown once at sign-in. */
      tokenHash : String(64) not null;
      address   : String(120) not null;
      createdAt : Timestamp not null;
      expiresAt : Timestamp not null;
      revokedAt : Timestamp;
}

/** An address that got its free first key: one row per address, ever (with one row per credential in WalletFreeCredentials). */
entity WalletAccounts {
  key address   : String(120);
      firstKey  : Association to ApiKeys;
      createdAt : Timestamp not null;
}

/**
 * A credential whose free units were given: `payment:key:<hash>`, `stake:key:<hash>` or
 * `stake:script:<hash>` (hex). One row per credential, ever; a sign-in records all of its
 * address's credentials in one transaction, or none.
 */
entity WalletFreeCredentials {
  key credential : String(80);
      /** The address whose sign-in got the free units. */
      address    : String(120) not null;
      givenAt    : Timestamp not null;
}

/** Free units given per UTC day, against the daily budget: one row per day, raised by one guarded UPDATE. */
entity WalletFreeUnitDays {
  key utcDay : String(10);
      units  : Units not null default 0;
}
