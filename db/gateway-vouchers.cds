/**
 * The code lane: voucher codes the operator creates (`npm run gateway -- vouchers create`), each
 * worth some units and redeemable a limited number of times until it expires or is revoked. Only
 * the keyed hash of the normalised code is stored; the code itself is shown once, when created.
 * Redeeming is one guarded UPDATE of `redeemedCount`, so a code is never redeemed beyond its limit.
 */
namespace gateway;

using { gateway.ApiKeys, gateway.Units } from './gateway';

@assert.unique: { code: [codeHash] }
entity Vouchers {
  key ID             : UUID;
      /** HMAC-SHA256 (hex) of the normalised code under the configured pepper. */
      codeHash       : String(64) not null;
      /** The code's first group and '…', to tell codes apart in lists. */
      hint           : String(9);
      units          : Units not null;
      maxRedemptions : Integer not null default 1;
      redeemedCount  : Integer not null default 0;
      expiresAt      : Timestamp;
      revokedAt      : Timestamp;
      label          : String(100);
      createdAt      : Timestamp not null;
      redemptions    : Association to many VoucherRedemptions on redemptions.voucher = $self;
}

/** One per redemption; a key redeems a given code at most once. */
@assert.unique: { once: [voucher, apiKey] }
entity VoucherRedemptions {
  key ID         : UUID;
      voucher    : Association to Vouchers not null;
      /** The key credited: the caller's, or the one the redemption created. */
      apiKey     : Association to ApiKeys not null;
      redeemedAt : Timestamp not null;
}
