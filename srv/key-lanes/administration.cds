using { gateway } from '../../db/gateway-vouchers';
using { gateway.Packs as PackRows } from '../../db/gateway-purchases';

/**
 * The key lanes' records as the operator service reads them: vouchers (never their code's hash)
 * with their redemptions, and the packs the purchase lane sells. Internal: served over no protocol,
 * so no HTTP caller reaches it; the operator service projects on it. Vouchers are created and
 * revoked through the lane's functions (vouchers.ts); packs are edited as rows, read afresh by
 * every quote and every listing of /prices, within the bounds annotated here.
 */
@protocol: 'none'
service KeyLanesAdministration {
  @readonly entity Vouchers           as projection on gateway.Vouchers excluding { codeHash };
  @readonly entity VoucherRedemptions as projection on gateway.VoucherRedemptions;
  entity Packs                        as projection on PackRows;
}

annotate KeyLanesAdministration.Packs with {
  name     @assert.format: '^[A-Za-z0-9_-]{1,20}$';
  units    @mandatory @assert.range: [1, 1000000000000];
  /** At least one ada: a payment output below the chain's minimum could never be made. */
  lovelace @mandatory @assert.range: [1000000, 1000000000000000];
  plan     @mandatory @assert.target;
};
