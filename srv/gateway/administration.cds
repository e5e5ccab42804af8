using { gateway } from '../../db/gateway';

/**
 * The gateway's records as the operator service reads them: keys (without their secret's hash),
 * their ledgers, plans and prices. Internal: served over no protocol, so no HTTP caller (and no
 * gateway route) reaches it; the operator service projects on it. Key changes go through the
 * gateway's functions (key-administration.ts), which keep every balance guarded; plans and prices
 * are edited as rows (every instance reads prices again every few seconds, and a key's plan with
 * the key), within the bounds annotated here.
 */
@protocol: 'none'
service GatewayAdministration {
  @readonly entity Keys          as projection on gateway.ApiKeys excluding { secretHash, grants, ledger };
  @readonly entity LedgerEntries as projection on gateway.LedgerEntries;
  @readonly entity Grants        as projection on gateway.ProductGrants excluding { tokenHash };
  entity Plans                   as projection on gateway.Plans;
  entity Prices                  as projection on gateway.Prices;
}

annotate GatewayAdministration.Prices with {
  units @mandatory @assert.range: [0, 1000000];
};

annotate GatewayAdministration.Plans with {
  units         @mandatory @assert.range: [0, 1000000000000];
  validityDays  @mandatory @assert.range: [1, 36500];
  ratePerSecond @mandatory @assert.range: [1, 100000];
  burst         @mandatory @assert.range: [1, 1000000];
};
