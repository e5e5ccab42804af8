/**
 * The wallet lane: sign-in with a CIP-30 wallet's `signData` over a one-time message (no
 * transaction). Each challenge is used at most once (one guarded UPDATE consumes it); a sign-in
 * opens a short session that manages the keys bound to the address; an address gets its free
 * first key once (one row here per address, and the credit's ledger reference `wallet:<address>`).
 */
namespace gateway;

using { gateway.ApiKeys } from './gateway';

/** A one-time message to sign, issued for one address; the nonce is its key. */
@db.indexes: ['expiresAt']
entity SignInChallenges {
  key nonce      : String(64);
      /** The address it was issued for, in bech32; only it may answer the challenge. */
      address    : String(120) not null;
      /** CAIP-2 style, e.g. `cardano:preprod`. */
      network    : String(40) not null;
      /** The exact text to sign; its UTF-8 bytes must be the signed payload. */
      message    : LargeString not null;
      issuedAt   : Timestamp not null;
      expiresAt  : Timestamp not null;
      /** Set once, by the sign-in that used the challenge. */
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

/** An address that got its free first key: one row per address, ever. */
entity WalletAccounts {
  key address   : String(120);
      firstKey  : Association to ApiKeys;
      createdAt : Timestamp not null;
}
